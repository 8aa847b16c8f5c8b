"""The conversation database: SQLite in WAL mode through SQLAlchemy, its tables, and opening it safely.

Opening checks that the file really is an intact SQLite database, refuses a schema newer than this
version knows, and brings an older (or empty) one up to date with the alembic migrations in
`engine/timeline/migrations/`. A file that fails any check is left exactly as it was.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError

from engine.errors import DatabaseCorrupt, DatabaseTooNew, StorageError

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_SQLITE_MAGIC = b"SQLite format 3\x00"

metadata = sa.MetaData()

conversations_table = sa.Table(
    "conversations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("title", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.DateTime, nullable=False),  # UTC, naive (SQLite has no time zones)
    sa.Column("updated_at", sa.DateTime, nullable=False),  # UTC; bumped by every written batch
    sa.Index("ix_conversations_updated_at", "updated_at"),
)

events_table = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "conversation_id",
        sa.String(64),
        sa.ForeignKey("conversations.id", ondelete="CASCADE", name="fk_events_conversation"),
        nullable=False,
    ),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("t_ms", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),  # Event.to_dict() without kind, seq and t_ms
    sa.UniqueConstraint("conversation_id", "seq", name="uq_events_conversation_seq"),
)


def utc_now() -> dt.datetime:
    """Now in UTC without a time zone, as the DateTime columns store it."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _json_default(value: Any) -> Any:
    # An event field holding something JSON cannot express (bytes, a custom object in a tool result)
    # is stored as its text rather than failing the whole batch.
    log.warning("storing a %s event field as text: JSON cannot express it", type(value).__name__)
    return repr(value)


def dumps_payload(payload: dict[str, Any]) -> str:
    """The JSON text stored in `events.payload`."""
    return json.dumps(payload, ensure_ascii=False, default=_json_default)


def _corrupt_fix(path: Path) -> str:
    return (
        f"quit Venus and move {path.name} aside (e.g. rename it to {path.name}.broken) to start with an "
        f"empty history, or salvage it with `sqlite3 {path} .recover | sqlite3 {path}.recovered`; "
        "Venus has not changed or deleted it"
    )


def _check_file(path: Path) -> None:
    """Raise before SQLite touches a path that is not a usable database file."""
    if path.is_dir():
        raise StorageError(
            f"The database path {path} is a folder", fix="point VENUS_DATA_DIR at another folder"
        )
    if not path.exists() or path.stat().st_size == 0:
        return  # a new database
    try:
        with path.open("rb") as fh:
            header = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise StorageError(
            f"Cannot read the database {path}: {exc}", fix="check the file's permissions"
        ) from exc
    if header != _SQLITE_MAGIC:
        raise DatabaseCorrupt(
            f"The conversation database {path} is not a SQLite file", fix=_corrupt_fix(path)
        )


def create_db_engine(path: Path, busy_timeout_s: float = 10.0) -> sa.Engine:
    """An engine on `path` with WAL, foreign keys, a busy timeout and real (DDL-inclusive) transactions."""
    engine = sa.create_engine(
        f"sqlite:///{path}",
        connect_args={"timeout": busy_timeout_s, "check_same_thread": False},
        json_serializer=dumps_payload,
    )

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
        # Let SQLAlchemy decide where transactions begin (the sqlite3 module's own rules skip DDL).
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed batch survives a crash of the process; only power loss can cost
        # the last commits, and never consistency.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine


def _alembic_config(connection: sa.Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest schema revision this version of Venus knows."""
    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None, "the timeline migrations folder has no revisions"
    return head


def current_revision(engine: sa.Engine) -> str | None:
    """The schema revision stored in the database, or None for a database alembic never touched."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _inspect_existing(path: Path, check_integrity: bool, busy_timeout_s: float) -> str | None:
    """Check an existing file without changing a byte of it; returns its schema revision (None: not Venus's).

    A plain sqlite3 connection with no PRAGMAs only reads; the engine (which switches the file to WAL) is
    created after these checks pass, so a refused file is left exactly as it was found.
    """
    conn = sqlite3.connect(str(path), timeout=busy_timeout_s)
    try:
        if check_integrity:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
            if rows != ["ok"]:
                raise DatabaseCorrupt(
                    f"The conversation database {path} is damaged ({'; '.join(rows[:3])})",
                    fix=_corrupt_fix(path),
                )
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if "alembic_version" not in tables:
            if tables:
                raise StorageError(
                    f"{path} is a SQLite database but not a Venus one (it has tables {', '.join(tables[:5])})",
                    fix="point VENUS_DATA_DIR at another folder; the file was left as it is",
                )
            return None
        revisions = [r[0] for r in conn.execute("SELECT version_num FROM alembic_version")]
    except sqlite3.OperationalError as exc:  # locked, unreadable: the file may be fine
        raise StorageError(
            f"Cannot read the conversation database {path} ({exc})",
            fix="check the file's permissions and that no other program holds it locked",
        ) from exc
    except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
        raise DatabaseCorrupt(
            f"The conversation database {path} is damaged ({exc})", fix=_corrupt_fix(path)
        ) from exc
    finally:
        conn.close()
    script = ScriptDirectory.from_config(_alembic_config())
    for revision in revisions:
        try:
            known = script.get_revision(revision) is not None
        except CommandError:
            known = False
        if not known:
            raise DatabaseTooNew(
                f"The conversation database {path} has schema {revision!r}, newer than this Venus knows "
                f"(newest known: {head_revision()!r})",
                fix="update Venus, or point VENUS_DATA_DIR at another folder; the file was left as it is",
            )
    return revisions[0] if revisions else None


def inspect_database(path: Path, *, check_integrity: bool = True) -> str | None:
    """The schema revision of the database at `path` (None if not created yet), checked but never changed."""
    path = Path(path)
    _check_file(path)
    if not path.exists() or path.stat().st_size == 0:
        return None
    return _inspect_existing(path, check_integrity, busy_timeout_s=10.0)


def open_database(path: Path, *, check_integrity: bool = True, busy_timeout_s: float = 10.0) -> sa.Engine:
    """Open (creating or migrating as needed) the conversation database at `path`; raises a StorageError."""
    path = Path(path)
    _check_file(path)
    revision = None
    if path.exists() and path.stat().st_size > 0:
        revision = _inspect_existing(path, check_integrity, busy_timeout_s)
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_db_engine(path, busy_timeout_s)
    try:
        if revision != head_revision():
            with engine.connect() as conn:
                command.upgrade(_alembic_config(conn), "head")
                conn.commit()
            log.info("conversation database %s migrated from %s to %s", path, revision, head_revision())
    except sa.exc.SQLAlchemyError as exc:
        engine.dispose()
        raise StorageError(
            f"Could not bring the conversation database {path} to schema {head_revision()!r} ({exc})",
            fix="check that the folder is writable and the disk not full; the migration was rolled back",
        ) from exc
    except BaseException:
        engine.dispose()
        raise
    return engine
