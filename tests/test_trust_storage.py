"""Storage faults are never silent: a full disk under the conversation database, a damaged or old tasks.db, and
a task whose state the database refuses to record.

The full disk is a real small tmpfs mounted for the test (we run as root, as CI does). Where mounting is not
permitted the same test runs with SQLite's "database or disk is full" injected into the writer's statements
instead; it never skips.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import sqlite3
import subprocess
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from harness_support import counting_tool, make_harness, wait_final, wait_until

from engine.errors import DatabaseCorrupt, DatabaseTooNew
from engine.runtime.chat import TranscriptPrinter
from engine.timeline import Kind, StoreOptions, SystemNotice, UserText, WriterOptions, open_store
from engine.timeline.store import ConversationStore
from harness import TaskState, TaskStore

TEXT = "x" * 600  # events big enough that a few hundred outgrow any space SQLite had already allocated


# ---- a disk that fills up --------------------------------------------------------------------------------------


class Disk:
    """A folder whose file system can be filled and freed: a real tmpfs, or an injected SQLite 'disk full'."""

    def __init__(self, folder: Path, real: bool) -> None:
        self.folder = folder
        self.real = real  # True: a mounted tmpfs that really runs out of space
        self.full = False
        self._filler = folder / "filler"

    def watch(self, store: ConversationStore) -> None:
        """Without a real tmpfs, make the store's event writes fail as SQLite fails on a full disk."""
        if self.real:
            return

        @sa.event.listens_for(store._engine, "before_cursor_execute")
        def refuse(_conn, _cursor, statement, parameters, _context, _many) -> None:
            if self.full and statement.startswith("INSERT INTO events"):
                raise sa.exc.OperationalError(statement, parameters,
                                              sqlite3.OperationalError("database or disk is full"))

    def fill(self) -> None:
        """Use up every free byte."""
        self.full = True
        if not self.real:
            return
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for chunk in (b"\0" * 65536, b"\0" * 4096, b"\0" * 512):
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, chunk)
        finally:
            os.close(fd)

    def free(self) -> None:
        """Give the space back."""
        self.full = False
        self._filler.unlink(missing_ok=True)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    """A 2 MB tmpfs when mounting is permitted (root), else the injected fault; never a skip."""
    folder = tmp_path / "disk"
    folder.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
                                 capture_output=True, check=False, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):  # no mount command
        mounted = False
    if not mounted:
        warnings.warn("mounting a tmpfs is not permitted here: the full disk is an injected SQLite error",
                      stacklevel=1)
    try:
        yield Disk(folder, real=mounted)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=False)


def _options(journal_dirs: tuple[Path, ...]) -> StoreOptions:
    return StoreOptions(busy_timeout_s=0.2, writer=WriterOptions(
        flush_interval_ms=20, retry_interval_ms=20, retry_max_ms=200, max_pending=100,
        max_pending_bytes=32 * 1024, journal_dirs=journal_dirs, notice_interval_s=60))


def _notices(events, code: str) -> list[SystemNotice]:
    return [e for e in events if e.kind == Kind.SYSTEM_NOTICE and e.code == code]


