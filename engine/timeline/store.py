"""Conversations kept on disk: create, list and reopen timelines whose events persist as they happen.

store = open_store()                      # engine.paths.database_file() unless a path is given
timeline = store.new_conversation("Lunch plans")
timeline.append(UserText(text="hi"))      # on disk within ~100 ms, by the writer thread
store.close()                             # writes everything still queued
"""

from __future__ import annotations

import atexit
import dataclasses
import datetime as dt
import enum
import functools
import json
import logging
import threading
import typing
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from engine import paths
from engine.errors import ConversationNotFound, StorageError
from engine.timeline.db import (
    conversations_table,
    current_revision,
    events_table,
    inspect_database,
    open_database,
    utc_now,
)
from engine.timeline.events import Event, Kind, SystemNotice, event_from_dict
from engine.timeline.timeline import Timeline
from engine.timeline.writer import StorageHealth, TimelineWriter, WriterOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoreOptions:
    """How the conversation store opens its database and writes to it."""

    check_integrity: bool = True  # run SQLite's quick_check at open, so a damaged file is refused up front
    writer: WriterOptions = WriterOptions()  # batching of the writer thread
    busy_timeout_s: float = 10.0  # how long a write waits for another process's lock before it fails

    def __post_init__(self) -> None:
        if not self.busy_timeout_s > 0:
            raise ValueError(f"busy_timeout_s must be positive, got {self.busy_timeout_s}")
        if not isinstance(self.writer, WriterOptions):
            raise ValueError(f"writer must be a WriterOptions, got {type(self.writer).__name__}")


@dataclass(frozen=True)
class ConversationInfo:
    """One stored conversation as listed: id, title, creation and last-write times (UTC), event count."""

    id: str  # the Timeline's conversation_id; pass it to open_conversation()
    title: str  # "" until set_title() or new_conversation(title) gave one
    created: dt.datetime  # UTC, time-zone aware
    updated: dt.datetime  # UTC, time-zone aware; when its last batch of events was written
    event_count: int  # events stored, including ones still queued at the time of the listing


def _aware(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.UTC)


def _placeholder(seq: int, t_ms: int, why: str) -> Event:
    # Keeps the event's place on the timeline, so the sequence numbers of new events stay unique.
    return SystemNotice(seq=seq, t_ms=t_ms, level="warning", code="event-unreadable", text=why)


@functools.cache
def _enum_fields(cls: type[Event]) -> dict[str, type[enum.Enum]]:
    """The fields of an event class typed with an enum (optionally `| None`), by name."""
    found: dict[str, type[enum.Enum]] = {}
    hints = typing.get_type_hints(cls)
    for name in (f.name for f in dataclasses.fields(cls)):
        hint = hints[name]
        for option in typing.get_args(hint) or (hint,):
            if isinstance(option, type) and issubclass(option, enum.Enum):
                found[name] = option
    return found


def _restore_enums(event: Event) -> Event:
    # JSON keeps an enum as its plain value; give fields like `action` their enum type back.
    changes = {
        name: enum_type(getattr(event, name))
        for name, enum_type in _enum_fields(type(event)).items()
        if getattr(event, name) is not None and not isinstance(getattr(event, name), enum_type)
    }
    return dataclasses.replace(event, **changes) if changes else event


def _decode(seq: int, t_ms: int, kind: str, payload_text: str) -> Event:
    try:
        payload: dict[str, Any] = json.loads(payload_text)
        return _restore_enums(event_from_dict({**payload, "kind": kind, "seq": seq, "t_ms": t_ms}))
    except (ValueError, TypeError, KeyError) as exc:
        log.warning("event #%d (%s) could not be read back: %s", seq, kind, exc)
        return _placeholder(seq, t_ms, f"a stored {kind!r} event could not be read by this Venus version")


