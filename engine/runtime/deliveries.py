"""Proactive delivery: what waits for a natural gap in the conversation, and what is said when one comes.

Background results and failures, reminders, confirmation requests and the late answers to recognised requests
queue here; the runtime asks for the next one whenever it is listening with nothing else to do.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from engine.runtime.options import RuntimeOptions
from engine.timeline import events as ev


@dataclass(frozen=True)
class LateAnswer:
    """The rendered answer to a recognised request whose result came after Venus moved on: said at the next gap."""

    text: str


_URGENT = (ev.ReminderFired, ev.ConfirmationRequested, LateAnswer)


@dataclass(frozen=True)
class Delivery:
    """What to say now: a fixed sentence, or (`text` None) one LLM turn that weaves the finished tasks in."""

    text: str | None
    asking: str | None = None  # the task whose yes/no question the sentence asks
    reminder: ev.ReminderFired | None = None  # the reminder the sentence says (said again if cut off unheard)


class Deliveries:
    """The queue of timeline events (and `LateAnswer`s) waiting for a gap, and the rule for the next one."""

    def __init__(self, options: RuntimeOptions | None = None) -> None:
        self.options = options or RuntimeOptions()
        self._queue: deque[ev.Event | LateAnswer] = deque()

    def __bool__(self) -> bool:
        return bool(self._queue)

    def add(self, item: ev.Event | LateAnswer) -> None:
        """Queue a result, failure, reminder, confirmation request or late answer."""
        self._queue.append(item)

    def ready(self, asked: str | None, pending: list[str]) -> list[ev.Event | LateAnswer]:
        """What may be said now; `asked`: the confirmation asked last, `pending`: those still unanswered."""
        # one question at a time: while the confirmation asked last is unanswered, the next one waits, so that a
        # yes or no can only mean the question just heard
        held = asked is not None and asked in pending
        return [e for e in self._queue
                if not (held and isinstance(e, ev.ConfirmationRequested) and e.task_id != asked)]

    def next(self, now_ms: int, *, last_activity_ms: int, person_present: bool | None, asked: str | None,
             pending: list[str]) -> Delivery | None:
        """Take what is due now off the queue and say how to deliver it (None: nothing, or wait)."""
        ready = self.ready(asked, pending)
        if not ready:
            return None
        urgent = next((e for e in ready if isinstance(e, _URGENT)), None)
        if urgent is None:
            quiet = now_ms - last_activity_ms >= self.options.proactive_gap_ms
            if not quiet or person_present is False:  # never to an empty room; it waits until they return
                return None
        event = urgent or ready[0]
        self._queue.remove(event)
        if isinstance(event, ev.ReminderFired):
            return Delivery(f"Excuse me, a reminder: {event.text}", reminder=event)
        if isinstance(event, LateAnswer):
            return Delivery(event.text)
        if isinstance(event, ev.ConfirmationRequested):
            if event.task_id not in pending:
                return None  # answered meanwhile (in the window)
            # a yes or no from now on answers this one, once the question was heard
            return Delivery(f"Before I go ahead: {confirmation_text(event)} Say yes or no.", asking=event.task_id)
        # tasks finished or failed: one turn weaves them all in (they are in the context), in words only
        for other in [e for e in ready if not isinstance(e, _URGENT) and e is not event and e in self._queue]:
            self._queue.remove(other)
        return Delivery(None)


def confirmation_text(event: ev.ConfirmationRequested) -> str:
    """The question that asks the user to approve a tool call, from its prompt or its tool and arguments."""
    if event.prompt:
        prompt = event.prompt.strip()
        return prompt if prompt.endswith(("?", ".", "!")) else prompt + "."
    args = ", ".join(f"{k} {v}" for k, v in event.arguments.items())
    return f"{re.sub(r'[_-]', ' ', event.tool)} with {args}." if args else f"{event.tool}."
