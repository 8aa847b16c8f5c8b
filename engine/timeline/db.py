"""The conversation database: SQLite in WAL mode through SQLAlchemy, its tables, and opening it safely.

Opening checks that the file really is an intact SQLite database, refuses a schema newer than this
version knows, and brings an older (or empty) one up to date with the alembic migrations in
`engine/timeline/migrations/`, after copying the old file aside. A file that fails any check is left
exactly as it was. The harness's task database is opened the same way, with its own `DatabaseKind`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
from dataclasses import dataclass
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
_UNVERSIONED = "unversioned"  # the revision of a file made before its kind had migrations

metadata = sa.MetaData()


@dataclass(frozen=True)
class DatabaseKind:
    """What a Venus SQLite file holds: its name in messages, its migrations, and how to adopt an unversioned one."""

    label: str  # names the file in messages: "conversation database"
    migrations_dir: Path  # the alembic scripts (env.py, versions/)
    # Tables a file of this kind could have before it had migrations; its first migration creates only the
    # missing ones, so such a file is migrated from the start like an empty one (after a backup).
    legacy_tables: frozenset[str] = frozenset()

    def is_legacy(self, tables: list[str]) -> bool:
        """True for a pre-migration file of this kind: only (some of) its known tables, no alembic_version."""
        return bool(tables) and set(tables) <= self.legacy_tables


CONVERSATIONS = DatabaseKind(label="conversation database", migrations_dir=MIGRATIONS_DIR)

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
        f"empty one, or salvage it with `sqlite3 {path} .recover | sqlite3 {path}.recovered`; "
        "Venus has not changed or deleted it"
    )


def _check_file(path: Path, kind: DatabaseKind = CONVERSATIONS) -> None:
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
        raise DatabaseCorrupt(f"The {kind.label} {path} is not a SQLite file", fix=_corrupt_fix(path))


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


def _alembic_config(connection: sa.Connection | None = None, kind: DatabaseKind = CONVERSATIONS) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(kind.migrations_dir))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision(kind: DatabaseKind = CONVERSATIONS) -> str:
    """The newest schema revision this version of Venus knows."""
    head = ScriptDirectory.from_config(_alembic_config(kind=kind)).get_current_head()
    assert head is not None, f"the {kind.label} migrations folder has no revisions"
    return head


def current_revision(engine: sa.Engine) -> str | None:
    """The schema revision stored in the database, or None for a database alembic never touched."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _inspect_existing(
    path: Path, check_integrity: bool, busy_timeout_s: float, kind: DatabaseKind = CONVERSATIONS
) -> str | None:
    """Check an existing file without changing a byte of it; returns its schema revision (None: empty).

    A plain sqlite3 connection with no PRAGMAs only reads; the engine (which switches the file to WAL) is
    created after these checks pass, so a refused file is left exactly as it was found.
    """
    conn = sqlite3.connect(str(path), timeout=busy_timeout_s)
    try:
        if check_integrity:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
            if rows != ["ok"]:
                raise DatabaseCorrupt(
                    f"The {kind.label} {path} is damaged ({'; '.join(rows[:3])})", fix=_corrupt_fix(path)
                )
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if "alembic_version" not in tables:
            if kind.is_legacy(tables):
                return _UNVERSIONED
            if tables:
                raise StorageError(
                    f"{path} is a SQLite database but not a Venus one (it has tables {', '.join(tables[:5])})",
                    fix="point VENUS_DATA_DIR at another folder; the file was left as it is",
                )
            return None
        revisions = [r[0] for r in conn.execute("SELECT version_num FROM alembic_version")]
    except sqlite3.OperationalError as exc:  # locked, unreadable: the file may be fine
        raise StorageError(
            f"Cannot read the {kind.label} {path} ({exc})",
            fix="check the file's permissions and that no other program holds it locked",
        ) from exc
    except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
        raise DatabaseCorrupt(f"The {kind.label} {path} is damaged ({exc})", fix=_corrupt_fix(path)) from exc
    finally:
        conn.close()
    script = ScriptDirectory.from_config(_alembic_config(kind=kind))
    for revision in revisions:
        try:
            known = script.get_revision(revision) is not None
        except CommandError:
            known = False
        if not known:
            raise DatabaseTooNew(
                f"The {kind.label} {path} has schema {revision!r}, newer than this Venus knows "
                f"(newest known: {head_revision(kind)!r})",
                fix="update Venus, or point VENUS_DATA_DIR at another folder; the file was left as it is",
            )
    return revisions[0] if revisions else None


def inspect_database(
    path: Path, *, check_integrity: bool = True, kind: DatabaseKind = CONVERSATIONS
) -> str | None:
    """The schema revision of the database at `path` (None if not created yet), checked but never changed.

    A file of `kind` made before it had migrations reads as "unversioned".
    """
    path = Path(path)
    _check_file(path, kind)
    if not path.exists() or path.stat().st_size == 0:
        return None
    return _inspect_existing(path, check_integrity, 10.0, kind)


def _backup(path: Path, revision: str, kind: DatabaseKind) -> Path:
    """Copy the database aside before migrating it (SQLite's backup API, so the WAL's content is included)."""
    backup = path.with_name(f"{path.name}.bak-{revision}")
    source = sqlite3.connect(str(path))
    try:
        target = sqlite3.connect(str(backup))
        try:
            source.backup(target)
        finally:
            target.close()
    except sqlite3.Error as exc:
        raise StorageError(
            f"Could not copy the {kind.label} {path} to {backup} before migrating it ({exc})",
            fix=f"free disk space in {path.parent}; the file was left as it is",
        ) from exc
    finally:
        source.close()
    return backup


def _migrate(engine: sa.Engine, kind: DatabaseKind) -> None:
    with engine.connect() as conn:
        command.upgrade(_alembic_config(conn, kind), "head")
        conn.commit()


def open_database(
    path: Path,
    *,
    check_integrity: bool = True,
    busy_timeout_s: float = 10.0,
    kind: DatabaseKind = CONVERSATIONS,
) -> sa.Engine:
    """Open (creating or migrating as needed) the database of `kind` at `path`; raises a StorageError.

    An existing file is copied to `<name>.bak-<revision>` before it is migrated.
    """
    path = Path(path)
    _check_file(path, kind)
    revision = None
    if path.exists() and path.stat().st_size > 0:
        revision = _inspect_existing(path, check_integrity, busy_timeout_s, kind)
    head = head_revision(kind)
    if revision is not None and revision != head:
        _backup(path, revision, kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_db_engine(path, busy_timeout_s)
    try:
        if revision != head:
            _migrate(engine, kind)
            log.info("%s %s migrated from %s to %s", kind.label, path, revision, head)
    except sa.exc.SQLAlchemyError as exc:
        engine.dispose()
        raise StorageError(
            f"Could not bring the {kind.label} {path} to schema {head!r} ({exc})",
            fix=f"check that {path.parent} is writable and the disk not full; the migration was rolled back",
        ) from exc
    except BaseException:
        engine.dispose()
        raise
    return engine
