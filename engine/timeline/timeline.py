"""The in-memory timeline: append-only, thread-safe, delivering every event to subscribers in order."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable

from engine.timeline.events import Event, Kind

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]


class SessionClock:
    """Milliseconds since the session started, from the monotonic clock."""

    def __init__(self, start_ns: int | None = None) -> None:
        self.start_ns = time.monotonic_ns() if start_ns is None else start_ns

    def now_ms(self) -> int:
        """Current session time in ms."""
        return (time.monotonic_ns() - self.start_ns) // 1_000_000


class Timeline:
    """One conversation's shared causal timeline.

    `append` stamps an event with its sequence number (and the session time when the caller left it at -1),
    stores it and hands it to every subscriber on the appending thread, in timeline order. A subscriber that
    appends from inside its callback has its event queued and delivered after the current one.
    """

    def __init__(
        self,
        conversation_id: str | None = None,
        clock: SessionClock | None = None,
        events: Iterable[Event] = (),
    ) -> None:
        self.conversation_id = conversation_id or uuid.uuid4().hex
        self.clock = clock or SessionClock()
        self._events: list[Event] = list(events)
        self._lock = threading.RLock()
        self._subscribers: list[Subscriber] = []
        self._pending: deque[Event] = deque()
        self._dispatching = False
        if self._events:
            # a reopened conversation continues its clock where it stopped
            self.clock.start_ns -= (self._events[-1].t_ms + 1) * 1_000_000

    def append(self, event: Event) -> Event:
        """Add an event; returns it stamped with `seq` (and `t_ms` if it was -1)."""
        with self._lock:
            t_ms = event.t_ms if event.t_ms >= 0 else self.clock.now_ms()
            stamped = dataclasses.replace(event, seq=len(self._events), t_ms=t_ms)
            self._events.append(stamped)
            self._pending.append(stamped)
            if not self._dispatching:
                self._dispatching = True
                try:
                    while self._pending:
                        item = self._pending.popleft()
                        for callback in list(self._subscribers):
                            try:
                                callback(item)
                            except Exception:  # one broken subscriber must not silence the others
                                log.exception("timeline subscriber %r failed on %s", callback, item.kind)
                finally:
                    self._dispatching = False
            return stamped

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Deliver every future event to `callback`; returns a function that unsubscribes."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def events(self, since_seq: int = 0, kinds: Iterable[Kind] | None = None) -> list[Event]:
        """A snapshot of events from `since_seq` on, optionally only of some kinds."""
        with self._lock:
            selected = self._events[since_seq:]
        if kinds is not None:
            wanted = set(kinds)
            selected = [e for e in selected if e.kind in wanted]
        return selected

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)

    def now_ms(self) -> int:
        """The session clock."""
        return self.clock.now_ms()
