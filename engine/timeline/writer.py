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
from engine.timeline.db import conversations_table, dumps_payload, events_table, utc_now
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
        self._unwritten = 0
        self.last_error: BaseException | None = None  # the most recent failed write, None once one succeeds
        self.salvage_file: Path | None = None  # set when close() had to save unwritten events beside the db
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
        except StorageError as exc:
            failure: StorageError | None = exc
        else:
            failure = None
        self._queue.put(_STOP)  # the thread tries once more, then saves what is left beside the database
        self._thread.join(timeout)
        if failure is not None and (self._unwritten or self._thread.is_alive()):
            saved = f"; they were saved to {self.salvage_file}" if self.salvage_file else ""
            raise StorageError(
                f"{self._unwritten} events could not be written to {self._path}{saved}",
                fix="free disk space or close the program locking the file, then reopen Venus",
            ) from failure

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
                    if len(pending) >= self.options.max_batch:
                        break  # write now; a steady flood must not keep the thread draining forever
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = None
            due = time.monotonic() >= deadline or len(pending) >= self.options.max_batch
            if pending and (due or requests or stopping):
                if self._write(pending):
                    pending = []
                else:
                    deadline = time.monotonic() + self.options.retry_interval_ms / 1000
            for request in requests:
                request.error = self.last_error if pending else None
                request.done.set()
            requests = []
        self._unwritten = len(pending)
        if pending:
            self._salvage(pending)

    def _salvage(self, batch: list[tuple[str, Event]]) -> None:
        """Last resort at close: events the database refused go to a JSON-lines file beside it."""
        salvage = self._path.with_name(f"{self._path.name}.unsaved-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
        try:
            with salvage.open("a", encoding="utf-8") as fh:
                for conversation_id, event in batch:
                    fh.write(dumps_payload(_row(conversation_id, event)) + "\n")
        except OSError as exc:
            log.error(
                "%d events could not be written to %s nor to %s: %s", len(batch), self._path, salvage, exc
            )
            return
        self.salvage_file = salvage
        log.error(
            "%d events could not be written to %s; they were saved to %s", len(batch), self._path, salvage
        )

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
