"""Everyday requests the intent templates recognise ("set a timer for ten minutes"), run as tool calls through
the harness without the LLM, and their results rendered as sentences (engine.intents)."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from engine.errors import ConfigError
from engine.intents import IntentContext, IntentMatch, IntentMatcher
from engine.intents.responses import acknowledgement, render_failure, render_result
from engine.runtime.assistant_turns import VenusTurn
from engine.runtime.deliveries import LateAnswer
from engine.runtime.options import RuntimeOptions
from engine.timeline import events as ev
from engine.timeline.timeline import Timeline

log = logging.getLogger(__name__)

# The end of a turn asks about the same final words up to three times (is it a whole request, is it an answer to
# a question, which request); one match is reused for this long, until a task starts or ends. Relative times
# ("in ten minutes") move by less than this, and the reminders and tasks a match picks from cannot change unseen.
MATCH_REUSE_S = 2.0
# Words that add to what was just asked ("And eggs too.", "Also some bread.", "Plus milk."), taken off the new words.
_MORE = re.compile(r"^\W*(?:(?:oh|and|also|plus|oh and|and also)\b\W*)+|\W*\b(?:too|as well|also)\W*$", re.IGNORECASE)
_REMINDERS = {"set_timer", "set_reminder"}  # "Remind me to call" - "When?" - "In ten minutes." is a timer
# A yes to an offer ("Want me to open weather.com?" - "Yes, please.")
_YES = re.compile(r"^\W*(?:yes|yeah|yep|yup|sure|ok|okay|please|go ahead|do it|why not|of course)\b(?:\W+(?:please|do it|"
                  r"go ahead|thanks|thank you|sure))*\W*$", re.IGNORECASE)
SNOOZE_WINDOW_MS = 15 * 60_000  # "Snooze" this long after a reminder went off means that reminder
# A question back ("For how long?") waits this long for its answer; words after that are a new turn of their own.
FOLLOW_UP_S = 60.0
# An answer that drops the request instead of completing it ("Set a timer" - "For how long?" - "Never mind.").
_DROPPED = re.compile(r"^\W*(?:oh\s+)?(?:never ?mind|forget (?:it|about it)|cancel(?: that| it)?|no|nope|nothing|"
                      r"not now|skip it|stop|don'?t bother|no thanks)\W*$", re.IGNORECASE)


@dataclass
class _IntentTask:
    """A recognised request delegated to the harness, waiting for its result to be spoken."""

    match: IntentMatch
    ref: VenusTurn
    started_ms: int
    acknowledged: bool = False


@dataclass(frozen=True)
class RequestOutcome:
    """What a task event of a recognised request means: words to say on its waiting turn now, or for later."""

    say: str | None = None  # spoken as the words of `ref`, the turn that waited for the result
    ref: VenusTurn | None = None
    later: ev.Event | LateAnswer | None = None  # waits for the next gap (Deliveries)


class LocalRequests:
    """Matches the user's words against the intent templates and follows the tasks it started."""

    def __init__(self, timeline: Timeline, harness: Any, options: RuntimeOptions,
                 intents: IntentMatcher | None = None) -> None:
        self.harness = harness  # harness.Harness: submit, check_call, pending reminders and running tasks
        self.timeline = timeline
        self.options = options
        self.intents = intents  # default: the English templates when there is a harness
        if intents is None and harness is not None and options.local_intents:
            try:
                self.intents = IntentMatcher.load()
            except ConfigError as exc:  # missing or broken templates: Venus still talks, the LLM answers all
                log.error("local intents are off: %s", exc)
                timeline.append(ev.SystemNotice(level="warning", code="intents-unavailable", text=(
                    f"Everyday requests go to the language model only: {exc}. {exc.fix or ''}".strip())))
        self.assistant_name = "Venus"  # settings.conversation.assistant_name (the state machine sets it)
        self._tasks: dict[str, _IntentTask] = {}  # task id -> the request it answers
        self._last: tuple[str, float, IntentMatch | None] | None = None  # (text, monotonic time, its match)
        self._asked: tuple[IntentMatch, float] | None = None  # a question back waiting for its answer, and when
        self._done: tuple[IntentMatch, float] | None = None  # the last request run that more words may continue

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._tasks

    @property
    def unacknowledged(self) -> bool:
        """A request is running that Venus has neither answered nor acknowledged yet."""
        return any(not t.acknowledged for t in self._tasks.values())

    def match(self, text: str) -> IntentMatch | None:
        """The request `text` makes, when the templates know it; right after a question back ("For how long?"),
        the request that `text` completes as its answer ("Five minutes.")."""
        if self.intents is None or self.harness is None or not text.strip():
            return None
        now = time.monotonic()
        if self._last is not None and self._last[0] == text and now - self._last[1] < MATCH_REUSE_S:
            return self._last[2]
        answered = self._answered(text, now) or self._continued(text, now)
        if answered is not None:
            self._last = (text, now, answered)
            return answered
        match = self._match_now(text)
        if match is not None and match.intent == "snooze":
            match = self._snoozed(match)
        elif match is not None and match.intent == "cancel_last":
            match = self._undone(match, now)
        self._last = (text, now, match)
        return match

    def _snoozed(self, match: IntentMatch) -> IntentMatch:
        """ "Snooze." right after a reminder went off: that reminder again, after the length (a plain timer else)."""
        fired = self.timeline.events(kinds=[ev.Kind.REMINDER_FIRED])
        if not fired or self.timeline.now_ms() - fired[-1].t_ms > SNOOZE_WINDOW_MS:
            return match
        text = getattr(fired[-1], "text", "")
        return replace(match, arguments={**match.arguments, "text": text}) if text else match

    def _undone(self, match: IntentMatch, now: float) -> IntentMatch:
        """ "Undo that." right after items went on a list: those items come off it again (else, as matched, the
        timer or task just started)."""
        if self._done is None or now - self._done[1] > FOLLOW_UP_S or self._done[0].tool != "add_to_list":
            return match
        added = self._done[0].arguments
        return IntentMatch("cancel_last", "remove_from_list", {"list": added.get("list", ""),
                                                               "items": list(added.get("items", []))}, text=match.text)

    def _match_now(self, text: str) -> IntentMatch | None:
        assert self.intents is not None
        try:
            context = IntentContext(now=datetime.now(), reminders=self.harness.pending_reminders(),
                                    tasks=self.harness.running_tasks(),
                                    tools=frozenset(spec["name"] for spec in self.harness.tool_specs()),
                                    assistant_name=self.assistant_name)
            return self.intents.match(text, context)
        except Exception:  # the LLM answers instead; a template bug must never silence Venus
            log.exception("intent matching failed for %r", text)
            return None

    def _answered(self, text: str, now: float) -> IntentMatch | None:
        """The request the pending question's answer completes, when `text` completes it (same tool, runnable)."""
        if self._asked is None or now - self._asked[1] > FOLLOW_UP_S or _DROPPED.match(text):
            return None
        asked = self._asked[0]
        frame = asked.follow_up
        if "{answer}" not in frame:  # an offer ("Want me to open weather.com?"): a yes takes it
            return self._match_now(frame) if _YES.match(text) else None
        answer = text.strip().rstrip(".!?").strip()
        joint = re.search(r"(\w+)\s+\{answer\}", frame)  # "for {answer}": "for five minutes" has its own "for"
        if joint is not None:
            answer = re.sub(rf"^{re.escape(joint.group(1))}\s+", "", answer, flags=re.IGNORECASE)
        match = self._match_now(frame.replace("{answer}", answer))
        if match is None or match.clarify or (match.tool != asked.tool and {match.tool, asked.tool} != _REMINDERS):
            return None
        return match

    def _continued(self, text: str, now: float) -> IntentMatch | None:
        """ "And eggs too." right after "Add bread to my shopping list.": the same request for the new words."""
        if self._done is None or now - self._done[1] > FOLLOW_UP_S or not _MORE.search(text):
            return None
        done = self._done[0]
        more = _MORE.sub("", text).strip().rstrip(".!?").strip()
        if not more:
            return None
        own = self._match_now(more)  # a request of its own ("And set a timer for two minutes too.")
        if own is not None:
            return own
        match = self._match_now(done.follow_up.replace("{answer}", more))
        return match if match is not None and match.tool == done.tool and not match.clarify else None

    def dismissed(self, text: str) -> bool:
        """`text` drops the pending question back and its request ("Never mind."); the question is closed then."""
        if self._asked is None or time.monotonic() - self._asked[1] > FOLLOW_UP_S or not _DROPPED.match(text):
            return False
        self._asked = None
        return True

    def question_closed(self) -> None:
        """The user's turn after a question back was not its answer: the question is dropped."""
        self._asked = None

    def closed(self, text: str) -> bool:
        """A whole request that cannot grow ("what time is it?"): it needs no long pause to be sure it is over."""
        match = self.match(text)
        return match is not None and match.closed and not match.clarify

    def actionable(self, text: str) -> bool:
        """A request the templates parse into a tool call as heard, even one that could grow ("launch the terminal",
        "remind me in an hour to call mom"): it needs no more than a short pause
        (EndOfTurnOptions.request_max_silence_ms). One that needs a question back first is not."""
        match = self.match(text)
        return match is not None and not match.clarify

    def refusal(self, match: IntentMatch) -> str | None:
        """The sentence to say instead of running the request (a question back, or why it cannot run), or None."""
        if match.intent == "repeat":
            return self._last_said() or match.clarify
        if match.clarify:
            self._asked = (match, time.monotonic()) if match.follow_up else None
            return match.clarify
        problem = self.harness.check_call(match.tool, match.arguments)
        return f"I can't do that as asked: {problem}. Could you say it another way?" if problem else None

    def _last_said(self) -> str:
        """Her last answer in full (an answer cut off is said whole: the user asks for it because it was not heard)."""
        for event in reversed(self.timeline.events(kinds=[ev.Kind.ASSISTANT_TURN_END])):
            if isinstance(event, ev.AssistantTurnEnd) and event.text.strip():
                return event.text.strip()
        return ""

    def submit(self, match: IntentMatch, ref: VenusTurn, now_ms: int) -> None:
        """Run the request's tool now; its result is spoken on `ref` when it comes (or an acknowledgement first)."""
        self._last = None  # the tasks and reminders a match picks from change
        self._asked = None
        self._done = (match, time.monotonic()) if match.follow_up else None  # a list add: "and eggs too", "undo"
        task_id = self.harness.submit(match.tool, dict(match.arguments), turn_id=ref.turn_id)
        self._tasks[task_id] = _IntentTask(match, ref, now_ms)

    def on_event(self, event: Any, current: VenusTurn | None) -> RequestOutcome:
        """A result, failure, cancel or confirmation request of one of the tasks; `current`: Venus's turn now."""
        self._last = None
        task = self._tasks.pop(event.task_id)
        waiting = not task.acknowledged and current is task.ref and not task.ref.cancelled
        if isinstance(event, ev.ConfirmationRequested):
            # the confirmation is asked at once, as every one is; the turn that waited for it ends quietly
            if waiting:
                task.ref.done.set()
            task.acknowledged = True
            self._tasks[event.task_id] = task
            return RequestOutcome(later=event)
        if isinstance(event, ev.DelegationResult):
            due = self.harness.pending_reminders() if task.match.tool == "list_tasks" else ()
            text = render_result(task.match, event.result, reminders=due)
        elif isinstance(event, ev.DelegationFailed):
            text = render_failure(task.match, event.error)
        else:  # cancelled, by the user, who knows it
            if waiting:
                task.ref.done.set()
            return RequestOutcome()
        return RequestOutcome(say=text, ref=task.ref) if waiting else RequestOutcome(later=LateAnswer(text))

    def acknowledgements(self, now_ms: int, current: VenusTurn | None) -> list[tuple[VenusTurn, str]]:
        """'On it.' for each request slower than `intent_ack_ms` whose turn is still Venus's current one."""
        due: list[tuple[VenusTurn, str]] = []
        for task in self._tasks.values():
            if not task.acknowledged and now_ms - task.started_ms >= self.options.intent_ack_ms:
                task.acknowledged = True
                if current is task.ref and not task.ref.cancelled:
                    due.append((task.ref, acknowledgement(task.match)))
        return due
