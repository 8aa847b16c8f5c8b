"""Permissions: tools with effects outside Venus ask by default, a change in settings applies at once (to new calls,
to tasks waiting for a yes, to queued ones and to tasks restored after a crash), and `venus tools` lists them all.

Real harness, real task store, a real crash (SIGKILL of a child process) and the real `venus` command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from harness_support import crash_mid_tasks, crash_test_tools, make_harness, wait_final, wait_until

from engine.timeline.events import (
    ConfirmationRequested,
    DelegationCancelled,
    DelegationFailed,
    DelegationResult,
)
from harness import TaskState, TaskStore

ROOT = Path(__file__).parents[1]


def test_tools_with_effects_outside_venus_ask_and_harmless_ones_run(tmp_path: Path) -> None:
    harness, timeline = make_harness([tmp_path])
    try:
        levels = {row["name"]: row["level"] for row in harness.describe_tools()}
        assert levels["open"] == levels["write_clipboard"] == "ask"
        assert levels["run_shell_command"] == "off"  # the shell is off until the user turns it on (then asks)
        assert all(levels[t] == "allow" for t in ("calculate", "current_time", "create_note", "set_timer"))
        opened = harness.submit("open", {"target": "https://example.com"})
        asked = wait_until(lambda: [e for e in timeline.events() if isinstance(e, ConfirmationRequested)],
                           what="open to ask")
        assert asked[0].task_id == opened and asked[0].arguments == {"target": "https://example.com"}
        assert harness.pending_confirmations() == [opened]
        assert isinstance(wait_final(timeline, harness.submit("calculate", {"expression": "6 * 7"})), DelegationResult)
    finally:
        harness.shutdown()


def test_a_tool_turned_off_in_settings_stops_at_once_for_waiting_and_queued_tasks(tmp_path: Path) -> None:
    release = threading.Event()
    from harness_support import counting_tool

    blocker = counting_tool("block_worker")
    harness, timeline = make_harness([tmp_path], workers=1, extra_tools=(blocker,),
                                     permissions={"create_note": "ask"})
    try:
        waiting = harness.submit("create_note", {"title": "one", "text": "waits for a yes"})
        wait_until(lambda: harness.pending_confirmations() == [waiting], what="the note to ask")
        busy = harness.submit("block_worker", {"steps": 400, "step_s": 0.01})  # holds the one worker
        queued = harness.submit("set_timer", {"seconds": 600, "text": "tea"})  # queued behind it
        harness.set_permissions({"create_note": "off", "set_timer": "off"})
        cancelled = wait_final(timeline, waiting)
        assert isinstance(cancelled, DelegationCancelled) and "turned off" in cancelled.reason
        refused = wait_final(timeline, queued, timeout_s=60)
        assert isinstance(refused, DelegationFailed) and refused.code == "tool-denied", refused
        assert harness.pending_reminders() == []  # the timer never started
        assert "create_note" not in {s["name"] for s in harness.tool_specs()}  # no longer offered to the model
        late = wait_final(timeline, harness.submit("create_note", {"title": "two", "text": "after"}))
        assert isinstance(late, DelegationFailed) and late.code == "tool-denied"
        assert isinstance(wait_final(timeline, busy, timeout_s=60), DelegationResult)
    finally:
        release.set()
        harness.shutdown()


def test_a_task_restored_after_a_crash_rechecks_the_level_in_force(tmp_path: Path) -> None:
    store_path, markers = tmp_path / "tasks.db", tmp_path / "markers"
    markers.mkdir()
    ids = crash_mid_tasks(store_path, markers)
    assert TaskStore(store_path).get_task(ids["resumable"]).state is TaskState.RUNNING
    # the user turned the resumable tool off, and made the asking one ask no more, while Venus was down
    harness, timeline = make_harness(extra_tools=crash_test_tools(markers), store_path=store_path, workers=2,
                                     permissions={"count_slowly": "off", "careful_count": "allow"})
    try:
        refused = wait_final(timeline, ids["resumable"], timeout_s=60)
        assert isinstance(refused, DelegationFailed) and refused.code == "interrupted"
        assert "turned off" in refused.error
        assert not (markers / f"{ids['resumable']}.done").exists()
        ran = wait_final(timeline, ids["confirming"], timeout_s=60)  # 'allow' now: no question this time
        assert isinstance(ran, DelegationResult)
        assert not [e for e in timeline.events() if isinstance(e, ConfirmationRequested)]
    finally:
        harness.shutdown()


def test_venus_tools_lists_every_tool_with_level_source_and_availability(tmp_path: Path) -> None:
    config, data = tmp_path / "config", tmp_path / "data"
    config.mkdir()
    server = Path(__file__).parent / "fixtures" / "mcp_echo_server.py"
    (config / "settings.json").write_text(json.dumps({
        "harness": {"permissions": {"open": "allow", "run_shell_command": "ask"},
                    "mcp_servers": {"echo": {"command": sys.executable, "args": [str(server)]}}}}))
    env = {**os.environ, "VENUS_CONFIG_DIR": str(config), "VENUS_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    done = subprocess.run([sys.executable, "-m", "app.cli", "tools", "--json"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["open"]["level"] == "allow" and rows["open"]["default"] == "ask"  # the setting is in force
    assert rows["run_shell_command"]["level"] == "ask"
    assert rows["calculate"]["source"] == "built-in" and rows["calculate"]["available"]
    assert not rows["read_screen"]["available"] and "display" in rows["read_screen"]["why"]
    echo = [row for name, row in rows.items() if name.startswith("echo")]
    assert "echo__add" in rows and all(r["level"] == "ask" and r["source"] == "MCP server echo" for r in echo), echo
    table = subprocess.run([sys.executable, "-m", "app.cli", "tools"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert table.returncode == 0 and "open" in table.stdout and "allow (default ask)" in table.stdout
