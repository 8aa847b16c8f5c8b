"""Events leave the harness through one queue and one thread, so no harness lock is held while subscribers run."""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Callable

from engine.timeline.events import Event
from harness.secrets import Redactor

log = logging.getLogger(__name__)

Emit = Callable[[Event], None]

_STOP = object()


class EventPump:
    """Delivers events to `emit` (usually `Timeline.append`) in the order they were put, secrets masked."""

    def __init__(self, emit: Emit, redactor: Redactor) -> None:
        self._emit = emit
        self._redactor = redactor
        self._queue: queue.Queue[object] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="venus-harness-events", daemon=True)
        self._thread.start()

    def put(self, event: Event) -> None:
        """Queue an event; returns at once."""
        self._queue.put(self._scrub(event))

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every queued event was delivered; False if `timeout_s` passed first."""
        deadline = time.monotonic() + timeout_s
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._queue.all_tasks_done.wait(remaining):
                    return not self._queue.unfinished_tasks
        return True

    def stop(self) -> None:
        """Deliver what is queued, then end the thread."""
        self._queue.put(_STOP)
        self._thread.join(timeout=10)

    def _scrub(self, event: Event) -> Event:
        if not self._redactor.active:
            return event
        changes = {}
        for f in dataclasses.fields(event):
            value = getattr(event, f.name)
            if isinstance(value, str | dict | list | tuple):
                clean = self._redactor.scrub(value)
                if clean != value:
                    changes[f.name] = clean
        return dataclasses.replace(event, **changes) if changes else event

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                self._emit(item)  # type: ignore[arg-type]
            except Exception:  # a failing subscriber must not stop the harness's reports
                log.exception("delivering a harness event failed")
            finally:
                self._queue.task_done()
