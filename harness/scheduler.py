"""One thread that calls functions at deadlines: task timeouts, confirmation timeouts and reminders."""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Scheduled:
    """A handle to one scheduled call; `cancel()` makes sure it never runs."""

    def __init__(self, due: float, action: Callable[[], None]) -> None:
        self.due = due
        self.action = action
        self.cancelled = False

    def cancel(self) -> None:
        """Drop the call if it has not run yet."""
        self.cancelled = True


class DeadlineScheduler:
    """Runs each action on its one thread when its deadline (monotonic clock) comes; actions must be quick."""

    def __init__(self, name: str = "venus-harness-deadlines") -> None:
        self._heap: list[tuple[float, int, Scheduled]] = []
        self._counter = itertools.count()
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def call_at(self, due_monotonic: float, action: Callable[[], None]) -> Scheduled:
        """Call `action` once the monotonic clock reaches `due_monotonic`."""
        item = Scheduled(due_monotonic, action)
        with self._cond:
            heapq.heappush(self._heap, (due_monotonic, next(self._counter), item))
            self._cond.notify()
        return item

    def call_later(self, delay_s: float, action: Callable[[], None]) -> Scheduled:
        """Call `action` after `delay_s` seconds."""
        return self.call_at(time.monotonic() + max(0.0, delay_s), action)

    def stop(self) -> None:
        """Stop the thread; pending calls are dropped."""
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (not self._heap or self._heap[0][0] > time.monotonic()):
                    wait = None if not self._heap else self._heap[0][0] - time.monotonic()
                    self._cond.wait(timeout=wait)
                if self._stopped:
                    return
                _, _, item = heapq.heappop(self._heap)
            if item.cancelled:
                continue
            try:
                item.action()
            except Exception:  # a failing action must not stop timeouts for everyone else
                log.exception("scheduled action failed")