class ConversationStore:
    """The conversations in one SQLite database; every timeline it hands out is persisted as it grows."""

    def __init__(self, path: Path, options: StoreOptions | None = None) -> None:
        self.path = Path(path)
        self.options = options or StoreOptions()
        self._engine = open_database(
            self.path,
            check_integrity=self.options.check_integrity,
            busy_timeout_s=self.options.busy_timeout_s,
        )
        self._writer = TimelineWriter(self._engine, self.path, self.options.writer)
        self._lock = threading.Lock()
        self._live: dict[str, tuple[Timeline, Any]] = {}
        self._closed = False
        atexit.register(self.close)  # a normal exit without close() still writes the last events

    # ---- conversations ---------------------------------------------------------------------------------------

    def new_conversation(self, title: str = "") -> Timeline:
        """Create a conversation and return its empty Timeline, already persisted as it grows."""
        self._check_open()
        conversation_id = uuid.uuid4().hex
        now = utc_now()
        with self._engine.begin() as conn:
            conn.execute(
                sa.insert(conversations_table).values(
                    id=conversation_id, title=title, created_at=now, updated_at=now
                )
            )
        return self._attach(Timeline(conversation_id=conversation_id))

    def new_or_unused(self) -> Timeline:
        """The newest conversation if nothing was said in it yet (no title, only state changes and notices), else a
        new one: each start of the app opened a conversation of its own, and the list filled with empty chats."""
        self._check_open()
        self._writer.flush()
        with self._engine.connect() as conn:
            newest = conn.execute(
                sa.select(conversations_table.c.id, conversations_table.c.title)
                .order_by(conversations_table.c.created_at.desc()).limit(1)
            ).first()
            said = newest is not None and conn.execute(
                sa.select(sa.func.count()).select_from(events_table).where(
                    events_table.c.conversation_id == newest[0],
                    events_table.c.kind.not_in([Kind.RUNTIME_STATE.value, Kind.SYSTEM_NOTICE.value]))
            ).scalar_one() > 0
        with self._lock:
            live = newest is not None and newest[0] in self._live
        if newest is None or newest[1] or said or live:
            return self.new_conversation()
        return self.open_conversation(newest[0])

    def open_conversation(self, conversation_id: str) -> Timeline:
        """The stored conversation's Timeline: events reloaded, clock continuing, new events persisted."""
        self._check_open()
        with self._lock:
            if conversation_id in self._live:
                return self._live[conversation_id][0]  # one live timeline per conversation keeps seq unique
        self._writer.flush()
        with self._engine.connect() as conn:
            exists = conn.execute(
                sa.select(conversations_table.c.id).where(conversations_table.c.id == conversation_id)
            ).first()
            if exists is None:
                raise ConversationNotFound(
                    f"No conversation {conversation_id!r} in {self.path}",
                    fix="pick one from list_conversations()",
                )
            rows = conn.execute(
                sa.select(
                    events_table.c.seq,
                    events_table.c.t_ms,
                    events_table.c.kind,
                    sa.type_coerce(events_table.c.payload, sa.Text),
                )
                .where(events_table.c.conversation_id == conversation_id)
                .order_by(events_table.c.seq)
            ).all()
        events: list[Event] = []
        for seq, t_ms, kind, payload_text in rows:
            while len(events) < seq:  # a gap: keep positions so new events get unused numbers
                events.append(_placeholder(len(events), t_ms, "an event is missing from the database"))
            events.append(_decode(seq, t_ms, kind, payload_text))
        return self._attach(Timeline(conversation_id=conversation_id, events=events))

    def close_conversation(self, conversation_id: str) -> None:
        """Stop persisting a live conversation's new events and write what is queued."""
        with self._lock:
            entry = self._live.pop(conversation_id, None)
        if entry is not None:
            entry[1]()
            self._writer.flush()

    def list_conversations(self) -> list[ConversationInfo]:
        """Every stored conversation, most recently written first, with its event count."""
        self._check_open()
        self._writer.flush()
        counts = (
            sa.select(events_table.c.conversation_id, sa.func.count().label("n"))
            .group_by(events_table.c.conversation_id)
            .subquery()
        )
        query = (
            sa.select(
                conversations_table.c.id,
                conversations_table.c.title,
                conversations_table.c.created_at,
                conversations_table.c.updated_at,
                sa.func.coalesce(counts.c.n, 0),
            )
            .outerjoin(counts, counts.c.conversation_id == conversations_table.c.id)
            .order_by(conversations_table.c.updated_at.desc(), conversations_table.c.created_at.desc())
        )
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            ConversationInfo(
                id=r[0], title=r[1], created=_aware(r[2]), updated=_aware(r[3]), event_count=r[4]
            )
            for r in rows
        ]

    def set_title(self, conversation_id: str, title: str) -> None:
        """Rename a stored conversation."""
        self._check_open()
        with self._engine.begin() as conn:
            result = conn.execute(
                sa.update(conversations_table)
                .where(conversations_table.c.id == conversation_id)
                .values(title=title)
            )
        if result.rowcount == 0:
            raise ConversationNotFound(
                f"No conversation {conversation_id!r} in {self.path}",
                fix="pick one from list_conversations()",
            )

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete a stored conversation and all its events; a live one stops being persisted first."""
        self._check_open()
        self.close_conversation(conversation_id)  # its queued events are written, then nothing more comes
        self._writer.flush()
        with self._engine.begin() as conn:
            conn.execute(sa.delete(events_table).where(events_table.c.conversation_id == conversation_id))
            result = conn.execute(sa.delete(conversations_table).where(conversations_table.c.id == conversation_id))
        if result.rowcount == 0:
            raise ConversationNotFound(
                f"No conversation {conversation_id!r} in {self.path}",
                fix="pick one from list_conversations()",
            )

    # ---- the store --------------------------------------------------------------------------------------------

    def schema_version(self) -> str:
        """The database's schema revision (an alembic revision id such as "0001")."""
        self._check_open()
        revision = current_revision(self._engine)
        assert revision is not None  # open_database migrated it
        return revision

    def health(self) -> StorageHealth:
        """Whether events are being saved, and how many wait in memory or in journals (see writer.py)."""
        return self._writer.health()

    def flush(self, timeout: float = 10.0) -> None:
        """Block until every event appended so far is on disk."""
        self._check_open()
        self._writer.flush(timeout)

    def close(self) -> None:
        """Detach every timeline, write everything queued and release the database file."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        with self._lock:
            live, self._live = list(self._live.values()), {}
        for _timeline, unsubscribe in live:
            unsubscribe()
        try:
            self._writer.close()
        finally:
            self._engine.dispose()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _attach(self, timeline: Timeline) -> Timeline:
        with self._lock:
            if timeline.conversation_id in self._live:  # opened twice at once: keep the first
                return self._live[timeline.conversation_id][0]
            self._live[timeline.conversation_id] = (timeline, self._writer.attach(timeline))
        return timeline

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(
                f"The conversation store on {self.path} is closed", fix="call open_store() again"
            )


def database_schema_version(path: str | Path | None = None) -> str | None:
    """For diagnostics: the stored schema revision (None: no database yet); raises a StorageError if unusable.

    Reads only: it neither creates, migrates nor switches the file to WAL.
    """
    return inspect_database(Path(path) if path is not None else paths.database_file())


def open_store(path: str | Path | None = None, options: StoreOptions | None = None) -> ConversationStore:
    """Open (creating or migrating) the conversation database; default: engine.paths.database_file()."""
    return ConversationStore(Path(path) if path is not None else paths.database_file(), options)
