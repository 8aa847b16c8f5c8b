"""The turn-taking state machine: who has the floor, driven one event, command or tick at a time.

It keeps the conversation's state (listening, user speaking, thinking, speaking, yielding) and decides: when the
user's turn is over and what answers it (a reply to Venus's question, a look through the camera, a recognised
request, the LLM), what speech over Venus means (through the `OverlapTracker`'s steps), and when a background
result is said. It runs on the runtime's loop thread only; `Runtime` owns the thread, the inbox and the public
API.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from engine.intents import IntentMatch, IntentMatcher
from engine.llm.conversation import tool_calls_enabled
from engine.runtime.addressee_probe import AddresseeProbe
from engine.runtime.assistant_turns import AssistantTurns, VenusTurn
from engine.runtime.cpu_share import CpuShare
from engine.runtime.cues import nothing_wanted_reply, only_stop, social_formula, social_reply, split_words
from engine.runtime.deliveries import Deliveries
from engine.runtime.local_requests import LocalRequests
from engine.runtime.mouth import Mouth
from engine.runtime.open_question import OpenQuestion
from engine.runtime.options import RuntimeOptions
from engine.runtime.overlap import OverlapPolicy
from engine.runtime.overlap_tracker import OverlapAction, OverlapStep, OverlapTracker, TrackedOverlap
from engine.runtime.scene import Scene
from engine.runtime.turn_probe import TurnProbe
from engine.runtime.turn_taking import EndOfTurnDetector
from engine.runtime.user_turn import TurnEnd, UserTurn
from engine.settings import Settings
from engine.timeline import events as ev
from engine.timeline.timeline import Timeline
from engine.tts.normalize import speakable

log = logging.getLogger(__name__)

State = ev.RuntimeStateName

# Questions about what the camera sees are answered by looking, not by the language model guessing.
_VISUAL_QUESTION = re.compile(
    r"\bwhat (does|do) (this|that|it|the \w+) say\b|\bread (this|that|it)\b|\bwhat am i holding\b"
    r"|\bwhat (do|can) you see\b|\bcan you see (me|this|that|it)\b|\blook at (this|that|me)\b",
    re.IGNORECASE)


class StateMachine:
    """Venus's turn-taking: the user's turns, Venus's turns, overlaps, interruptions and proactive delivery."""

    def __init__(self, timeline: Timeline, conversation: Any, mouth: Mouth, *, harness: Any, vision: Any,
                 settings: Settings, end_of_turn: EndOfTurnDetector, overlap: OverlapPolicy,
                 options: RuntimeOptions, intents: IntentMatcher | None) -> None:
        self.timeline = timeline
        self.mouth = mouth
        self.harness = harness  # harness.Harness, reached only through submit/cancel/answers
        self.settings = settings
        self.end_of_turn = end_of_turn
        self.options = options
        self._requests = LocalRequests(timeline, harness, options, intents)
        self._requests.assistant_name = settings.conversation.assistant_name
        self.state = State.LISTENING
        self.muted = False
        self._user = UserTurn()  # the user's current turn
        self._scene = Scene(settings)
        self._scene.tool_request = self._tool_request
        self._speaking_since = -1  # when Venus's current answer began to play
        self._claimed_floor = False  # the current user turn interrupted Venus (so it is addressed to her)
        self._tracker = OverlapTracker(overlap, options)
        self._cpu = CpuShare(conversation, options)
        self._turns = AssistantTurns(timeline, conversation, mouth, self._cpu, harness=harness, vision=vision,
                                     options=options)
        self._deliveries = Deliveries(options)
        self._reminders_said: dict[str, ev.ReminderFired] = {}  # turn id -> the reminder it says
        self._reminders_retold: set[str] = set()  # reminders said again once after they were cut off
        # the probe reads English (its weights were fitted on English turns): another language decides on silence
        # The probe is asked once the recogniser is done with the words (a pause's decode, or the final): it
        # evaluates the words the partials did not, on every core (one core took 100-190 ms for a final whose
        # words differed from the last partial's, while the turn waited on it).
        self._probe = TurnProbe(conversation, partial(self._turns.on_worker, every_core=True), settings.llm.model) \
            if settings.conversation.end_of_turn_model == "llm" and end_of_turn.options.english_words else None
        # who final words over her voice are said to, as the chat LLM reads them (the overlap policy asks). On a
        # thread of its own, not the LLM control worker: the read must not queue behind a prefill or a held answer
        # (Venus is paused meanwhile); on the backend's thread it runs between two steps of her held answer's decode
        self._addressee_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="venus-addressee")
        self._addressee = AddresseeProbe(conversation, self._read_on_every_core, settings.llm.model) \
            if settings.conversation.end_of_turn_model == "llm" and end_of_turn.options.english_words else None
        if self._addressee is not None and self._addressee.enabled:
            self._scene.addressee_score = self._addressee_score
        self._question = OpenQuestion(timeline, harness, self._turns.heard_text, settings, overlap)
        self._last_activity_ms = 0
        self._person_present: bool | None = None

    def start(self) -> None:
        """Announce the first state, prime the ASR and evaluate the system prompt on the LLM worker."""
        self.timeline.append(ev.RuntimeState(state=self.state))
        self._prime_asr()
        self._turns.warm_up()

    def wait_ready(self, timeout: float) -> bool:
        """Block until the start-up work on the LLM worker is done."""
        return self._turns.wait_ready(timeout)

    def cancel(self) -> None:
        """Drop Venus's turn and stop the decode (closing)."""
        self._turns.cancel()

    def shutdown(self) -> None:
        """Stop the LLM worker and the addressee probe's thread (after the loop has stopped)."""
        self._addressee_thread.shutdown(wait=True, cancel_futures=True)
        self._turns.shutdown()

    @property
    def intents(self) -> IntentMatcher | None:
        """The intent templates that answer everyday requests without the LLM (None: the LLM answers all)."""
        return self._requests.intents

    @property
    def overlap(self) -> TrackedOverlap | None:
        """The overlap being judged, if any."""
        return self._tracker.current

    @property
    def user_turn(self) -> UserTurn:
        """The user's current turn."""
        return self._user

    # ---- on the caller's thread -------------------------------------------------------------------------------

    def hear_level(self, level_db: float) -> None:
        """A mic level block (perception thread): only stores a number."""
        self._tracker.hear_level(self._now(), level_db, user_speaking=self._user.segment_open)

    def hear_now(self, event: ev.Event) -> None:
        """What cannot wait for the inbox (on the thread that appended `event`): the clause Venus speaks, and at
        a user speech onset the ASR's core back and the voice ducked."""
        if isinstance(event, ev.SpeechSpan):
            self._scene.speaking_clause = (event.turn_id, event.planned_text)  # for the overlap policy, no rescans
        if isinstance(event, ev.UserSpeechStart):
            self._cpu.lend_cores(False)  # the ASR needs its core back at once
            if not self.muted and self.mouth.speaking:
                self.mouth.duck()

    def recover(self) -> None:
        """A step failed (logged and noticed by the loop): back to listening."""
        self._to(State.LISTENING)

    # ---- on the loop's thread ---------------------------------------------------------------------------------

    def _prime_asr(self) -> None:
        set_hint = getattr(self.mouth, "set_overlap_hint", None)
        if set_hint is not None:
            set_hint(self._scene.asr_hint())

    def _prefill_partial(self, *, at_pause: bool = False) -> None:
        # The user's words so far go into the model's cache while they speak (on the LLM worker, latest
        # partial only), so the answer does not start by evaluating them.
        # Words decoded at a pause (`at_pause`) are the segment's final if the pause holds: the recogniser is
        # idle then, so the model evaluates them on every core, and it judges at once whether they end the turn
        # (the probe), rather than once the VAD has closed the segment (~100 ms later): the turn then ends as
        # soon as its silence is long enough.
        if self._turns.current is not None or self._tracker.current is not None or not self._user.partial.strip():
            return
        ahead = at_pause and self._probe is not None
        self._turns.prefill(self._user.partial, every_core=ahead)
        if ahead:
            self._probe.lookup(self._user.text_with(self._user.partial))

    def _to(self, state: State) -> None:
        if state != self.state:
            previous, self.state = self.state, state
            if state == State.SPEAKING:
                self._speaking_since = self._now()
            self.timeline.append(ev.RuntimeState(state=state, previous=previous))

    def _now(self) -> int:
        return self.timeline.now_ms()

    # ---- events ---------------------------------------------------------------------------------------------

    def handle(self, event: ev.Event) -> None:
        """One timeline event from the inbox."""
        if isinstance(event, ev.UserSpeechStart):
            self._on_speech_start(event)
        elif isinstance(event, ev.AsrPartial):
            if not self._tracker.hear_partial(event) and not self.muted \
                    and not self._tracker.superseded(event.segment_start_ms):
                self._user.partial = event.text
                self._prefill_partial(at_pause=event.at_pause)
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
        elif isinstance(event, ev.Interruption):
            self._on_interruption(event)
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
        if self.muted:
            return
        self._last_activity_ms = self._now()
        if self._venus_has_floor():
            turn_id = self._turns.current.turn_id if self._turns.current is not None else ""
            if self._tracker.begin(event.start_ms, turn_id):
                self._share_cpu()
            return
        if self.state == State.THINKING and self._turns.active:
            # the user went on talking before Venus said anything: drop the answer, keep listening
            self._interrupt("the user kept talking before the answer started")
        self._user.segment_open = True
        self._user.silence_since = None
        self._to(State.USER_SPEAKING)

    def _on_speech_end(self, event: ev.UserSpeechEnd) -> None:
        if self.muted:
            return
        self._last_activity_ms = self._now()
        overlap = self._tracker.end_segment(event.start_ms, event.end_ms)
        if overlap is not None:
            if overlap.stopped:  # it was an interruption: the segment is the user's turn
                self._user.segment_ended(self._quiet_from(event))
            elif overlap.held:  # how long it lasted is itself a cue (a short "yeah"): re-judge without waiting
                self._judge_overlap(final=False)
            return
        self._user.segment_ended(self._quiet_from(event))

    def _quiet_from(self, event: ev.UserSpeechEnd) -> int:
        # The VAD pads a segment's end; the user's silence began that much earlier.
        return max(event.start_ms, event.end_ms - self.settings.vad.speech_pad_ms)

    def _on_final(self, event: ev.AsrFinal) -> None:
        if self.muted:
            return
        text = event.text.strip()
        if self._tracker.drop_superseded(event.segment_start_ms):
            return
        if self._tracker.hear_final(event):
            self._judge_overlap(final=self._tracker.final_heard)  # not on an earlier segment's final alone
            return
        self._user.awaiting_final = False
        self._turns.drop_prefill()
        if not text:
            if not self._user.texts and not self._user.segment_open and self.state == State.USER_SPEAKING:
                self._to(State.LISTENING)  # a noise or an echo the VAD let through: nothing was said
            return
        self._user.add_final(text, event.alternatives, event.words[-1].probability if event.words else None)
        self._question.note_voice(event.speaker_similarity)

    def _on_typed(self, event: ev.UserText) -> None:
        if self._turns.active or self.mouth.speaking:
            self.mouth.stop()
            self._interrupt("the user typed a new message")
        self._user.texts, self._user.partial, self._user.alternatives = [event.text], "", ()
        self._question.turn_voice = None
        self._end_user_turn(typed=True)

    def command(self, command: str, value: Any) -> None:
        """One controller command from the inbox: "stop", "mute" or "ptt" (push-to-talk)."""
        if command == "stop":
            if self._turns.current is not None:
                self._reminders_said.pop(self._turns.current.turn_id, None)  # dismissed: not said again
                self._interrupt(str(value))
                self._to(State.LISTENING)
        elif command == "mute":
            self.muted = bool(value)
            if self.muted:
                user = self._user
                user.segment_open, user.texts, user.partial, user.silence_since = False, [], "", None
                if self.state == State.USER_SPEAKING:
                    self._to(State.LISTENING)
        elif command == "ptt":
            if value:
                if self._turns.active:
                    self._interrupt("push-to-talk pressed")
                self.muted = False
                self._to(State.USER_SPEAKING)
            else:
                self.muted = True
                if self._user.texts or self._user.partial:
                    self._end_user_turn()
                else:
                    self._to(State.LISTENING)

    # ---- timers ---------------------------------------------------------------------------------------------

    def tick(self) -> bool:
        """Check silence, overlap deadlines and delivery gaps; True when there is nothing left to do."""
        now = self._now()
        if self._tracker.unsettled:
            self._judge_overlap(final=False)
        self._share_cpu()
        if self.state in (State.USER_SPEAKING, State.YIELDING) and not self._user.segment_open:
            self._check_end_of_turn(now)
        if self.state == State.THINKING and self.mouth.speaking:
            self._to(State.SPEAKING)
        if self.state in (State.THINKING, State.SPEAKING) and self._turns.finished:
            self._turns.current = None
            self._last_activity_ms = now
            self._to(State.LISTENING)
        for ref, text in self._requests.acknowledgements(now, self._turns.current):
            self._turns.speak(ref, text)
        if self._deliveries and self.state == State.LISTENING and not self._user.segment_open:
            self._maybe_deliver(now)
        return self.state == State.LISTENING \
            and not (self._deliveries and self._deliveries.ready(self._question.task_id, self._question.pending())) \
            and not self._user.segment_open and self._tracker.current is None and not self._requests.unacknowledged

    def _check_end_of_turn(self, now: int) -> None:
        end = self._user.end(now, self.end_of_turn, final_wait_ms=self.options.final_wait_ms,
                             closed=self._closed_turn, probe=self._probe,
                             probe_wait_ms=self.options.end_of_turn_probe_wait_ms,
                             actionable=self._requests.actionable if self.end_of_turn.options.english_words else None)
        if end == TurnEnd.NOTHING_SAID:
            self._to(State.LISTENING)
        elif end == TurnEnd.OVER:
            self._end_user_turn()

    def _tool_request(self, text: str) -> bool:
        # words over Venus's voice that the intents parse as a request for one of her tools (overlap policy)
        match = self._requests.match(text)
        return match is not None and bool(match.tool)

    def _addressee_score(self, text: str) -> float | None:
        return self._addressee.score(text, self.options.addressee_probe_wait_ms / 1000)

    def _read_on_every_core(self, job: Callable[[], None]) -> Any:
        # The read comes at an overlap's final, with Venus paused and her answer's decode held: whisper has nothing
        # to decode, so the model reads on every core (1.6x faster on 2 cores, bench.bench_llm), then goes back to its
        # own thread count for the rest of the answer.
        def run() -> None:
            self._cpu.lend_cores(True)
            try:
                job()
            finally:
                self._cpu.lend_cores(False)

        return self._addressee_thread.submit(run)

    def _closed_turn(self, text: str) -> bool:
        # A turn that cannot grow needs no long pause: a whole request ("what time is it?"), a reply to the
        # yes/no question Venus asked ("No."), or a greeting, thanks or goodbye ("Hi", "How are you?")
        return self._requests.closed(text) or self._question.replied(text) \
            or (self.end_of_turn.options.english_words
                and social_formula(text, self.settings.conversation.assistant_name))

    # ---- overlaps -------------------------------------------------------------------------------------------

    def _judge_overlap(self, *, final: bool) -> None:
        scene = self._scene.context(self._turns.current.turn_id if self._turns.current is not None else None)
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
            self._user.take_overlap_final(overlap)

    def _share_cpu(self) -> None:
        # Speech over Venus being judged gets the CPU: the answer's decoding waits until the verdict settles.
        ref = self._turns.current
        judged = ref is not None and ref.from_llm and self._tracker.judging
        self._cpu.hold_answer(ref.turn if judged else None)

    def _take_overlap_as_user_turn(self, overlap: TrackedOverlap) -> None:
        self._to(State.YIELDING)
        self._user.take_overlap(overlap)
        self._question.note_voice(overlap.similarity)

    # ---- Venus's turns --------------------------------------------------------------------------------------

    def _end_user_turn(self, *, typed: bool = False) -> None:
        self._scene.last_request = self._user.text or self._scene.last_request
        readings = self._user.readings
        if self._scene.learn_names(self._user.text):
            self._prime_asr()
        reply = self._answer(self._user.text, typed=typed)
        self._user.clear()
        self._question.turn_voice = None
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
        if _VISUAL_QUESTION.search(self._scene.last_request):
            self._answer_visual(self._scene.last_request)
            return
        match = self._requests.match(self._scene.last_request)
        for reading in readings if match is None else ():  # "Set a tiger for ten minutes" also read as a timer
            if (match := self._requests.match(reading)) is not None:
                log.info("request read from the recogniser's other reading %r", reading)
                break
        if match is not None:
            self._delegate(match)
            return
        if self._requests.dismissed(self._scene.last_request):  # "Set a timer" - "For how long?" - "Never mind."
            self._say("Okay, never mind.")
            return
        self._requests.question_closed()  # a question back ("For how long?") this turn did not answer
        if not typed and self.end_of_turn.options.english_words \
                and only_stop(self._scene.last_request, self.settings.conversation.assistant_name):
            # "Okay, stop." asks for silence, and she has stopped: an answer would talk over what it asked for
            self.timeline.append(ev.ControlDecision(turn_id=VenusTurn(from_llm=False).turn_id,
                                                    action=ev.Action.SILENT))
            self._claimed_floor = False
            self._to(State.LISTENING)
            return
        if self.end_of_turn.options.english_words and not tool_calls_enabled(self.settings.llm) \
                and (reply := social_reply(self._scene.last_request, self.settings.conversation.assistant_name)
                     or nothing_wanted_reply(self._scene.last_request, self.settings.conversation.assistant_name)):
            self._claimed_floor = False  # "Hi" - "Hi! What can I do for you?": said, not left to a tiny model
            self._say(reply)
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
        if self.harness is None or not text.strip():
            return None
        match = self._requests.match(text)
        # a request the intents know is a request, even one that starts with "okay"; but "cancel that" with a
        # question open answers the question, it does not end the last timer
        if match is not None and not (match.intent == "cancel_last" and self._question.open):
            return None
        return self._question.answer(text, typed=typed)

    def _respond(self, actions: Sequence[ev.Action] | None = None) -> None:
        ref = self._turns.current = VenusTurn(from_llm=True)
        self._to(State.THINKING)
        if not self._user.segment_open:
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
            return
        self._say(delivery.text, asking=delivery.asking)
        if delivery.reminder is not None and self._turns.current is not None:
            self._reminders_said[self._turns.current.turn_id] = delivery.reminder
            while len(self._reminders_said) > 8:  # only a reminder just said can be cut off: keep the last few
                self._reminders_said.pop(next(iter(self._reminders_said)))

    def _on_interruption(self, event: ev.Interruption) -> None:
        # A reminder the user cut off by speaking or typing before its words were heard ("Excuse me, a reminder: |
        # scratch", cut by "What time is it?") is said again at the next gap, once: the user asked for it and never
        # heard it. The stop button dismisses it.
        reminder = self._reminders_said.pop(event.turn_id, None)
        if reminder is None or reminder.reminder_id in self._reminders_retold:
            return
        heard = set(split_words(event.heard_text))  # the voice reports the words as spoken ("2" as "two")
        if not (set(split_words(reminder.text)) <= heard or set(split_words(speakable(reminder.text))) <= heard):
            self._reminders_retold.add(reminder.reminder_id)
            self._deliveries.add(reminder)
