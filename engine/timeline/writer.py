"""The database writer thread: timelines hand it events without waiting; it writes them in batches.

A timeline's subscriber callback only puts the event on a queue. The thread collects what arrives for at most
`flush_interval_ms` after the oldest unwritten event, then writes the batch in one transaction, so a crash of
the process loses at most that window (plus one write).

When the database refuses a write (a full disk, a lock held by another program) nothing is dropped quietly:
the thread retries on a timer that backs off to `retry_max_ms`, keeps at most `max_pending` events (and
`max_pending_bytes`) in memory and moves older ones to a journal file (journal.py), and tells every attached
timeline with a SystemNotice what is not saved and how to fix it. Once a write succeeds the backlog and the
journal are written, and a second notice says so.
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

from engine.errors import StorageError
from engine.timeline.db import conversations_table, dumps_payload, utc_now
from engine.timeline.events import Event, SystemNotice
from engine.timeline.journal import Journal, Row, default_folders
from engine.timeline.timeline import Timeline

log = logging.getLogger(__name__)

_ROW_OVERHEAD = 100  # bytes a row costs in memory beyond its payload text (dict, ids, numbers)

# Written as prepared text: the payload is serialized once, when the event arrives, and its size is known.
# DO NOTHING: re-writing a row that is already there (a retried batch, a journal read twice) is a no-op.
_INSERT_EVENTS = sa.text(
    "INSERT INTO events (conversation_id, seq, t_ms, kind, payload) "
    "VALUES (:conversation_id, :seq, :t_ms, :kind, :payload) ON CONFLICT DO NOTHING"
)


@dataclass(frozen=True)
class WriterOptions:
    """How the writer thread batches events, and what it does while the database refuses them."""

    flush_interval_ms: int = 100  # longest an event waits in memory; the crash guarantee is 250 ms
    max_batch: int = 1000  # a batch this large is written at once, without waiting for the interval
    retry_interval_ms: int = 500  # pause before the first retry after the database refused a write
    retry_max_ms: int = 30_000  # the pause doubles per failed retry up to this; retries run on a timer
    max_pending: int = 10_000  # unwritten events kept in memory; older ones move to a journal file
    max_pending_bytes: int = 8 * 1024 * 1024  # the same bound in bytes of stored JSON
    journal_dirs: tuple[Path, ...] | None = None  # where journals go, in order; None: beside the db, then temp
    notice_interval_s: float = 300.0  # while writes keep failing, the notice is repeated this often

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
        if self.retry_max_ms < self.retry_interval_ms:
            raise ValueError(
                f"retry_max_ms must be at least retry_interval_ms ({self.retry_interval_ms}), "
                f"got {self.retry_max_ms}"
            )
        if self.max_pending < 2 or self.max_pending_bytes < 1024:
            raise ValueError(
                f"max_pending must be at least 2 and max_pending_bytes at least 1024, "
                f"got {self.max_pending} and {self.max_pending_bytes}"
            )
        if self.notice_interval_s <= 0:
            raise ValueError(f"notice_interval_s must be positive, got {self.notice_interval_s}")


@dataclass(frozen=True)
class StorageHealth:
    """How saving the conversation history is going; a snapshot, updated by the writer thread."""

    saving: bool = True  # False while the database refuses writes
    in_memory: int = 0  # events waiting in memory
    in_memory_bytes: int = 0  # their stored size
    in_journal: int = 0  # events waiting in journal files
    lost: int = 0  # events kept neither in the database nor in a journal since the store opened
    error: str = ""  # why the last write failed; "" while saving
    journal_files: tuple[Path, ...] = ()  # where the journaled events wait

    @property
    def unsaved(self) -> int:
        """Events not in the database yet (lost ones not counted)."""
        return self.in_memory + self.in_journal


class _FlushRequest:
    """Queued by `flush()`; the thread answers it once everything queued before it is written."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None


class _WriteFailed(Exception):
    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


_STOP = object()


