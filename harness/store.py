"""The harness's own SQLite file: every task's lifecycle, reminders, notes and lists, so nothing is lost in a crash.

tasks.db is opened like the conversation database: checked (not SQLite, damaged, newer schema: refused and left
untouched), then migrated with the alembic scripts in `harness/migrations/`. A failed read or write raises a
StorageError that names the file and the fix.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import SQLAlchemyError

from engine import paths
from engine.errors import StorageError
from engine.timeline.db import DatabaseKind, current_revision, open_database


class TaskState(StrEnum):
    """Where a task is in its life."""

    CONFIRMING = "confirming"  # waiting for the user's yes or no
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    INTERRUPTED = "interrupted"  # a restart found it unfinished and it was not safe to run again

    @property
    def finished(self) -> bool:
        """True for the end states."""
        return self in _FINISHED


_FINISHED = {TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED, TaskState.TIMED_OUT,
             TaskState.INTERRUPTED}

metadata = MetaData()  # the schema the migrations in harness/migrations/ build
_tasks = Table(
    "tasks", metadata,
    Column("id", String, primary_key=True),
    Column("tool", String, nullable=False),
    Column("arguments", Text, nullable=False),  # JSON
    Column("turn_id", String, nullable=False, default=""),
    Column("state", String, nullable=False),
    Column("percent", Float, nullable=False, default=0.0),
    Column("status", Text, nullable=False, default=""),
    Column("result", Text),  # JSON of the ToolOutput data
    Column("summary", Text, nullable=False, default=""),
    Column("error", Text, nullable=False, default=""),
    Column("code", String, nullable=False, default=""),
    Column("idempotent", Boolean, nullable=False, default=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)
_reminders = Table(
    "reminders", metadata,
    Column("id", String, primary_key=True),
    Column("text", Text, nullable=False),
    Column("due_at", Float, nullable=False),  # Unix time
    Column("created_at", Float, nullable=False),
    Column("fired", Boolean, nullable=False, default=False),
    Column("cancelled", Boolean, nullable=False, default=False),
)
_notes = Table(
    "notes", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("title", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)

_list_items = Table(
    "list_items", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("list", String, nullable=False),
    Column("item", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)


TASKS_DB = DatabaseKind(
    label="task database",
    migrations_dir=Path(__file__).with_name("migrations"),
    legacy_tables=frozenset({"tasks", "reminders", "notes"}),  # made by create_all before migrations existed
)


@dataclass(frozen=True)
class TaskRecord:
    """One task row as read back."""

    id: str
    tool: str
    arguments: dict[str, Any]
    turn_id: str
    state: TaskState
    percent: float
    status: str
    result: Any
    summary: str
    error: str
    code: str
    idempotent: bool
    attempts: int


@dataclass(frozen=True)
class ReminderRecord:
    """A timer or reminder as stored."""

    id: str
    text: str
    due_at: float
    fired: bool
    cancelled: bool
    created_at: float = 0.0  # Unix time it was set


def default_store_file() -> Path:
    """tasks.db in the Venus data folder (separate from the timeline database)."""
    return paths.data_dir() / "tasks.db"


class TaskStore:
    """Thread-safe access to the harness database; every write is committed before it returns.

    Opening raises DatabaseCorrupt / DatabaseTooNew / StorageError for a file it must not use; a read or write
    the disk refuses raises StorageError.
    """

    def __init__(self, path: Path | None = None, *, check_integrity: bool = True) -> None:
        self.path = Path(path) if path is not None else default_store_file()
        self._engine = open_database(self.path, check_integrity=check_integrity, kind=TASKS_DB)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Release the database file."""
        self._engine.dispose()

    def schema_version(self) -> str:
        """The file's schema revision (an alembic revision id such as "0001")."""
        revision = current_revision(self._engine)
        assert revision is not None  # open_database migrated it
        return revision

    def _write(self, statement: Any) -> Any:
        try:
            with self._lock, self._engine.begin() as conn:
                return conn.execute(statement)
        except SQLAlchemyError as exc:
            raise self._failure("save to", exc) from exc

    def _read(self, statement: Any) -> list[Any]:
        try:
            with self._lock, self._engine.connect() as conn:
                return list(conn.execute(statement))
        except SQLAlchemyError as exc:
            raise self._failure("read", exc) from exc

    def _failure(self, action: str, exc: SQLAlchemyError) -> StorageError:
        reason = getattr(exc, "orig", None) or exc
        fix = (f"close the other program that holds {self.path} locked" if "locked" in str(reason)
               else f"free disk space in {self.path.parent} and check the file is writable")
        return StorageError(f"Could not {action} the task database {self.path} ({reason})", fix=fix)

    # ---- tasks ----------------------------------------------------------------------------------------------

    def add_task(self, task_id: str, tool: str, arguments: dict[str, Any], turn_id: str, state: TaskState,
                 idempotent: bool) -> None:
        """Record a new task."""
        now = time.time()
        self._write(insert(_tasks).values(
            id=task_id, tool=tool, arguments=json.dumps(arguments, default=str), turn_id=turn_id,
            state=str(state), idempotent=idempotent, created_at=now, updated_at=now,
        ))

    def update_task(self, task_id: str, *, state: TaskState | None = None, result: Any = None,
                    **fields: Any) -> None:
        """Change a task's columns (state, percent, status, summary, error, code, attempts, result)."""
        values: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
        if state is not None:
            values["state"] = str(state)
        if result is not None:
            values["result"] = json.dumps(result, default=str)
        values["updated_at"] = time.time()
        self._write(update(_tasks).where(_tasks.c.id == task_id).values(**values))

    def get_task(self, task_id: str) -> TaskRecord | None:
        """One task, or None."""
        rows = self._read(select(_tasks).where(_tasks.c.id == task_id))
        return _task_record(rows[0]) if rows else None

    def unfinished_tasks(self) -> list[TaskRecord]:
        """Tasks a crash or restart left without an end state, oldest first."""
        open_states = [str(s) for s in TaskState if not s.finished]
        rows = self._read(select(_tasks).where(_tasks.c.state.in_(open_states)).order_by(_tasks.c.created_at))
        return [_task_record(r) for r in rows]

    def all_tasks(self) -> list[TaskRecord]:
        """Every task, oldest first."""
        return [_task_record(r) for r in self._read(select(_tasks).order_by(_tasks.c.created_at))]

    # ---- reminders ------------------------------------------------------------------------------------------

    def add_reminder(self, reminder_id: str, text: str, due_at: float) -> None:
        """Store a timer or reminder."""
        self._write(insert(_reminders).values(id=reminder_id, text=text, due_at=due_at, created_at=time.time()))

    def mark_reminder(self, reminder_id: str, *, fired: bool | None = None, cancelled: bool | None = None) -> None:
        """Mark a reminder fired or cancelled."""
        values = {k: v for k, v in {"fired": fired, "cancelled": cancelled}.items() if v is not None}
        self._write(update(_reminders).where(_reminders.c.id == reminder_id).values(**values))

    def reschedule_reminder(self, reminder_id: str, due_at: float, text: str) -> None:
        """Move a pending reminder to `due_at` with `text`, as if set now."""
        self._write(update(_reminders).where(_reminders.c.id == reminder_id)
                    .values(due_at=due_at, text=text, created_at=time.time()))

    def pending_reminders(self) -> list[ReminderRecord]:
        """Reminders neither fired nor cancelled, soonest first."""
        rows = self._read(select(_reminders).where(~_reminders.c.fired, ~_reminders.c.cancelled)
                          .order_by(_reminders.c.due_at))
        return [ReminderRecord(r.id, r.text, r.due_at, r.fired, r.cancelled, r.created_at) for r in rows]

    # ---- notes ----------------------------------------------------------------------------------------------

    def add_note(self, title: str, body: str) -> int:
        """Store a note; returns its id."""
        result = self._write(insert(_notes).values(title=title, body=body, created_at=time.time()))
        return int(result.inserted_primary_key[0])

    def search_notes(self, query: str, limit: int) -> list[dict[str, Any]]:
        """Notes whose title or body contains every word of `query` (case-insensitive), newest first."""
        statement = select(_notes).order_by(_notes.c.created_at.desc(), _notes.c.id.desc())
        for word in query.split():
            pattern = f"%{word.replace('%', '').replace('_', '')}%"
            statement = statement.where(_notes.c.title.ilike(pattern) | _notes.c.body.ilike(pattern))
        rows = self._read(statement.limit(limit))
        return [{"id": r.id, "title": r.title, "body": r.body, "created_at": r.created_at} for r in rows]

    def get_note(self, note_id: int) -> dict[str, Any] | None:
        """One note, or None."""
        rows = self._read(select(_notes).where(_notes.c.id == note_id))
        return {"id": rows[0].id, "title": rows[0].title, "body": rows[0].body} if rows else None

    # ---- lists ----------------------------------------------------------------------------------------------

    def add_list_items(self, name: str, items: list[str]) -> None:
        """Add items to the list `name` (its key), in order."""
        now = time.time()
        for offset, item in enumerate(items):
            self._write(insert(_list_items).values(list=name, item=item, created_at=now + offset * 1e-6))

    def list_items(self, name: str) -> list[str]:
        """The items of the list `name`, oldest first."""
        rows = self._read(select(_list_items.c.item).where(_list_items.c.list == name)
                          .order_by(_list_items.c.created_at, _list_items.c.id))
        return [r.item for r in rows]

    def remove_list_item(self, name: str, item: str) -> int:
        """Remove every entry equal to `item` (case aside) from the list `name`; returns how many went."""
        condition = (_list_items.c.list == name) & (func.lower(_list_items.c.item) == item.lower())
        return int(self._write(delete(_list_items).where(condition)).rowcount or 0)

    def clear_list(self, name: str) -> int:
        """Remove every item of the list `name`; returns how many went."""
        return int(self._write(delete(_list_items).where(_list_items.c.list == name)).rowcount or 0)

    def list_names(self) -> list[str]:
        """The names of the lists that hold anything."""
        return [r.list for r in self._read(select(_list_items.c.list).distinct().order_by(_list_items.c.list))]


def _task_record(row: Any) -> TaskRecord:
    return TaskRecord(
        id=row.id, tool=row.tool, arguments=json.loads(row.arguments), turn_id=row.turn_id,
        state=TaskState(row.state), percent=row.percent, status=row.status,
        result=json.loads(row.result) if row.result else None, summary=row.summary, error=row.error,
        code=row.code, idempotent=row.idempotent, attempts=row.attempts,
    )
