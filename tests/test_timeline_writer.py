"""The writer thread keeps events it could not write and writes them once the database lets it."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.errors import StorageError
from engine.timeline import Kind, StoreOptions, UserText, WriterOptions, open_store


def test_a_database_locked_by_another_program_delays_writes_but_loses_nothing(tmp_path):
    db = tmp_path / "venus.db"
    options = StoreOptions(
        busy_timeout_s=0.1, writer=WriterOptions(flush_interval_ms=20, retry_interval_ms=50)
    )
    store = open_store(db, options)
    try:
        timeline = store.new_conversation()
        timeline.append(UserText(text="before the lock"))
        store.flush()
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        for i in range(50):
            timeline.append(UserText(text=f"while locked {i}"))
        with pytest.raises(StorageError, match=re.escape(str(db))) as caught:
            store.flush(timeout=30)
        assert "locked" in str(caught.value)
        other.execute("ROLLBACK")
        other.close()
        store.flush(timeout=30)  # the kept batch is retried and now goes through
    finally:
        store.close()

    reader = sqlite3.connect(db)
    texts = [r[0] for r in reader.execute(
        "SELECT json_extract(payload, '$.text') FROM events WHERE kind = 'user_text' ORDER BY seq")]
    notices = [r[0] for r in reader.execute(
        "SELECT json_extract(payload, '$.code') FROM events WHERE kind = 'system_notice' ORDER BY seq")]
    reader.close()
    assert texts == ["before the lock"] + [f"while locked {i}" for i in range(50)]
    assert notices == ["history-not-saved", "history-saved"]  # the user was told, and the notices were kept


def test_store_options_are_validated_up_front():
    with pytest.raises(ValueError, match="busy_timeout_s"):
        StoreOptions(busy_timeout_s=0)
    with pytest.raises(ValueError, match="retry_interval_ms"):
        WriterOptions(retry_interval_ms=0)


def test_events_the_database_refuses_at_close_are_saved_beside_it(tmp_path):
    db = tmp_path / "venus.db"
    options = StoreOptions(
        busy_timeout_s=0.1, writer=WriterOptions(flush_interval_ms=20, retry_interval_ms=50)
    )
    store = open_store(db, options)
    timeline = store.new_conversation()
    conversation_id = timeline.conversation_id
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # held until after close: the writer can never write
    try:
        for i in range(20):
            timeline.append(UserText(text=f"refused {i}"))
        deadline = time.monotonic() + 30
        while not timeline.events(kinds=[Kind.SYSTEM_NOTICE]) and time.monotonic() < deadline:
            time.sleep(0.01)
        (notice,) = timeline.events(kinds=[Kind.SYSTEM_NOTICE])
        assert notice.code == "history-not-saved" and "20 events are waiting" in notice.text
        with pytest.raises(StorageError, match="21 events could not be written") as caught:
            store.close()
    finally:
        other.execute("ROLLBACK")
        other.close()
    (salvage,) = tmp_path.glob("venus.db.unsaved-*.jsonl")
    assert str(salvage) in str(caught.value)
    rows = [json.loads(line) for line in salvage.read_text(encoding="utf-8").splitlines()]
    assert [(r["conversation_id"], r["seq"], r["kind"], r["payload"]["text"]) for r in rows] == [
        (conversation_id, i, "user_text", f"refused {i}") for i in range(20)
    ] + [(conversation_id, 20, "system_notice", notice.text)]


def test_a_normal_exit_without_close_still_writes_the_last_events(tmp_path):
    db = tmp_path / "venus.db"
    script = (
        "import sys\n"
        "from engine.timeline import UserText, open_store\n"
        "timeline = open_store(sys.argv[1]).new_conversation()\n"
        "for i in range(100):\n"
        "    timeline.append(UserText(text=f'last {i}'))\n"
    )
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", script, str(db)],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    reader = sqlite3.connect(db)
    texts = [r[0] for r in reader.execute("SELECT json_extract(payload, '$.text') FROM events ORDER BY seq")]
    reader.close()
    assert texts == [f"last {i}" for i in range(100)]
