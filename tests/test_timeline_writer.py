"""The writer thread keeps events it could not write and writes them once the database lets it."""

from __future__ import annotations

import re
import sqlite3

import pytest

from engine.errors import StorageError
from engine.timeline import StoreOptions, UserText, WriterOptions, open_store


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
    texts = [r[0] for r in reader.execute("SELECT json_extract(payload, '$.text') FROM events ORDER BY seq")]
    reader.close()
    assert texts == ["before the lock"] + [f"while locked {i}" for i in range(50)]


def test_store_options_are_validated_up_front():
    with pytest.raises(ValueError, match="busy_timeout_s"):
        StoreOptions(busy_timeout_s=0)
    with pytest.raises(ValueError, match="retry_interval_ms"):
        WriterOptions(retry_interval_ms=0)