def _row(conversation_id: str, event: Event) -> Row:
    payload = event.to_dict()
    for column in ("kind", "seq", "t_ms"):
        payload.pop(column, None)
    return {
        "conversation_id": conversation_id,
        "seq": event.seq,
        "t_ms": event.t_ms,
        "kind": str(event.kind),
        "payload": dumps_payload(payload),
    }


def _size(row: Row) -> int:
    return len(row["payload"]) + _ROW_OVERHEAD


def _reason(exc: BaseException) -> str:
    """The database's own words ("database or disk is full"), without SQLAlchemy's statement dump."""
    return str(getattr(exc, "orig", None) or exc).splitlines()[0]


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
        self.salvage_file: Path | None = None  # set when close() had to leave unwritten events in a journal
        self._timelines: dict[str, Timeline] = {}  # attached timelines, told when saving fails or recovers
        self._timelines_lock = threading.Lock()
        self._journal = Journal(path, self.options.journal_dirs or default_folders(path))
        self._health = StorageHealth()
        # the thread's own state
        self._pending: list[Row] = []
        self._pending_bytes = 0
        self._flush_at = 0.0  # when the oldest pending event must be written
        self._failing = False  # the last write failed; the next one waits for _retry_at
        self._retry_at = 0.0
        self._backoff_s = 0.0
        self._outage: _Outage | None = None  # set from the first failed write until everything is saved
        self._lost = 0  # events kept neither in the database nor in a journal, since the writer started
        self._thread = threading.Thread(target=self._run, name="venus-db-writer", daemon=True)
        self._thread.start()

    def attach(self, timeline: Timeline) -> Callable[[], None]:
        """Persist every event appended to `timeline` from now on; returns a function that detaches it."""
        conversation_id = timeline.conversation_id
        put = self._queue.put

        def enqueue(event: Event) -> None:  # runs on the appending thread: never blocks
            put((conversation_id, event))

        unsubscribe = timeline.subscribe(enqueue)
        with self._timelines_lock:
            self._timelines[conversation_id] = timeline

        def detach() -> None:
            unsubscribe()
            with self._timelines_lock:
                if self._timelines.get(conversation_id) is timeline:
                    del self._timelines[conversation_id]

        return detach

    def health(self) -> StorageHealth:
        """How saving is going right now (events waiting in memory and journals, events lost, the error)."""
        return self._health

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
                f"Could not write events to {self._path}: {_reason(request.error)}",
                fix=self._fix(request.error),
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
        self._queue.put(_STOP)  # the thread tries once more, then leaves what is left in a journal
        self._thread.join(timeout)
        if failure is not None and (self._unwritten or self._thread.is_alive()):
            files = ", ".join(str(f) for f in self._journal.files)
            saved = f"; they were saved to {files} and are written when Venus next opens it" if files else ""
            raise StorageError(
                f"{self._unwritten} events could not be written to {self._path}{saved}",
                fix=self._fix(self.last_error or failure),
            ) from failure

    # ---- the thread ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        self._journal.adopt_leftovers()
        stopping = False
        while not stopping:
            requests, stopping = self._take(self._wait_s())
            forced = bool(requests) or stopping
            if forced or self._due():
                self._write_backlog(everything=forced)
            self._bound_memory()
            self._update_health()
            self._tell_timelines()
            for request in requests:
                left = self._pending or self._journal.waiting
                request.error = (self.last_error or StorageError("events are still waiting")) if left else None
                request.done.set()
        self._leave_the_rest()

    def _take(self, wait: float | None) -> tuple[list[_FlushRequest], bool]:
        """Move what is queued (at most max_batch events per call) into memory; returns flush requests, stop."""
        requests: list[_FlushRequest] = []
        stopping = False
        try:
            item = self._queue.get(timeout=wait)
        except queue.Empty:
            return requests, stopping
        taken = 0
        while item is not None:
            if item is _STOP:
                stopping = True
            elif isinstance(item, _FlushRequest):
                requests.append(item)
            else:
                self._keep(_row(*item))
                taken += 1
                if taken >= self.options.max_batch:
                    break  # write (or bound) now; a steady flood must not keep the thread draining forever
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                item = None
        return requests, stopping

    def _keep(self, row: Row) -> None:
        if not self._pending:
            self._flush_at = time.monotonic() + self.options.flush_interval_ms / 1000
        self._pending.append(row)
        self._pending_bytes += _size(row)

    def _wait_s(self) -> float | None:
        """How long the thread may sleep before something is due; None: until an event arrives."""
        now = time.monotonic()
        if self._failing:
            return max(0.0, self._retry_at - now)
        if self._journal.waiting:
            return 0.0
        if self._pending:
            return max(0.0, self._flush_at - now)
        return None

    def _due(self) -> bool:
        now = time.monotonic()
        if self._failing:
            return now >= self._retry_at  # a timer, not every new event, decides when to try again
        if self._journal.waiting or self._over_bound():
            return True
        return bool(self._pending) and (now >= self._flush_at or len(self._pending) >= self.options.max_batch)

    def _over_bound(self) -> bool:
        return len(self._pending) > self.options.max_pending or self._pending_bytes > self.options.max_pending_bytes

    def _write_backlog(self, everything: bool) -> None:
        """Write what is in memory, then journaled rows (one batch of them, or all when `everything`)."""
        try:
            while self._pending:
                batch = self._pending[: self.options.max_batch]
                self._write(batch)
                del self._pending[: len(batch)]
                self._pending_bytes -= sum(_size(row) for row in batch)
                self._count_saved(len(batch))
            while rows := self._journal.read(self.options.max_batch):
                self._write(rows)
                self._journal.commit()
                self._count_saved(len(rows))
                if not everything:
                    break
        except _WriteFailed as failed:
            self._on_failure(failed.error)
            return
        self._failing = False
        self.last_error = None
        self._backoff_s = 0.0

    def _write(self, rows: list[Row]) -> None:
        """Write rows in one transaction; raises _WriteFailed when the database refuses it."""
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
                except Exception as exc:  # noqa: BLE001 - kept for a retry
                    raise _WriteFailed(exc) from exc
        except Exception as exc:  # noqa: BLE001 - the disk may be full or the file locked; keep the rows
            raise _WriteFailed(exc) from exc

    def _insert(self, rows: list[Row]) -> None:
        now = utc_now()
        with self._engine.begin() as conn:
            conn.execute(_INSERT_EVENTS, rows)
            for conversation_id in {row["conversation_id"] for row in rows}:
                conn.execute(
                    sa.update(conversations_table)
                    .where(conversations_table.c.id == conversation_id)
                    .values(updated_at=now)
                )

    # ---- when the database refuses writes ----------------------------------------------------------------------

    def _on_failure(self, exc: BaseException) -> None:
        """Schedule the next try after a pause that doubles per failure, up to retry_max_ms."""
        first = self.options.retry_interval_ms / 1000
        self._backoff_s = first if not self._failing else min(2 * self._backoff_s, self.options.retry_max_ms / 1000)
        self._failing = True
        self._retry_at = time.monotonic() + self._backoff_s
        self.last_error = exc
        if self._outage is None:
            log.error("writing events to %s failed (will retry): %s", self._path, _reason(exc))
            self._outage = _Outage()

    def _bound_memory(self) -> None:
        """While writes fail, move the oldest pending rows over the memory bound to a journal (else: lost)."""
        if not self._failing or not self._over_bound():
            return  # when writes work, a burst over the bound is written at once instead
        keep_rows, keep_bytes = self.options.max_pending // 2, self.options.max_pending_bytes // 2
        cut, size = len(self._pending), 0
        while cut > 0 and len(self._pending) - cut < keep_rows and size + _size(self._pending[cut - 1]) <= keep_bytes:
            cut -= 1
            size += _size(self._pending[cut])
        moved = self._pending[:cut]
        del self._pending[:cut]
        self._pending_bytes -= sum(_size(row) for row in moved)
        try:
            journal = self._journal.append(moved)
        except OSError as exc:
            log.error("%d unwritten events could not be kept in any journal and are lost: %s", len(moved), exc)
            self._lose(len(moved))
        else:
            log.warning("%d unwritten events moved from memory to %s", len(moved), journal)

    def _leave_the_rest(self) -> None:
        """At close, after the last try: what is still in memory goes to a journal for the next start."""
        if self._pending:
            try:
                self.salvage_file = self._journal.append(self._pending)
            except OSError as exc:
                log.error("%d events could not be written to %s nor to a journal: %s",
                          len(self._pending), self._path, exc)
                self._lose(len(self._pending))
            else:
                log.error("%d events could not be written to %s; they were saved to %s",
                          len(self._pending), self._path, self.salvage_file)
            self._pending, self._pending_bytes = [], 0
        self._unwritten = self._journal.waiting + (self._outage.lost if self._outage else 0)
        self._journal.close()
        self._update_health()

    def _lose(self, count: int) -> None:
        self._lost += count
        if self._outage is not None:
            self._outage.lost += count

    def _count_saved(self, count: int) -> None:
        if self._outage is not None:
            self._outage.saved += count

    # ---- telling the user ----------------------------------------------------------------------------------------

    def _update_health(self) -> None:
        self._health = StorageHealth(
            saving=not self._failing,
            in_memory=len(self._pending),
            in_memory_bytes=self._pending_bytes,
            in_journal=self._journal.waiting,
            lost=self._lost + self._journal.lost,
            error=_reason(self.last_error) if self.last_error is not None else "",
            journal_files=self._journal.files,
        )

    def _tell_timelines(self) -> None:
        """Post a notice when saving stops, when events are first lost, every notice_interval_s, and on recovery."""
        outage = self._outage
        if outage is None:
            return
        health = self._health
        if not health.unsaved and not self._failing:
            self._outage = None
            self._post(SystemNotice(level="info", code="history-saved", text=self._recovered_text(outage)))
            log.warning("writing events to %s works again; %d waiting events written", self._path, outage.saved)
            return
        if not self._failing:
            return  # writing the backlog: no news until it is done
        now = time.monotonic()
        first_loss = outage.lost > 0 and not outage.told_lost
        if outage.told_at is None or first_loss or now - outage.told_at >= self.options.notice_interval_s:
            outage.told_at, outage.told_lost = now, outage.lost
            self._post(SystemNotice(level="error", code="history-not-saved", text=self._outage_text(health)))

    def _outage_text(self, health: StorageHealth) -> str:
        where = f" ({health.in_journal} of them in {', '.join(map(str, health.journal_files))})" \
            if health.in_journal else ""
        lost = f" {self._outage.lost} could not be kept anywhere and are lost." if self._outage.lost else ""
        return (
            f"The conversation is not being saved: {self._path} refused the last write ({health.error}). "
            f"{health.unsaved} events are waiting to be saved{where}.{lost} "
            f"To fix it, {self._fix(self.last_error)}; Venus retries on its own and saves them when it can."
        )

    def _recovered_text(self, outage: _Outage) -> str:
        lost = f" {outage.lost} events could not be kept and are missing from the history." if outage.lost else ""
        return f"The conversation is being saved again: {outage.saved} waiting events were written to {self._path}.{lost}"

    def _fix(self, error: BaseException | None) -> str:
        if error is not None and "locked" in _reason(error):
            return f"close the other program that holds {self._path} locked"
        return f"free disk space in {self._path.parent}"

    def _post(self, notice: SystemNotice) -> None:
        """Append a notice to every attached timeline: the UI and the CLI see it there, even while unsaved."""
        with self._timelines_lock:
            timelines = list(self._timelines.values())
        for timeline in timelines:
            try:
                timeline.append(notice)
            except Exception:  # noqa: BLE001 - a notice must never stop the writer
                log.exception("could not post a storage notice to conversation %s", timeline.conversation_id)


@dataclass
class _Outage:
    """One stretch of failed writes, from the first failure until every waiting event is saved."""

    saved: int = 0  # waiting events written since writes work again
    lost: int = 0  # events that could be kept neither in memory nor in a journal
    told_at: float | None = None  # when the last notice about it was posted (monotonic)
    told_lost: int = 0  # `lost` as that notice said it
