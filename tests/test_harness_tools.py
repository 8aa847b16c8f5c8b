"""Built-in tools run for real on temporary folders: files and their sandbox, notes, reminders, calculator,
open-with-default, system status and the shell tool."""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime
from pathlib import Path

import pytest
from harness_support import make_harness, task_events, wait_final, wait_until

from engine.timeline.events import (
    ConfirmationRequested,
    DelegationFailed,
    DelegationResult,
    Kind,
    ReminderFired,
)
from harness.builtin import calculate, convert
from harness.tool import InvalidArguments


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "allowed"
    (root / "projects" / "venus").mkdir(parents=True)
    (root / "projects" / "venus" / "plan.md").write_text("# Plan\nShip the harness on Friday\n")
    (root / "projects" / "budget-2026.csv").write_text("item,cost\nlaptop,1200\n")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0harness")
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "passwords.txt").write_text("harness password hunter2\n")
    (root / "link-out").symlink_to(secret)
    (root / "projects" / "leak.txt").symlink_to(secret / "passwords.txt")
    return root


def run(harness, timeline, tool, arguments, **kw):
    return wait_final(timeline, harness.submit(tool, arguments, **kw))


def test_find_files_by_name_and_content(home: Path):
    harness, timeline = make_harness([home])
    try:
        by_name = run(harness, timeline, "find_files", {"name": "*.csv"})
        assert [Path(m["path"]).name for m in by_name.result["matches"]] == ["budget-2026.csv"]
        by_text = run(harness, timeline, "find_files", {"content": "friday"})
        assert by_text.result["matches"][0]["snippet"] == "Ship the harness on Friday"
        assert by_text.result["matches"][0]["line"] == 2
        both = run(harness, timeline, "find_files", {"name": "plan", "content": "nothing like this"})
        assert both.result["matches"] == [] and both.summary.startswith("Found 0 files")
    finally:
        harness.shutdown()


def test_find_files_never_leaves_the_allowed_folders(home: Path):
    harness, timeline = make_harness([home], permissions={"open": "allow"})  # even allowed, it stays inside
    try:
        found = run(harness, timeline, "find_files", {"content": "harness"})
        paths = [m["path"] for m in found.result["matches"]]
        assert paths == [str(home / "projects" / "venus" / "plan.md")]  # not the binary, not the linked secret
        for escape in ("../outside", str(home.parent / "outside"), "link-out", "projects/../../outside"):
            denied = run(harness, timeline, "find_files", {"content": "hunter2", "folder": escape})
            assert isinstance(denied, DelegationFailed) and denied.code == "tool-denied", escape
            assert "outside the allowed folders" in denied.error
        opened = run(harness, timeline, "open", {"target": "projects/leak.txt"})
        assert isinstance(opened, DelegationFailed) and opened.code == "tool-denied"
    finally:
        harness.shutdown()


def test_file_tools_without_allowed_folders_say_how_to_fix_it():
    harness, timeline = make_harness([])
    try:
        final = run(harness, timeline, "find_files", {"name": "x"})
        assert final.code == "tool-denied" and "Allowed folders" in final.error
    finally:
        harness.shutdown()


def test_notes_create_search_read():
    harness, timeline = make_harness()
    try:
        made = run(harness, timeline, "create_note", {"text": "Call the plumber about the kitchen tap"})
        run(harness, timeline, "create_note", {"text": "Buy oat milk", "title": "Groceries"})
        found = run(harness, timeline, "search_notes", {"query": "kitchen plumber"})
        assert [n["note_id"] for n in found.result["notes"]] == [made.result["note_id"]]
        read = run(harness, timeline, "read_note", {"note_id": made.result["note_id"]})
        assert read.result["body"] == "Call the plumber about the kitchen tap"
        missing = run(harness, timeline, "read_note", {"note_id": 999})
        assert missing.code == "invalid-arguments" and "999" in missing.error
    finally:
        harness.shutdown()


