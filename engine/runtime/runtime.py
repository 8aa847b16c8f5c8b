"""The foreground loop: an explicit turn-taking state machine driven by timeline events.

Perception, the LLM, the voice and the harness all write to the timeline; the runtime reads it (through a
queue, so no producer ever waits for it), keeps the conversation's state (listening, user speaking, thinking,
speaking, yielding) and decides who has the floor. Urgent control never queues: a user speech onset while
Venus talks ducks the voice on the perception thread itself, and `stop_talking` silences it on the caller's
thread before any bookkeeping.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
from collections.abc import Sequence
from typing import Any

from engine.intents import IntentMatch, IntentMatcher
from engine.runtime.addressee import names_mentioned, overlap_hint
from engine.runtime.assistant_turns import AssistantTurns, VenusTurn
from engine.runtime.cpu_share import CpuShare
from engine.runtime.deliveries import Deliveries
from engine.runtime.local_requests import LocalRequests
from engine.runtime.mouth import Mouth
from engine.runtime.open_question import OpenQuestion
from engine.runtime.options import RuntimeOptions
from engine.runtime.overlap import ConversationContext, OverlapOptions, OverlapPolicy
from engine.runtime.overlap_tracker import OverlapAction, OverlapStep, OverlapTracker, TrackedOverlap
from engine.runtime.turn_taking import EndOfTurnDetector, EndOfTurnOptions
from engine.settings import Settings
from engine.timeline import events as ev
from engine.timeline.timeline import Timeline

log = logging.getLogger(__name__)

State = ev.RuntimeStateName
_WATCHED = {
    ev.Kind.USER_SPEECH_START, ev.Kind.USER_SPEECH_END, ev.Kind.ASR_PARTIAL, ev.Kind.ASR_FINAL, ev.Kind.USER_TEXT,
    ev.Kind.VIDEO_OBSERVATION, ev.Kind.DELEGATION_RESULT, ev.Kind.DELEGATION_FAILED, ev.Kind.REMINDER_FIRED,
    ev.Kind.CONFIRMATION_REQUESTED, ev.Kind.DELEGATION_CANCELLED,
}


# Questions about what the camera sees are answered by looking, not by the language model guessing.
_VISUAL_QUESTION = re.compile(
    r"\bwhat (does|do) (this|that|it|the \w+) say\b|\bread (this|that|it)\b|\bwhat am i holding\b"
    r"|\bwhat (do|can) you see\b|\bcan you see (me|this|that|it)\b|\blook at (this|that|me)\b",
    re.IGNORECASE)


class Runtime:
    """Venus's foreground loop: turn-taking, overlaps, interruptions and proactive delivery."""

    def __init__(
        self,
        timeline: Timeline,
        conversation: Any,  # engine.llm.Conversation
        mouth: Mouth,
        *,
        harness: Any = None,  # harness.Harness, reached only through submit/cancel/answers
        settings: Settings | None = None,
        end_of_turn: EndOfTurnDetector | None = None,
        overlap: OverlapPolicy | None = None,
        vision: Any = None,  # engine.vision.VisionService, optional
        options: RuntimeOptions | None = None,
        intents: IntentMatcher | None = None,  # default: the English templates when there is a harness
    ) -> None:
        self.timeline = timeline
        self.conversation = conversation
        self.mouth = mouth
        self.harness = harness
        self.vision = vision
        self.settings = settings or Settings()
        conv = self.settings.conversation
        self.end_of_turn = end_of_turn or EndOfTurnDetector(
            options=EndOfTurnOptions.from_base_silence(conv.end_of_turn_silence_ms))
        self.overlap = overlap or OverlapPolicy(OverlapOptions(sensitivity=conv.duplex_sensitivity))
        self.options = options or RuntimeOptions()
        self._requests = LocalRequests(timeline, harness, self.options, intents)
        self.state = State.LISTENING
        self._inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._closing = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        # the user's current turn
        self._user_text: list[str] = []
        # the recogniser's other readings of the turn's last segment (for the local intents, when its best reading
        # is not a request they know)
        self._alternatives: tuple[str, ...] = ()
        self._partial = ""
        self._segment_open = False
        self._silence_since: int | None = None
        self._awaiting_final = False
        self._last_request = ""  # the user's last turn: the topic Venus is talking about
        # people around the user: from settings, and named in what the user said ("my wife Anna")
        self._other_names: list[str] = [n.strip() for n in conv.household_names if n.strip()]
        self._speaking_since = -1  # when Venus's current answer began to play
        self._claimed_floor = False  # the current user turn interrupted Venus (so it is addressed to her)
        self._speaking_clause: tuple[str, str] = ("", "")  # (turn id, text) of the last clause Venus spoke
        self._tracker = OverlapTracker(self.overlap, self.options)
        self._cpu = CpuShare(conversation, self.options)
        self._turns = AssistantTurns(timeline, conversation, mouth, self._cpu, harness=harness, vision=vision,
                                     options=self.options)
        self._resume_at: int | None = None
        self._deliveries = Deliveries(self.options)
        self._question = OpenQuestion(timeline, harness, self._turns.heard_text, self.settings, self.overlap)
        self._last_activity_ms = 0
        self._person_present: bool | None = None
        self._muted = False
        self._last_word_p: float | None = None  # whisper's probability of the last word of the user's last final
        self._unsubscribe = timeline.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._loop, name="venus-runtime", daemon=True)

    # ---- life cycle ------------------------------------------------------------------------------------------

    def start(self) -> Runtime:
        """Start the loop thread; returns self."""
        self.timeline.append(ev.RuntimeState(state=self.state))
        self._prime_asr()
        self._turns.warm_up()
        self._thread.start()
        return self

    def wait_ready(self, timeout: float = 120.0) -> bool:
        """Block until the start-up work on the LLM worker (the system prompt's evaluation) is done."""
        return self._turns.wait_ready(timeout)

    def _prime_asr(self) -> None:
        set_hint = getattr(self.mouth, "set_overlap_hint", None)
        if set_hint is not None:
            set_hint(overlap_hint(self._other_names, self.settings.conversation.assistant_name))

    def _learn_names(self, text: str) -> None:
        known = {n.lower() for n in self._other_names}
        new = [n for n in names_mentioned(text) if n.lower() not in known
               and n.lower() != self.settings.conversation.assistant_name.lower()]
        if new:
            self._other_names.extend(new)
            self._prime_asr()

    def _prefill_partial(self) -> None:
        # The user's words so far go into the model's cache while they speak (on the LLM worker, latest
        # partial only), so the answer does not start by evaluating them.
        if self._turns.current is None and self._tracker.current is None and self._partial.strip():
            self._turns.prefill(self._partial)

    def close(self) -> None:
        """Stop talking, stop the loop and detach from the timeline."""
        self._unsubscribe()
        self.mouth.stop()
        self._turns.cancel()
        self._closing.set()
        self._thread.join(timeout=5)
        self._turns.shutdown()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until Venus is listening with nothing to say or deliver (for chat and tests)."""
        return self._idle.wait(timeout)

    # ---- the controller API (UI, terminal chat); each call is safe from any thread -----------------------------

    def send_text(self, text: str) -> None:
        """The user typed `text`: it goes on the timeline and gets an answer."""
        if text.strip():
            self._idle.clear()
            self.timeline.append(ev.UserText(text=text.strip()))

    def stop_talking(self) -> None:
        """Silence Venus now (on this thread) and cut its turn to what was heard."""
        self.mouth.stop()
        self._post("stop", "the user pressed stop")

    def set_muted(self, muted: bool) -> None:
        """Stop (or resume) treating microphone speech as input."""
        self._post("mute", muted)

    def push_to_talk(self, pressed: bool) -> None:
        """Key down: listen (and yield the floor); key up: the user's turn is over."""
        if pressed:
            self.mouth.stop()
        self._post("ptt", pressed)

    def cancel_task(self, task_id: str) -> None:
        """Cancel a background task."""
        if self.harness is not None:
            self.harness.cancel(task_id)

    def answer_confirmation(self, task_id: str, approved: bool) -> None:
        """Approve or deny an 'ask' tool call from the UI."""
        if self.harness is not None:
            self.harness.answer_confirmation(task_id, approved, source="ui")

    def set_camera(self, enabled: bool) -> None:
        """Turn the camera on or off."""
        if self.vision is not None:
            (self.vision.start if enabled else self.vision.stop)()

    def on_level(self, level_db: float) -> None:
        """Mic level callback from the speech pipeline (perception thread): only stores a number."""
        self._tracker.hear_level(self._now(), level_db, user_speaking=self._segment_open)

    @property
    def _overlap(self) -> TrackedOverlap | None:
        # the overlap being judged (tests wait on its state)
        return self._tracker.current

    @property
    def intents(self) -> IntentMatcher | None:
        """The intent templates that answer everyday requests without the LLM (None: the LLM answers all)."""
        return self._requests.intents

    # ---- plumbing -------------------------------------------------------------------------------------------

    def _post(self, command: str, value: Any) -> None:
        self._idle.clear()
        self._inbox.put((command, value))

    def _on_event(self, event: ev.Event) -> None:
        # Runs on whichever thread appended the event: enqueue only, except the urgent duck.
        if isinstance(event, ev.SpeechSpan):
            self._speaking_clause = (event.turn_id, event.planned_text)  # for the overlap policy, no rescans
        if event.kind not in _WATCHED:
            return
        if isinstance(event, ev.UserSpeechStart):
            self._cpu.lend_cores(False)  # the ASR needs its core back at once
            if not self._muted and self.mouth.speaking:
                self.mouth.duck()
        if not isinstance(event, ev.VideoObservation):
            self._idle.clear()
        self._inbox.put(("event", event))

    def _loop(self) -> None:
        tick = self.options.tick_ms / 1000
        while not self._closing.is_set():
            try:
                command, value = self._inbox.get(timeout=tick)
            except queue.Empty:
                command, value = "", None
            try:
                if command == "event":
                    self._handle(value)
                elif command:
                    self._command(command, value)
                self._tick()
            except Exception:  # the loop must survive any single failure; it is logged and noticed
                log.exception("runtime step failed")
                self.timeline.append(ev.SystemNotice(level="error", code="runtime-error",
                                                     text="Venus hit an internal error and recovered; see the log."))
                self._to(State.LISTENING)

    def _to(self, state: State) -> None:
        if state != self.state:
            previous, self.state = self.state, state
            if state == State.SPEAKING:
                self._speaking_since = self._now()
            self.timeline.append(ev.RuntimeState(state=state, previous=previous))

    def _now(self) -> int:
        return self.timeline.now_ms()

    # ---- events ---------------------------------------------------------------------------------------------

    def _handle(self, event: ev.Event) -> None:
        if isinstance(event, ev.UserSpeechStart):
            self._on_speech_start(event)
        elif isinstance(event, ev.AsrPartial):
            if not self._tracker.hear_partial(event) and not self._muted \
                    and not self._tracker.superseded(event.segment_start_ms):
                self._partial = event.text
                self._prefill_partial()
        elif isinstance(event, ev.UserSpeechEnd):
            self._on_speech_end(event)
        elif isinstance(event, ev.AsrFinal):
            self._on_final(event)
        elif isinstance(event, ev.UserText):
            self._on_typed(event)
        elif isinstance(event, ev.VideoObservation):
            if event.person_present is not None:
                self._person_present = event.person_present
            if event.facing_screen is not None:
                self._tracker.facing_screen = event.facing_screen
        elif getattr(event, "task_id", None) in self._requests:
            outcome = self._requests.on_event(event, self._turns.current)
            if outcome.later is not None:
                self._deliveries.add(outcome.later)
            elif outcome.say is not None:
                self._turns.speak(outcome.ref, outcome.say, reason="intent")
        elif not isinstance(event, ev.DelegationCancelled):  # a cancel is the user's own doing: nothing to say
            # results, failures, reminders and confirmation requests wait for a natural gap
            self._deliveries.add(event)

    def _venus_has_floor(self) -> bool:
        # between two clauses nothing may be playing, but the floor is still Venus's
        return self._turns.active and (self.state == State.SPEAKING or self.mouth.speaking)

    def _on_speech_start(self, event: ev.UserSpeechStart) -> None:
        if self._muted:
            return
        self._last_activity_ms = self._now()
        if self._venus_has_floor():
            if self._tracker.begin(event.start_ms, self._turns.current.turn_id if self._turns.current is not None else ""):
                self._share_cpu()
            return
        if self.state == State.THINKING and self._turns.active:
            # the user went on talking before Venus said anything: drop the answer, keep listening
            self._interrupt("the user kept talking before the answer started")
        self._resume_at = None
        self._segment_open = True
        self._silence_since = None
        self._to(State.USER_SPEAKING)

    def _on_speech_end(self, event: ev.UserSpeechEnd) -> None:
        if self._muted:
            return
        self._last_activity_ms = self._now()
        overlap = self._tracker.end_segment(event.start_ms, event.end_ms)
        if overlap is not None:
            if overlap.stopped:  # it was an interruption: the segment is the user's turn
                self._segment_open, self._silence_since, self._awaiting_final = False, self._quiet_from(event), True
            elif overlap.held:  # how long it lasted is itself a cue (a short "yeah"): re-judge without waiting
                self._judge_overlap(final=False)
            return
        self._segment_open = False
        self._silence_since = self._quiet_from(event)
        self._awaiting_final = True

    def _quiet_from(self, event: ev.UserSpeechEnd) -> int:
        # The VAD pads a segment's end; the user's silence began that much earlier.
        return max(event.start_ms, event.end_ms - self.settings.vad.speech_pad_ms)

    def _on_final(self, event: ev.AsrFinal) -> None:
        if self._muted:
            return
        text = event.text.strip()
        if self._tracker.drop_superseded(event.segment_start_ms):
            return
        if self._tracker.hear_final(event):
            self._judge_overlap(final=True)
            return
        self._awaiting_final = False
        self._turns.drop_prefill()
        if not text:
            if not self._user_text and not self._segment_open and self.state == State.USER_SPEAKING:
                self._to(State.LISTENING)  # a noise or an echo the VAD let through: nothing was said
            return
        self._user_text.append(text)
        self._alternatives = event.alternatives
        self._last_word_p = event.words[-1].probability if event.words else None
        self._question.note_voice(event.speaker_similarity)

    def _on_typed(self, event: ev.UserText) -> None:
        if self._turns.active or self.mouth.speaking:
            self.mouth.stop()
            self._interrupt("the user typed a new message")
        self._user_text, self._partial, self._alternatives = [event.text], "", ()
        self._question.turn_voice = None
        self._end_user_turn(typed=True)

    def _command(self, command: str, value: Any) -> None:
        if command == "stop":
            if self._turns.current is not None:
                self._interrupt(str(value))
                self._to(State.LISTENING)
        elif command == "mute":
            self._muted = bool(value)
            if self._muted:
                self._segment_open, self._user_text, self._partial, self._silence_since = False, [], "", None
                if self.state == State.USER_SPEAKING:
                    self._to(State.LISTENING)
        elif command == "ptt":
            if value:
                if self._turns.active:
                    self._interrupt("push-to-talk pressed")
                self._muted = False
                self._to(State.USER_SPEAKING)
            else:
                self._muted = True
                if self._user_text or self._partial:
                    self._end_user_turn()
                else:
                    self._to(State.LISTENING)

    # ---- timers ---------------------------------------------------------------------------------------------

    def _tick(self) -> None:
        now = self._now()
        if self._tracker.unsettled:
            self._judge_overlap(final=False)
        self._share_cpu()
        if self.state in (State.USER_SPEAKING, State.YIELDING) and not self._segment_open:
            self._check_end_of_turn(now)
        if self.state == State.THINKING and self.mouth.speaking:
            self._to(State.SPEAKING)
        if self.state in (State.THINKING, State.SPEAKING) and self._turns.finished:
            self._turns.current = None
            self._last_activity_ms = now
            self._to(State.LISTENING)
        if self._resume_at is not None and now >= self._resume_at and self.state == State.LISTENING \
                and not self._segment_open:
            self._resume_at = None
            self._respond(actions=(ev.Action.RESUME, ev.Action.RESPOND))
        for ref, text in self._requests.acknowledgements(now, self._turns.current):
            self._turns.speak(ref, text)
        if self._deliveries and self.state == State.LISTENING and not self._segment_open:
            self._maybe_deliver(now)
        if self.state == State.LISTENING and self._resume_at is None \
                and not (self._deliveries and self._deliveries.ready(self._question.task_id, self._question.pending())) \
                and not self._segment_open and self._tracker.current is None and self._inbox.empty() \
                and not self._requests.unacknowledged:
            self._idle.set()

    def _check_end_of_turn(self, now: int) -> None:
        if self._silence_since is None:
            return
        silence = now - self._silence_since
        if silence < 0:
            return  # the segment's end was reported ahead of the session clock: not silent yet
        text = " ".join(self._user_text) or self._partial
        if not text:
            if silence > self.end_of_turn.options.max_silence_ms and not self._awaiting_final:
                self._to(State.LISTENING)
            return
        if self._awaiting_final and silence < self.options.final_wait_ms:
            return  # the context is the timeline, so the answer waits for the final words
        final = not self._awaiting_final
        last_p = self._last_word_p if final and self._user_text else None
        verdict = self.end_of_turn.decide(silence, text, is_final=final, last_word_probability=last_p)
        if verdict.end_of_turn or (final and silence >= self.end_of_turn.options.min_silence_ms
                                   and self._requests.closed(text)):
            self._end_user_turn()

    # ---- overlaps -------------------------------------------------------------------------------------------

    def _judge_overlap(self, *, final: bool) -> None:
        conv = self.settings.conversation
        turn_id, clause = self._speaking_clause
        speaking = clause if self._turns.current is not None and turn_id == self._turns.current.turn_id else ""
        scene = ConversationContext(assistant_name=conv.assistant_name, speaking_text=speaking,
                                    user_name=conv.user_name, topic_text=self._last_request,
                                    other_names=tuple(self._other_names))
        started = self._speaking_since if self._speaking_since >= 0 and self.state == State.SPEAKING else None
        for step in self._tracker.judge(self._now(), scene, final=final, answer_started_ms=started):
            self._apply(step)

    def _apply(self, step: OverlapStep) -> None:
        """Carry out one step of the overlap tracker's, on the voice, Venus's turn and the user's turn."""
        overlap = step.overlap
        if step.action == OverlapAction.RECORD:
            self.timeline.append(step.decision)
        elif step.action == OverlapAction.KEEP:
            self.mouth.resume()
            self.mouth.unduck()
        elif step.action == OverlapAction.RELEASE:
            self.mouth.unduck()
        elif step.action == OverlapAction.PAUSE:
            self.mouth.pause()
        elif step.action == OverlapAction.STOP:
            self._claimed_floor = True  # the user took the floor: what they say next gets an answer
            self._interrupt(step.reason)
            self._take_overlap_as_user_turn(overlap)
        elif step.action == OverlapAction.TAKE_FINAL:
            if overlap.final and overlap.final not in self._user_text:
                self._user_text.append(overlap.final)
                self._alternatives = ()  # its readings were not kept
                self._last_word_p = overlap.last_word_p
            self._awaiting_final = False
        elif step.action == OverlapAction.RESUME:
            self.timeline.append(ev.SystemNotice(code="false-interruption",
                                                 text="That was not meant for me; I'll go on."))
            self._user_text = [t for t in self._user_text if t != overlap.final]
            self._segment_open, self._silence_since, self._awaiting_final = False, None, False
            self._to(State.LISTENING)
            self._resume_at = self._now() + self.options.resume_gap_ms

    def _share_cpu(self) -> None:
        # Speech over Venus being judged gets the CPU: the answer's decoding waits until the verdict settles.
        ref = self._turns.current
        judged = ref is not None and ref.from_llm and self._tracker.judging
        self._cpu.hold_answer(ref.turn if judged else None)

    def _take_overlap_as_user_turn(self, overlap: TrackedOverlap) -> None:
        self._to(State.YIELDING)
        self._segment_open = overlap.speech_active
        self._silence_since = None if overlap.speech_active else overlap.ended_ms
        self._awaiting_final = overlap.final is None
        if overlap.final:
            self._user_text.append(overlap.final)
            self._alternatives = ()  # its readings were not kept
            self._last_word_p = overlap.last_word_p
        self._question.note_voice(overlap.similarity)

    # ---- Venus's turns --------------------------------------------------------------------------------------

    def _end_user_turn(self, *, typed: bool = False) -> None:
        self._last_request = " ".join(self._user_text) or self._last_request
        readings = [" ".join([*self._user_text[:-1], other]) for other in self._alternatives] if self._user_text else []
        self._alternatives = ()
        self._learn_names(" ".join(self._user_text))
        reply = self._answer(" ".join(self._user_text), typed=typed)
        self._user_text, self._partial, self._silence_since = [], "", None
        self._last_word_p, self._question.turn_voice = None, None
        self._awaiting_final, self._segment_open = False, False
        if reply == "unclear":
            self._say(f"Sorry, was that a yes or a no? {self._question.again()}", asking=self._question.task_id)
            return
        if reply == "not-you":
            self._say("That didn't sound like your voice, so I haven't done it. Say it again, or press Approve.")
            return
        if reply is not None and self.options.acknowledge_replies:
            self._say({"yes": "Okay, going ahead.", "no": "Okay, I won't.", "cancel": "Okay, I've stopped it."}
                      .get(reply, "Okay."))
            return
        if _VISUAL_QUESTION.search(self._last_request):
            self._answer_visual(self._last_request)
            return
        match = self._requests.match(self._last_request)
        for reading in readings if match is None else ():  # "Set a tiger for ten minutes" also read as a timer
            if (match := self._requests.match(reading)) is not None:
                log.info("request read from the recogniser's other reading %r", reading)
                break
        if match is not None:
            self._delegate(match)
            return
        # Typed text and a turn that interrupted Venus are meant for her; other speech may be for someone
        # else, so there silence stays possible.
        addressed = typed or self._claimed_floor
        self._claimed_floor = False
        self._respond(actions=(ev.Action.RESPOND, ev.Action.DELEGATE, ev.Action.RESUME) if addressed else None)

    # ---- answers to Venus's questions ----------------------------------------------------------------------

    @property
    def awaiting_answer(self) -> bool:
        """Venus asked a yes/no question that is still open: the voice of what the user says next matters."""
        return self._question.open

    def _answer(self, text: str, *, typed: bool) -> str | None:
        """The turn as an answer to a pending question or a cancel: "yes", "no", "cancel", "unclear", "not-you",
        or None when it is neither (a request, or conversation, which the turn goes on to handle)."""
        if self.harness is None or not text.strip() or self._requests.match(text) is not None:
            return None  # a request the intents know is a request, even one that starts with "okay"
        return self._question.answer(text, typed=typed)

    def _respond(self, actions: Sequence[ev.Action] | None = None) -> None:
        ref = self._turns.current = VenusTurn(from_llm=True)
        self._to(State.THINKING)
        if not self._segment_open:
            self._cpu.lend_cores(True)
        self._turns.respond(ref, actions)

    def _say(self, text: str, asking: str | None = None) -> None:
        """Speak a fixed sentence (reminders, acknowledgements); it joins the context as an assistant turn.

        `asking`: the task whose yes/no question this sentence asks; a spoken answer counts once it was heard.
        """
        ref = VenusTurn(from_llm=False)
        if asking is not None:
            self._question.asked(asking, ref.turn_id, text)
        self.timeline.append(ev.ControlDecision(turn_id=ref.turn_id, action=ev.Action.RESPOND))
        self._turns.current = ref
        self._to(State.THINKING)
        self._turns.speak(ref, text)

    # ---- recognised requests (engine.intents) ----------------------------------------------------------------

    def _delegate(self, match: IntentMatch) -> None:
        """Run a recognised request's tool now; its result is spoken when it comes (or 'On it.' first)."""
        refusal = self._requests.refusal(match)
        if refusal is not None:
            self._say(refusal)
            return
        ref = VenusTurn(from_llm=False)
        self.timeline.append(ev.ControlDecision(turn_id=ref.turn_id, action=ev.Action.DELEGATE, tool=match.tool,
                                                arguments=dict(match.arguments)))
        self._turns.current = ref
        self._to(State.THINKING)
        self._requests.submit(match, ref, self._now())

    def _answer_visual(self, question: str) -> None:
        """'What does this say?': look now and say what was seen (AssistantTurns.look)."""
        ref = self._turns.current = VenusTurn(from_llm=False)
        self._to(State.THINKING)
        self._turns.look(ref, question)

    def _interrupt(self, reason: str) -> None:
        """Stop speaking now; the LLM worker then cuts the turn to the words the user heard."""
        self._turns.interrupt(reason)

    # ---- proactive delivery ---------------------------------------------------------------------------------

    def _maybe_deliver(self, now: int) -> None:
        delivery = self._deliveries.next(now, last_activity_ms=self._last_activity_ms, asked=self._question.task_id,
                                         person_present=self._person_present, pending=self._question.pending())
        if delivery is None:
            return
        if delivery.text is None:
            self._respond(actions=(ev.Action.RESPOND,))
        else:
            self._say(delivery.text, asking=delivery.asking)
