"""Timers and reminders: stored in the harness database, fired later as ReminderFired events, kept over restarts."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from engine.timeline.events import Event, ReminderFired
from harness.scheduler import DeadlineScheduler, Scheduled
from harness.store import TaskStore
from harness.tool import InvalidArguments, Permission, Tool, ToolContext, ToolOutput, ToolSpec

MAX_DELAY_S = 366 * 86400  # a year ahead at most


def _timer_text(seconds: float) -> str:
    """What a timer set without words of its own says when it ends."""
    delay = _spoken_delay(seconds)
    amount, _, unit = delay.partition(" ")
    if amount.isdigit() and " " not in unit:  # one unit: "Your 10-second timer is done."
        return f"Your {amount}-{unit.removesuffix('s')} timer is done."
    return f"Your timer for {delay} is done."  # "Your timer for 1 hour 30 minutes is done."


def _spoken_delay(seconds: float) -> str:
    seconds = round(seconds)
    parts = []
    for unit, size in (("hour", 3600), ("minute", 60), ("second", 1)):
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount} {unit}{'s' if amount != 1 else ''}")
    return " ".join(parts) or "less than a second"


class ReminderService:
    """Schedules reminders on the deadline thread and emits ReminderFired when each comes due."""

    def __init__(self, store: TaskStore, scheduler: DeadlineScheduler, emit: Callable[[Event], None]) -> None:
        self.store = store
        self._scheduler = scheduler
        self._emit = emit
        self._handles: dict[str, Scheduled] = {}
        self._lock = threading.Lock()

    def restore(self) -> int:
        """Schedule every stored reminder that has not fired; overdue ones fire at once. Returns the count."""
        pending = self.store.pending_reminders()
        for reminder in pending:
            self._schedule(reminder.id, reminder.text, reminder.due_at)
        return len(pending)

    def add(self, text: str, due_at: float) -> str:
        """Store a reminder due at Unix time `due_at`; returns its id."""
        reminder_id = uuid.uuid4().hex[:10]
        self.store.add_reminder(reminder_id, text, due_at)
        self._schedule(reminder_id, text, due_at)
        return reminder_id

    def cancel(self, reminder_id: str) -> bool:
        """Cancel a pending reminder; False if there is none with that id."""
        with self._lock:
            handle = self._handles.pop(reminder_id, None)
        if handle is None:
            return False
        handle.cancel()
        self.store.mark_reminder(reminder_id, cancelled=True)
        return True

    def reschedule(self, reminder_id: str, due_at: float, text: str) -> bool:
        """Move a pending reminder to `due_at` (saying `text`); False if there is none with that id."""
        with self._lock:
            handle = self._handles.pop(reminder_id, None)
        if handle is None:
            return False
        handle.cancel()
        self.store.reschedule_reminder(reminder_id, due_at, text)
        self._schedule(reminder_id, text, due_at)
        return True

    def _schedule(self, reminder_id: str, text: str, due_at: float) -> None:
        delay = max(0.0, due_at - time.time())
        handle = self._scheduler.call_later(delay, lambda: self._fire(reminder_id, text))
        with self._lock:
            self._handles[reminder_id] = handle

    def _fire(self, reminder_id: str, text: str) -> None:
        with self._lock:
            self._handles.pop(reminder_id, None)
        self.store.mark_reminder(reminder_id, fired=True)
        self._emit(ReminderFired(reminder_id=reminder_id, text=text))

    # ---- tool handlers ------------------------------------------------------------------------------------

    def set_timer(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: a reminder after a number of seconds."""
        seconds = float(arguments["seconds"])
        text = arguments.get("text") or _timer_text(seconds)
        reminder_id = self.add(text, time.time() + seconds)
        return ToolOutput(summary=f"Timer set for {_spoken_delay(seconds)}",
                          data={"reminder_id": reminder_id, "due_in_s": seconds, "text": text})

    def set_reminder(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: a reminder at a local date and time."""
        try:
            when = datetime.fromisoformat(arguments["at"])
        except ValueError:
            raise InvalidArguments(f"'at' must be an ISO date and time like 2026-05-01T09:30, got "
                                   f"{arguments['at']!r}") from None
        due_at = when.timestamp()  # naive times are local time
        if due_at <= time.time():
            raise InvalidArguments(f"{arguments['at']} is in the past", fix="give a time in the future")
        if due_at - time.time() > MAX_DELAY_S:
            raise InvalidArguments(f"{arguments['at']} is more than a year ahead")
        reminder_id = self.add(arguments["text"], due_at)
        return ToolOutput(summary=f"I'll remind you at {when:%H:%M on %A %d %B}",
                          data={"reminder_id": reminder_id, "due_at": when.isoformat(), "text": arguments["text"]})

    def list_reminders(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: the pending reminders; `timer` marks a timer set without words of its own (its text is Venus's)."""
        items = [{"reminder_id": r.id, "text": r.text, "due_at": datetime.fromtimestamp(r.due_at).isoformat(),
                  "set_at": datetime.fromtimestamp(r.created_at).isoformat(),
                  "timer": r.text == _timer_text(r.due_at - r.created_at)}
                 for r in self.store.pending_reminders()]
        return ToolOutput(summary=f"{len(items)} reminder{'s' if len(items) != 1 else ''} pending",
                          data={"reminders": items})

    def change_reminder(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: move a timer or reminder to a new length from now (`seconds`) or a local date and time (`at`)."""
        reminder_id = arguments["reminder_id"]
        current = next((r for r in self.store.pending_reminders() if r.id == reminder_id), None)
        if current is None:
            raise InvalidArguments(f"no pending reminder has id {reminder_id!r}", fix="call list_reminders for the ids")
        if ("seconds" in arguments) == ("at" in arguments):
            raise InvalidArguments("give either 'seconds' (from now) or 'at' (a local date and time), not both")
        if "seconds" in arguments:
            due_at = time.time() + float(arguments["seconds"])
        else:
            try:
                due_at = datetime.fromisoformat(arguments["at"]).timestamp()
            except ValueError:
                raise InvalidArguments(f"'at' must be an ISO date and time like 2026-05-01T09:30, got "
                                       f"{arguments['at']!r}") from None
            if due_at <= time.time():
                raise InvalidArguments(f"{arguments['at']} is in the past", fix="give a time in the future")
        was_timer = current.text == _timer_text(current.due_at - current.created_at)
        text = _timer_text(due_at - time.time()) if was_timer and "seconds" in arguments else current.text
        if not self.reschedule(reminder_id, due_at, text):
            raise InvalidArguments(f"reminder {reminder_id!r} went off or was cancelled just now")
        when = datetime.fromtimestamp(due_at)
        return ToolOutput(summary=f"Moved to {when:%H:%M on %A %d %B}",
                          data={"reminder_id": reminder_id, "due_at": when.isoformat(), "text": text})

    def cancel_reminder(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: cancel one reminder by id."""
        if not self.cancel(arguments["reminder_id"]):
            raise InvalidArguments(f"no pending reminder has id {arguments['reminder_id']!r}",
                                   fix="call list_reminders for the ids")
        return ToolOutput(summary="Reminder cancelled", data={"reminder_id": arguments["reminder_id"]})


def reminder_tools(service: ReminderService) -> list[Tool]:
    """set_timer, set_reminder, list_reminders, cancel_reminder and change_reminder."""
    return [
        Tool(ToolSpec(
            name="set_timer", permission=Permission.ALLOW, description="Start a timer; when it ends, Venus tells the user.",
            parameters={"type": "object", "additionalProperties": False, "required": ["seconds"], "properties": {
                "seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DELAY_S},
                "text": {"type": "string", "description": "what to say when it ends"}}},
            idempotent=False,
        ), service.set_timer),
        Tool(ToolSpec(
            name="set_reminder", permission=Permission.ALLOW, description="Remind the user of something at a local date and time.",
            parameters={"type": "object", "additionalProperties": False, "required": ["at", "text"], "properties": {
                "at": {"type": "string", "description": "ISO local date and time, e.g. 2026-05-01T09:30"},
                "text": {"type": "string", "minLength": 1}}},
            idempotent=False,
        ), service.set_reminder),
        Tool(ToolSpec(
            name="list_reminders", permission=Permission.ALLOW, description="List timers and reminders that have not fired yet.",
            parameters={"type": "object", "additionalProperties": False, "properties": {}},
        ), service.list_reminders),
        Tool(ToolSpec(
            name="cancel_reminder", permission=Permission.ALLOW, description="Cancel a timer or reminder by its id.",
            parameters={"type": "object", "additionalProperties": False, "required": ["reminder_id"],
                        "properties": {"reminder_id": {"type": "string"}}},
        ), service.cancel_reminder),
        Tool(ToolSpec(
            name="change_reminder", permission=Permission.ALLOW,
            description="Move a timer or reminder: a new length from now, or a new local date and time.",
            parameters={"type": "object", "additionalProperties": False, "required": ["reminder_id"], "properties": {
                "reminder_id": {"type": "string"},
                "seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DELAY_S},
                "at": {"type": "string", "description": "ISO local date and time, e.g. 2026-05-01T09:30"}}},
            idempotent=False,
        ), service.change_reminder),
    ]