def test_calculator_and_units_never_eval():
    assert calculate("2^10 + sqrt(16)") == 1028
    assert calculate("(3 + 4) * 2 / 7") == 2
    assert calculate("1,234 × 2") == 2468
    assert abs(convert(100, "km", "miles") - 62.137119) < 1e-5
    assert abs(convert(212, "fahrenheit", "celsius") - 100) < 1e-9
    assert convert(1, "GiB", "MiB") == 1024
    for hostile in ("__import__('os').system('touch /tmp/pwned')", "().__class__", "open('x')", "9**9**9",
                    "[1]*10", "x", "lambda: 1"):
        with pytest.raises(InvalidArguments):
            calculate(hostile)
    with pytest.raises(InvalidArguments, match="divides by zero"):
        calculate("1/0")
    with pytest.raises(InvalidArguments, match="cannot convert kg"):
        convert(1, "kg", "km")


def test_calculator_through_the_harness():
    harness, timeline = make_harness()
    try:
        result = run(harness, timeline, "calculate", {"expression": "15 / 100 * 80"})
        assert result.result == {"value": 12}
        converted = run(harness, timeline, "convert_units", {"value": 5, "from_unit": "lb", "to_unit": "kg"})
        assert converted.result["value"] == pytest.approx(2.26796185)
        bad = run(harness, timeline, "calculate", {"expression": "import os"})
        assert isinstance(bad, DelegationFailed) and bad.code == "invalid-arguments"
    finally:
        harness.shutdown()


def test_timer_fires_on_the_timeline_and_reminders_survive_a_restart(tmp_path: Path):
    harness, timeline = make_harness()
    timer = run(harness, timeline, "set_timer", {"seconds": 0.3, "text": "Tea is ready"})
    fired = wait_until(lambda: timeline.events(kinds=[Kind.REMINDER_FIRED]), what="the timer")[0]
    assert isinstance(fired, ReminderFired) and fired.text == "Tea is ready"
    assert fired.reminder_id == timer.result["reminder_id"]
    # due well after the restart even on a loaded machine; the cancelled one is due first, so it would show
    later = run(harness, timeline, "set_timer", {"seconds": 3.0, "text": "Stretch"})
    cancelled = run(harness, timeline, "set_timer", {"seconds": 2.0, "text": "Never"})
    run(harness, timeline, "cancel_reminder", {"reminder_id": cancelled.result["reminder_id"]})
    harness.shutdown()  # Venus quits before the reminder is due

    harness, timeline = make_harness()
    try:
        listed = run(harness, timeline, "list_reminders", {})
        assert [r["text"] for r in listed.result["reminders"]] == ["Stretch"]
        fired = wait_until(lambda: timeline.events(kinds=[Kind.REMINDER_FIRED]), what="the restored reminder")
        assert [(e.reminder_id, e.text) for e in fired] == [(later.result["reminder_id"], "Stretch")]
        time.sleep(0.3)
        assert len(timeline.events(kinds=[Kind.REMINDER_FIRED])) == 1
    finally:
        harness.shutdown()


def test_system_status_reports_real_figures():
    harness, timeline = make_harness()
    try:
        status = run(harness, timeline, "system_status", {})
        assert status.result["cpu_count"] == os.cpu_count()
        physical_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
        assert status.result["memory"]["total_gb"] == pytest.approx(physical_gb, rel=0.01)
        disk = shutil.disk_usage(Path.home())
        assert status.result["disk"]["total_gb"] == pytest.approx(disk.total / 1e9, abs=0.01)
        assert 0 <= status.result["disk"]["percent"] <= 100 and "CPU at" in status.summary
    finally:
        harness.shutdown()