def _stored_texts(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return [r[0] for r in conn.execute(
            "SELECT json_extract(payload, '$.text') FROM events WHERE kind = 'user_text' ORDER BY seq")]


def _truncate_wal(db: Path) -> None:
    # so the next write needs new space: SQLite would otherwise reuse the WAL's pages for a while
    with contextlib.closing(sqlite3.connect(db)) as conn:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0 and Path(f"{db}-wal").stat().st_size == 0


# ---- the conversation database on a full disk ----------------------------------------------------------------------


def test_a_full_disk_makes_a_notice_keeps_memory_bounded_and_writes_the_backlog_once_space_returns(
        disk: Disk, tmp_path: Path, qapp) -> None:
    from app.timeline_model import ConversationModel, RowKind

    db, elsewhere = disk.folder / "venus.db", tmp_path / "elsewhere"
    store = open_store(db, _options((disk.folder, elsewhere)))
    disk.watch(store)
    attempts: list[float] = []
    sa.event.listen(store._engine, "before_cursor_execute",
                    lambda _c, _cur, statement, *_: statement.startswith("INSERT INTO events")
                    and attempts.append(time.monotonic()))
    cli = io.StringIO()
    try:
        timeline = store.new_conversation()
        timeline.subscribe(TranscriptPrinter(cli, stream_tokens=True))  # what `venus chat` prints
        timeline.append(UserText(text="before the disk filled"))
        store.flush()
        _truncate_wal(db)
        disk.fill()

        for i in range(600):
            timeline.append(UserText(text=f"{i} {TEXT}"))
        (notice,) = wait_until(lambda: _notices(timeline.events(), "history-not-saved"), what="the notice")
        health = wait_until(lambda: (h := store.health()).unsaved >= 600 and h, what="every event taken in")
        appended_by = time.monotonic()

        assert notice.level == "error"
        assert str(db) in notice.text and f"free disk space in {disk.folder}" in notice.text
        assert "database or disk is full" in notice.text and "events are waiting to be saved" in notice.text
        assert f"[error] {notice.text}" in cli.getvalue()  # the CLI shows it
        model = ConversationModel()
        model.apply_all(timeline.events())  # the app's conversation view shows it (its status bar too)
        assert any(r.kind is RowKind.NOTICE and r.text == notice.text for r in model.rows())

        assert not health.saving and health.lost == 0
        assert health.in_memory <= 100 and health.in_memory_bytes <= 32 * 1024  # the rest went to a journal
        assert health.in_journal >= 500 and health.journal_files
        if disk.real:  # the full disk took no journal; the next folder did
            assert all(f.parent == elsewhere for f in health.journal_files)

        time.sleep(1.0)
        tries = [t for t in attempts if t > appended_by]
        assert len(tries) <= 10, f"{len(tries)} write attempts in 1 s: retries must back off, not spin"
        assert store.health().unsaved >= 600  # nothing was dropped meanwhile

        disk.free()
        wait_until(lambda: _notices(timeline.events(), "history-saved"), what="the recovery notice")
        store.flush()  # the recovery notice itself
        health = store.health()
        assert health.saving and health.unsaved == 0 and health.lost == 0 and not health.journal_files
        (saved,) = _notices(timeline.events(), "history-saved")
        assert "saved again" in saved.text and "events were written" in saved.text
    finally:
        disk.free()
        store.close()

    assert _stored_texts(db) == ["before the disk filled"] + [f"{i} {TEXT}" for i in range(600)]  # each once
    assert not list(elsewhere.glob("*.jsonl")) and not list(disk.folder.glob("*.jsonl"))


def test_events_no_journal_can_keep_are_counted_as_lost_in_the_notice(disk: Disk, tmp_path: Path) -> None:
    db = disk.folder / "venus.db"
    blocker = tmp_path / "a file, not a folder"
    blocker.write_text("")
    store = open_store(db, _options((blocker / "journal",)))
    disk.watch(store)
    try:
        timeline = store.new_conversation()
        timeline.append(UserText(text="kept"))
        store.flush()
        _truncate_wal(db)
        disk.fill()
        for i in range(300):
            timeline.append(UserText(text=f"{i} {TEXT}"))
        wait_until(lambda: store.health().lost > 0 and store.health().unsaved + store.health().lost >= 300,
                   what="events counted lost")
        lost = store.health().lost
        assert store.health().in_memory <= 100
        told = wait_until(lambda: [n for n in _notices(timeline.events(), "history-not-saved") if "lost" in n.text],
                          what="a notice that says how many are lost")
        assert re.search(r"\. \d+ could not be kept anywhere and are lost\.", told[0].text)

        disk.free()
        (saved,) = wait_until(lambda: _notices(timeline.events(), "history-saved"), what="the recovery notice")
        assert f"{lost} events could not be kept and are missing from the history" in saved.text
        stored = _stored_texts(db)
        assert len(stored) == 1 + 300 - lost and stored[0] == "kept"
        assert stored[-1] == f"299 {TEXT}"  # the oldest were given up, the newest kept
    finally:
        disk.free()
        store.close()
    with open_store(db) as store:  # the gap reads back as placeholders, so numbering stays unique
        (info,) = store.list_conversations()
        events = store.open_conversation(info.id).events()
        assert len(_notices(events, "event-unreadable")) == lost


def test_events_left_unsaved_at_close_are_written_when_the_database_is_next_opened(tmp_path: Path) -> None:
    db = tmp_path / "venus.db"
    store = open_store(db, _options((tmp_path, tmp_path / "elsewhere")))
    timeline = store.new_conversation()
    timeline.append(UserText(text="saved"))
    store.flush()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock until after close
    try:
        for i in range(5):
            timeline.append(UserText(text=f"waited {i}"))
        with pytest.raises(Exception, match="are written when Venus next opens it"):
            store.close()
    finally:
        other.execute("ROLLBACK")
        other.close()
    (journal,) = tmp_path.glob("venus.db.unsaved-*.jsonl")
    live = journal.with_name(f"venus.db.unsaved-20000101-000000-{os.getppid()}.jsonl")
    live.write_text("")  # a journal another running Venus is still writing: left alone

    with open_store(db) as store:
        store.flush()
        assert store.health().unsaved == 0
    assert _stored_texts(db) == ["saved"] + [f"waited {i}" for i in range(5)]
    assert not journal.exists() and live.exists()


def test_writer_options_for_faults_are_validated_up_front() -> None:
    with pytest.raises(ValueError, match="retry_max_ms"):
        WriterOptions(retry_interval_ms=500, retry_max_ms=100)
    with pytest.raises(ValueError, match="max_pending"):
        WriterOptions(max_pending=1)


# ---- tasks.db: open checks, schema version, migrations ---------------------------------------------------------------


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_damaged_task_database_is_refused_untouched_with_the_fix(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    db.write_bytes(b"not a database at all\n" * 100)
    before = _digest(db)
    with pytest.raises(DatabaseCorrupt) as caught:
        make_harness(store_path=db)  # Venus does not start on it; the message says what to do
    message = str(caught.value)
    assert "task database" in message and str(db) in message and "not a SQLite file" in message
    assert "move tasks.db aside" in message and _digest(db) == before

    store = TaskStore(tmp_path / "good.db")
    for i in range(400):
        store.add_note(f"note {i}", "y" * 200)
    store.close()
    data = (tmp_path / "good.db").read_bytes()
    db.write_bytes(data[: len(data) // 2])  # a copy that stopped halfway
    before = _digest(db)
    with pytest.raises(DatabaseCorrupt, match="damaged") as caught:
        TaskStore(db)
    assert ".recover" in str(caught.value) and _digest(db) == before


def test_a_task_database_from_before_migrations_is_kept_and_versioned(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:  # the schema create_all used to make
        conn.execute("CREATE TABLE notes (id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, "
                     "created_at FLOAT NOT NULL, PRIMARY KEY (id))")
        conn.execute("INSERT INTO notes VALUES (1, 'groceries', 'milk', 0)")
    store = TaskStore(db)
    try:
        assert store.schema_version() == "0002"
        assert store.get_note(1) == {"id": 1, "title": "groceries", "body": "milk"}
        store.add_task("t1", "clock", {}, "", TaskState.QUEUED, True)  # the tables it lacked were made
        assert store.get_task("t1").state is TaskState.QUEUED
    finally:
        store.close()
    assert (tmp_path / "tasks.db.bak-unversioned").is_file()  # the file as it was, before migrating


def test_a_task_database_of_the_first_schema_gains_lists_and_keeps_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    store = TaskStore(db)
    store.add_note("groceries", "milk")
    store.close()
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:  # back to revision 0001, as an older Venus left it
        conn.execute("DROP TABLE list_items")
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    store = TaskStore(db)
    try:
        assert store.schema_version() == "0002"
        assert store.search_notes("groceries", 5)[0]["body"] == "milk"
        store.add_list_items("shopping", ["eggs"])
        assert store.list_items("shopping") == ["eggs"]
    finally:
        store.close()

    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE alembic_version SET version_num = '0042_holograms'")
    before = _digest(db)
    with pytest.raises(DatabaseTooNew, match="task database") as caught:
        TaskStore(db)
    assert "update Venus" in str(caught.value) and _digest(db) == before


# ---- a task whose state cannot be recorded ---------------------------------------------------------------------------


def _refuse(db: Path, states: tuple[str, ...]) -> None:
    """Make tasks.db refuse to record these states, the way a full disk refuses the write."""
    listed = ", ".join(f"'{s}'" for s in states)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(f"CREATE TRIGGER refuse BEFORE UPDATE OF state ON tasks WHEN NEW.state IN ({listed}) "
                     "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")


def _accept(db: Path) -> None:
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DROP TRIGGER refuse")


def _stored_state(db: Path, task_id: str) -> str:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT state FROM tasks WHERE id = ?", (task_id,)).fetchone()[0]


def test_a_task_whose_end_cannot_be_recorded_is_reported_and_recorded_later(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    harness, timeline = make_harness(store_path=db, extra_tools=(counting_tool(),))
    try:
        _refuse(db, ("succeeded", "failed", "cancelled", "timed_out"))
        task_id = harness.submit("count_slowly", {"steps": 2, "step_s": 0.01})
        assert wait_final(timeline, task_id).kind == Kind.DELEGATION_RESULT  # the user hears the result anyway
        (notice,) = wait_until(lambda: _notices(timeline.events(), "task-not-saved"), what="the notice")
        assert "count_slowly" in notice.text and "database or disk is full" in notice.text
        assert f"free disk space in {tmp_path}" in notice.text
        assert harness.active_tasks() == []  # not stuck in memory
        assert _stored_state(db, task_id) == "running"

        _accept(db)  # space again: the end state is retried on a timer and recorded
        wait_until(lambda: _stored_state(db, task_id) == "succeeded", what="the end state recorded")
    finally:
        harness.shutdown()


def test_after_a_restart_a_task_whose_end_was_not_recorded_is_not_stuck(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    tools = (counting_tool("send_slowly", idempotent=False),)
    harness, timeline = make_harness(store_path=db, extra_tools=tools)
    try:
        _refuse(db, ("succeeded", "failed", "cancelled", "timed_out"))
        task_id = harness.submit("send_slowly", {"steps": 1, "step_s": 0.01})
        wait_final(timeline, task_id)
    finally:
        harness.shutdown()  # Venus quits before the disk has room again
    assert _stored_state(db, task_id) == "running"
    _accept(db)

    harness, timeline = make_harness(store_path=db, extra_tools=tools)
    try:
        reported = wait_final(timeline, task_id)
        assert reported.kind == Kind.DELEGATION_FAILED and reported.code == "interrupted"
        assert _stored_state(db, task_id) == "interrupted"
        assert harness.store.unfinished_tasks() == []
    finally:
        harness.shutdown()


def test_a_task_that_cannot_be_recorded_as_started_does_not_run(tmp_path: Path) -> None:
    db, markers = tmp_path / "tasks.db", tmp_path / "markers"
    markers.mkdir()
    harness, timeline = make_harness(store_path=db, extra_tools=(counting_tool(marker_dir=markers),))
    try:
        _refuse(db, ("running",))
        task_id = harness.submit("count_slowly", {"steps": 1})
        final = wait_final(timeline, task_id)
        assert final.kind == Kind.DELEGATION_FAILED and final.code == "storage-failed"
        assert "not started" in final.error and "database or disk is full" in final.error
        assert not list(markers.iterdir())  # a restart must be able to tell whether it had effects
        assert wait_until(lambda: _stored_state(db, task_id) == "failed", what="the failure recorded")
    finally:
        harness.shutdown()
