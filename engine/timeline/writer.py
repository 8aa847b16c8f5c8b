"""The database writer thread: timelines hand it events without waiting; it writes them in batches.

A timeline's subscriber callback only puts the event on an unbounded queue. The thread collects what
arrives for at most `flush_interval_ms` after the oldest unwritten event, then writes the batch in one
transaction, so a crash of the process loses at most that window (plus one write).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from engine.errors import StorageError
from engine.timeline.db import conversations_table, events_table, utc_now
from engine.timeline.events import Event
from engine.timeline.timeline import Timeline

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WriterOptions:
    """How the writer thread batches events."""

    flush_interval_ms: int = 100  # longest an event waits in memory; the crash guarantee is 250 ms
    max_batch: int = 1000  # a batch this large is written at once, without waiting for the interval
    retry_interval_ms: int = 500  # pause before retrying after the database refused a write

    def __post_init__(self) -> None:
        if not 1 <= self.flush_interval_ms <= 250:
            raise ValueError(
                f"flush_interval_ms must be 1-250 (events older than 250 ms must be on disk), "
                f"got {self.flush_interval_ms}"
            )
        if self.max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {self.max_batch}")
        if self.retry_interval_ms < 1:
            raise ValueError(f"retry_interval_ms must be at least 1, got {self.retry_interval_ms}")


class _FlushRequest:
    """Queued by `flush()`; the thread answers it once everything queued before it is written."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None


_STOP = object()


def _row(conversation_id: str, event: Event) -> dict:
    payload = event.to_dict()
    for column in ("kind", "seq", "t_ms"):
        payload.pop(column, None)
    return {
        "conversation_id": conversation_id,
        "seq": event.seq,
        "t_ms": event.t_ms,
        "kind": str(event.kind),
        "payload": payload,
    }


class TimelineWriter:
    """One thread persisting the events of every attached timeline into the conversation database."""

    def __init__(self, engine: sa.Engine, path: Path, options: WriterOptions | None = None) -> None:
        self.options = options or WriterOptions()
        self._engine = engine
        self._path = path
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self.last_error: BaseException | None = None  # the most recent failed write, None once one succeeds
        self._thread = threading.Thread(target=self._run, name="venus-db-writer", daemon=True)
        self._thread.start()

    def attach(self, timeline: Timeline) -> Callable[[], None]:
        """Persist every event appended to `timeline` from now on; returns a function that detaches it."""
        conversation_id = timeline.conversation_id
        put = self._queue.put

        def enqueue(event: Event) -> None:  # runs on the appending thread: never blocks
            put((conversation_id, event))

        return timeline.subscribe(enqueue)

    def flush(self, timeout: float = 10.0) -> None:
        """Block until every event queued so far is written; raises StorageError if it could not be."""
        if not self._thread.is_alive():
            raise StorageError(f"The writer for {self._path} is not running", fix="open the store again")
        request = _FlushRequest()
        self._queue.put(request)
        if not request.done.wait(timeout):
            raise StorageError(
                f"Writing to {self._path} took longer than {timeout:.0f} s",
                fix="check that the disk is not full and no other program locks the file",
            )
        if request.error is not None:
            raise StorageError(
                f"Could not write events to {self._path}: {request.error}",
                fix="check that the disk is not full and the file is writable",
            ) from request.error

    def close(self, timeout: float = 10.0) -> None:
        """Write everything still queued and stop the thread; raises StorageError if events stayed unwritten."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush(timeout)
        finally:
            self._queue.put(_STOP)
            self._thread.join(timeout)

    # ---- the thread ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        interval = self.options.flush_interval_ms / 1000
        pending: list[tuple[str, Event]] = []
        requests: list[_FlushRequest] = []
        deadline = 0.0
        stopping = False
        while not stopping:
            wait = None if not pending else max(0.0, deadline - time.monotonic())
            try:
                item = self._queue.get(timeout=wait)
            except queue.Empty:
                item = None
            # take whatever else is already queued, so one wake-up writes it all
            while item is not None:
                if item is _STOP:
                    stopping = True
                elif isinstance(item, _FlushRequest):
                    requests.append(item)
                else:
                    if not pending:
                        deadline = time.monotonic() + interval
                    pending.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = None
            due = time.monotonic() >= deadline or len(pending) >= self.options.max_batch
            if pending and (due or requests or stopping):
                if self._write(pending):
                    pending = []
                elif not requests and not stopping:
                    deadline = time.monotonic() + self.options.retry_interval_ms / 1000
            for request in requests:
                request.error = self.last_error if pending else None
                request.done.set()
            requests = []
        if pending:
            log.error("%d events could not be written to %s", len(pending), self._path)

    def _write(self, batch: list[tuple[str, Event]]) -> bool:
        rows = [_row(conversation_id, event) for conversation_id, event in batch]
        try:
            self._insert(rows)
        except sa.exc.IntegrityError:
            # One bad row (its conversation deleted meanwhile) must not sink its neighbours: write one by one.
            for row in rows:
                try:
                    self._insert([row])
                except sa.exc.IntegrityError as exc:
                    log.error(
                        "dropped event %s #%s of conversation %s: %s",
                        row["kind"],
                        row["seq"],
                        row["conversation_id"],
                        exc.orig,
                    )
                except Exception as exc:  # noqa: BLE001 - kept for a retry below
                    return self._failed(exc)
        except Exception as exc:  # noqa: BLE001 - the disk may be full or the file locked; keep the batch
            return self._failed(exc)
        self.last_error = None
        return True

    def _failed(self, exc: BaseException) -> bool:
        if self.last_error is None:
            log.error("writing events to %s failed (will retry): %s", self._path, exc)
        self.last_error = exc
        return False

    def _insert(self, rows: list[dict]) -> None:
        now = utc_now()
        with self._engine.begin() as conn:
            # re-writing a row that is already there (a retried batch) is a no-op, not an error
            conn.execute(sqlite_insert(events_table).on_conflict_do_nothing(), rows)
            for conversation_id in {row["conversation_id"] for row in rows}:
                conn.execute(
                    sa.update(conversations_table)
                    .where(conversations_table.c.id == conversation_id)
                    .values(updated_at=now)
                )
