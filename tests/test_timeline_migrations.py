"""Opening the conversation database: migrating empty files, refusing newer, foreign and damaged ones untouched."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import DatabaseCorrupt, DatabaseTooNew, StorageError
from engine.timeline import UserText, open_store
from engine.timeline.db import MIGRATIONS_DIR, head_revision

REPO = Path(__file__).resolve().parents[1]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@pytest.mark.parametrize("start", ["missing", "empty file"])
def test_a_new_or_empty_file_is_migrated_to_the_newest_schema(tmp_path, start):
    db = tmp_path / "data" / "venus.db"
    if start == "empty file":
        db.parent.mkdir()
        db.write_bytes(b"")
    with open_store(db) as store:
        assert store.schema_version() == head_revision() == "0001"
    assert tables(db) == {"alembic_version", "conversations", "events"}
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [("0001",)]
        index_sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    assert "UNIQUE (conversation_id, seq)" in index_sql


def test_reopening_an_up_to_date_database_keeps_its_data(tmp_path):
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        store.new_conversation("kept").append(UserText(text="still here"))
    with open_store(db) as store:
        (info,) = store.list_conversations()
        assert (info.title, info.event_count) == ("kept", 1)
        assert store.schema_version() == "0001"


def test_the_alembic_cli_config_points_at_the_same_migrations(tmp_path):
    # developers create new revisions with the CLI; it must see the revisions Venus runs at open
    out = subprocess.run(
        [sys.executable, "-m", "alembic", "-c", str(REPO / "engine/timeline/alembic.ini"), "heads"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == head_revision()
    assert (MIGRATIONS_DIR / "versions" / "0001_initial.py").is_file()


def test_a_database_from_a_newer_version_is_refused_untouched(tmp_path):
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        store.new_conversation("from the future")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0042_holograms'")
    before = digest(db)
    with pytest.raises(DatabaseTooNew) as caught:
        open_store(db)
    message = str(caught.value)
    assert str(db) in message and "0042_holograms" in message and "update Venus" in message
    assert caught.value.code == "database-too-new"
    assert digest(db) == before


def test_a_sqlite_file_of_another_program_is_refused_untouched(tmp_path):
    db = tmp_path / "venus.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")
        conn.execute("INSERT INTO recipes VALUES ('soup')")
    before = digest(db)
    with pytest.raises(StorageError, match="not a Venus one") as caught:
        open_store(db)
    assert str(db) in str(caught.value)
    assert digest(db) == before
    assert tables(db) == {"recipes"}


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path):
    db = tmp_path / "venus.db"
    db.write_bytes(b"this was a text file, not a database\n" * 40)
    before = digest(db)
    with pytest.raises(DatabaseCorrupt) as caught:
        open_store(db)
    message = str(caught.value)
    assert str(db) in message and "not a SQLite file" in message and "move venus.db aside" in message
    assert digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["venus.db"]


def test_a_half_written_database_is_refused_untouched(tmp_path):
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        timeline = store.new_conversation()
        for i in range(3000):  # enough rows to span many pages
            timeline.append(UserText(text=f"line {i} " + "x" * 100))
    assert not (tmp_path / "venus.db-wal").exists() or (tmp_path / "venus.db-wal").stat().st_size == 0
    data = db.read_bytes()
    assert len(data) > 100_000
    db.write_bytes(data[: len(data) // 2])  # as if the copy or the disk stopped halfway
    before = digest(db)
    with pytest.raises(DatabaseCorrupt) as caught:
        open_store(db)
    message = str(caught.value)
    assert str(db) in message and "damaged" in message and ".recover" in message
    assert caught.value.code == "database-corrupt"
    assert digest(db) == before


def test_a_folder_in_place_of_the_file_gives_a_clear_error(tmp_path):
    db = tmp_path / "venus.db"
    db.mkdir()
    with pytest.raises(StorageError, match="is a folder"):
        open_store(db)


def test_the_default_path_comes_from_venus_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_DATA_DIR", str(tmp_path / "profile"))
    with open_store() as store:
        assert store.path == tmp_path / "profile" / "venus.db"
        store.new_conversation("default place")
    assert tables(tmp_path / "profile" / "venus.db") >= {"conversations", "events"}


BROKEN_REVISION = '''
"""A migration that fails halfway."""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table("attachments", sa.Column("id", sa.Integer, primary_key=True))
    op.add_column("conversations", sa.Column("pinned", sa.Boolean, nullable=True))
    op.execute("UPDATE conversations SET title = 'overwritten'")
    raise RuntimeError("disk went away mid-migration")


def downgrade():
    pass
'''


def test_a_migration_that_fails_halfway_is_rolled_back_whole(tmp_path):
    from alembic import command

    from engine.timeline.db import _alembic_config, create_db_engine

    db = tmp_path / "venus.db"
    with open_store(db) as store:
        store.new_conversation("precious").append(UserText(text="keep me"))
    migrations = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    (migrations / "versions" / "0002_broken.py").write_text(BROKEN_REVISION)

    engine = create_db_engine(db)
    try:
        with engine.connect() as conn:
            config = _alembic_config(conn)
            config.set_main_option("script_location", str(migrations))
            with pytest.raises(RuntimeError, match="mid-migration"):
                command.upgrade(config, "head")
    finally:
        engine.dispose()

    assert tables(db) == {"alembic_version", "conversations", "events"}
    with sqlite3.connect(db) as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(conversations)")]
        assert "pinned" not in columns
        assert conn.execute("SELECT title FROM conversations").fetchall() == [("precious",)]
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [("0001",)]
    with open_store(db) as store:
        (info,) = store.list_conversations()
        assert (info.title, info.event_count) == ("precious", 1)


def test_the_doctor_reads_the_schema_version_without_changing_anything(tmp_path):
    from engine.timeline import database_schema_version

    db = tmp_path / "venus.db"
    assert database_schema_version(db) is None
    assert not db.exists()  # looking did not create it
    with open_store(db) as store:
        store.new_conversation("checked")
    before = digest(db)
    assert database_schema_version(db) == "0001"
    assert digest(db) == before
    db.write_bytes(b"garbage" * 100)
    with pytest.raises(DatabaseCorrupt, match="not a SQLite file"):
        database_schema_version(db)