@pytest.mark.skipif(not (shutil.which("xdg-open") or shutil.which("gio")), reason="needs xdg-open or gio")
def test_open_uses_the_desktop_default_application(home: Path, tmp_path: Path, monkeypatch):
    record = tmp_path / "opened.txt"
    handler = tmp_path / "handler.sh"
    handler.write_text(f'#!/bin/sh\necho "$@" >> {record}\n')
    handler.chmod(0o755)
    data, config = tmp_path / "xdg-data", tmp_path / "xdg-config"
    (data / "applications").mkdir(parents=True)
    config.mkdir()
    (data / "applications" / "venus-test-viewer.desktop").write_text(
        f"[Desktop Entry]\nType=Application\nName=Venus Test Viewer\nExec={handler} %f\n"
        "MimeType=text/markdown;text/plain;\n")
    (config / "mimeapps.list").write_text(
        "[Default Applications]\ntext/markdown=venus-test-viewer.desktop\ntext/plain=venus-test-viewer.desktop\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("XDG_DATA_DIRS", str(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    harness, timeline = make_harness([home], permissions={"open": "allow"})  # asking is tested in test_trust_permissions
    try:
        opened = run(harness, timeline, "open", {"target": "projects/venus/plan.md"})
        assert isinstance(opened, DelegationResult) and opened.result["kind"] == "file"
        wait_until(lambda: record.exists() and str(home / "projects/venus/plan.md") in record.read_text(),
                   what="the default application to receive the file")
        app = run(harness, timeline, "open", {"target": "Venus Test Viewer"})
        assert isinstance(app, DelegationResult) and app.result["kind"] == "app"
        refused = run(harness, timeline, "open", {"target": "file:///etc/passwd"})
        assert refused.code == "tool-denied"
        missing = run(harness, timeline, "open", {"target": "No Such App 123"})
        assert isinstance(missing, DelegationFailed) and "no installed application" in missing.error
    finally:
        harness.shutdown()


def test_shell_is_off_by_default_and_asks_every_time_when_on(home: Path):
    """Without a setting the shell is off (not offered, refused); turned on, even 'allow' asks before each run."""
    harness, timeline = make_harness([home])
    try:
        assert harness.registry.permission("run_shell_command").value == "off"
        assert "run_shell_command" not in [spec["name"] for spec in harness.tool_specs()]
        refused = run(harness, timeline, "run_shell_command", {"command": "touch made.txt"})
        assert isinstance(refused, DelegationFailed) and refused.code == "tool-denied"
        assert not (home / "made.txt").exists()
    finally:
        harness.shutdown()

    harness, timeline = make_harness([home], permissions={"run_shell_command": "allow"}, confirm_timeout_s=60)
    try:
        assert harness.registry.permission("run_shell_command").value == "ask"  # 'allow' is capped at ask
        assert "run_shell_command" in [spec["name"] for spec in harness.tool_specs()]
        for attempt in (1, 2):  # asked again for the second command: one yes is not a standing permission
            task_id = harness.submit("run_shell_command", {"command": f"echo $((6*{attempt}*7)) > answer.txt"})
            wait_until(lambda t=task_id: [e for e in task_events(timeline, t) if isinstance(e, ConfirmationRequested)],
                       what=f"confirmation {attempt}")
            assert harness.pending_confirmations() == [task_id] and not (home / "answer.txt").exists()
            harness.answer_confirmation(task_id, True, "ui")
            done = wait_final(timeline, task_id)
            assert isinstance(done, DelegationResult) and done.result["exit_code"] == 0
            assert (home / "answer.txt").read_text().strip() == str(42 * attempt)
            (home / "answer.txt").unlink()
    finally:
        harness.shutdown()


def test_cancelling_the_shell_kills_its_whole_process_group(home: Path, tmp_path: Path):
    harness, timeline = make_harness([home], permissions={"run_shell_command": "ask"})
    try:
        pids = tmp_path / "pids"
        task_id = harness.submit("run_shell_command", {"command": f"sleep 60 & echo $! > {pids}; wait"})
        wait_until(lambda: harness.pending_confirmations())
        harness.answer_confirmation(task_id, True, "voice")
        grandchild = int(wait_until(lambda: pids.exists() and pids.read_text().strip(), what="the sleep's pid"))
        harness.cancel(task_id, "the user said stop")
        assert wait_final(timeline, task_id).kind == Kind.DELEGATION_CANCELLED

        def gone() -> bool:
            try:
                os.kill(grandchild, 0)
            except ProcessLookupError:
                return True
            return "Z" in Path(f"/proc/{grandchild}/stat").read_text().split()[2]

        wait_until(gone, timeout_s=5, what="the background sleep to be killed")
    finally:
        harness.shutdown()


def test_lists_keep_their_items_across_a_restart_and_empty_only_on_a_yes(tmp_path: Path):
    # "Add milk to my shopping list" got "1. Add milk to your shopping list 2." from the 135M model and no list
    store = tmp_path / "tasks.db"
    harness, timeline = make_harness(store_path=store)
    try:
        added = run(harness, timeline, "add_to_list", {"list": "my Shopping List", "items": ["milk", "eggs", " bread "]})
        assert added.result == {"list": "shopping", "added": ["milk", "eggs", "bread"], "already": [], "count": 3}
        again = run(harness, timeline, "add_to_list", {"items": ["Milk", "batteries"]})  # no name: the shopping list
        assert again.result["added"] == ["batteries"] and again.result["already"] == ["Milk"]
        run(harness, timeline, "add_to_list", {"list": "to do", "items": ["call the plumber"]})
        gone = run(harness, timeline, "remove_from_list", {"list": "shopping", "items": ["EGGS", "caviar"]})
        assert gone.result["removed"] == ["EGGS"] and gone.result["missing"] == ["caviar"]
    finally:
        harness.shutdown()

    harness, timeline = make_harness(store_path=store)
    try:
        read = run(harness, timeline, "read_list", {"list": "shopping"})
        assert read.result["items"] == ["milk", "bread", "batteries"]
        assert run(harness, timeline, "read_list", {"list": "todo"}).result["items"] == ["call the plumber"]
        failed = run(harness, timeline, "add_to_list", {"list": "shopping", "items": []})
        assert isinstance(failed, DelegationFailed)  # the schema wants an item

        task_id = harness.submit("clear_list", {"list": "shopping"})  # emptying a list asks first
        wait_until(lambda: [e for e in task_events(timeline, task_id) if isinstance(e, ConfirmationRequested)],
                   what="the question before emptying the list")
        harness.answer_confirmation(task_id, False, "ui")
        wait_final(timeline, task_id)
        assert run(harness, timeline, "read_list", {}).result["items"] == ["milk", "bread", "batteries"]
        task_id = harness.submit("clear_list", {"list": "shopping"})
        wait_until(lambda: harness.pending_confirmations() == [task_id], what="the second question")
        harness.answer_confirmation(task_id, True, "ui")
        assert wait_final(timeline, task_id).result == {"list": "shopping", "removed": 3}
        assert run(harness, timeline, "read_list", {}).result["items"] == []
        assert run(harness, timeline, "read_list", {"list": "to-do"}).result["items"] == ["call the plumber"]
    finally:
        harness.shutdown()


def test_a_timer_is_moved_and_keeps_saying_what_it_is(tmp_path: Path):
    harness, timeline = make_harness(store_path=tmp_path / "tasks.db")
    try:
        timer = run(harness, timeline, "set_timer", {"seconds": 300})
        rid = timer.result["reminder_id"]
        moved = run(harness, timeline, "change_reminder", {"reminder_id": rid, "seconds": 600})
        assert moved.result["text"] == "Your 10-minute timer is done."  # a timer's own words follow its length
        listed = run(harness, timeline, "list_reminders", {}).result["reminders"]
        assert [(r["reminder_id"], r["timer"]) for r in listed] == [(rid, True)]
        due = datetime.fromisoformat(listed[0]["due_at"]).timestamp()
        assert 590 < due - time.time() <= 600
        both = run(harness, timeline, "change_reminder", {"reminder_id": rid, "seconds": 60, "at": "2030-01-01T09:00"})
        assert isinstance(both, DelegationFailed) and "not both" in both.error
        assert isinstance(run(harness, timeline, "change_reminder", {"reminder_id": "nope", "seconds": 60}),
                          DelegationFailed)
    finally:
        harness.shutdown()
