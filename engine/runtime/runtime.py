"""The foreground loop: an explicit turn-taking state machine driven by timeline events.

Perception, the LLM, the voice and the harness all write to the timeline; the runtime reads it (through a
queue, so no producer ever waits for it), keeps the conversation's state (listening, user speaking, thinking,
speaking, yielding) and decides who has the floor. Urgent control never queues: a user speech onset while
Venus talks ducks the voice on the perception thread itself, and `stop_talking` silences it on the caller's
thread before any bookkeeping.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import re
import threading
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psutil

from engine.errors import ConfigError
from engine.intents import IntentContext, IntentMatch, IntentMatcher
from engine.intents.responses import acknowledgement, render_failure, render_result
from engine.runtime.addressee import names_mentioned, overlap_hint
from engine.runtime.mouth import Mouth, Utterance
from engine.runtime.overlap import (
    ConversationContext,
    OverlapFeatures,
    OverlapOptions,
    OverlapPolicy,
    OverlapVerdict,
)
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


@dataclass(frozen=True)
class _Answer:
    """The rendered answer to a recognised request whose result came after Venus moved on: said at the next gap."""

    text: str


_URGENT = (ev.ReminderFired, ev.ConfirmationRequested, _Answer)
# Questions about what the camera sees are answered by looking, not by the language model guessing.
_VISUAL_QUESTION = re.compile(
    r"\bwhat (does|do) (this|that|it|the \w+) say\b|\bread (this|that|it)\b|\bwhat am i holding\b"
    r"|\bwhat (do|can) you see\b|\bcan you see (me|this|that|it)\b|\blook at (this|that|me)\b",
    re.IGNORECASE)


@dataclass(frozen=True)
class RuntimeOptions:
    """Timings of the foreground loop."""

    tick_ms: int = 20  # how often silence, overlap deadlines and delivery gaps are checked
    # from the end of the user's turn to Venus's first clause, nothing else needs the CPU (the final is in, the
    # voice waits for words): the LLM decodes with this many threads then (0 = every physical core, 1 = off)
    answer_start_threads: int = 0
    proactive_gap_ms: int = 1500  # quiet this long (user and Venus) before a background result is spoken
    resume_gap_ms: int = 300  # after a false interruption, wait this long before resuming the answer
    # While speech over Venus is judged, pause the answer's decoding (it runs seconds ahead of the voice) so
    # whisper has the CPU: on 2 cores the words, and with them the verdict, come sooner.
    hold_answer_during_overlap: bool = True
    # 50 ms level blocks of overlapping speech before its loudness counts: 250 ms read the user's "Stop," at
    # -22..-26 dB (its long "s" and the closure of the "t"), which resumed Venus for a moment before the words
    min_overlap_level_blocks: int = 8
    early_level_blocks: int = 4  # the level from this many blocks is a hint: quiet so far waits for the rest
    # while Venus is paused on a provisional stop, two agreeing partials resume it only when they hold this many
    # words ("Can you get me?" and "that will be done." were early garbles of interruptions); a name, a
    # level/voice cue or backchannel words resume it at once
    resume_min_words: int = 5
    heard_wait_s: float = 0.5  # after stop(), how long to wait for the cut clause's heard-word report
    final_wait_ms: int = 8000  # a final transcript later than this is given up on (the turn ends without it)
    acknowledge_replies: bool = True  # say "Okay." after a spoken yes / no / cancel aimed at a task
    follow_ms: int = 1500  # speech over Venus this soon after an overlap that did not claim the floor, before
    #   its words are in, is taken for more of the same (no pause at the deadline; its words still decide)
    local_intents: bool = True  # everyday requests go straight to their tool (engine.intents), not to the LLM
    intent_ack_ms: int = 700  # a recognised request whose result takes longer than this is acknowledged first

    def __post_init__(self) -> None:
        if self.tick_ms < 1 or self.proactive_gap_ms < 0 or self.resume_gap_ms < 0 or self.final_wait_ms < 0:
            raise ValueError("RuntimeOptions: tick_ms must be >= 1 and the gaps >= 0")
        if not 1 <= self.early_level_blocks <= self.min_overlap_level_blocks:
            raise ValueError(f"early_level_blocks must be 1..min_overlap_level_blocks, got {self.early_level_blocks}")
        if self.answer_start_threads < 0:
            raise ValueError(f"answer_start_threads must be >= 0, got {self.answer_start_threads}")


class _TurnRef:
    """Venus's turn as the loop sees it: queued, then an LLM turn (or a fixed sentence) being spoken."""

    def __init__(self, turn_id: str, *, from_llm: bool) -> None:
        self.turn_id = turn_id
        self.from_llm = from_llm
        self.turn: Any = None  # the engine.llm AssistantTurn, once started
        self.utterance: Utterance | None = None
        self.cancelled = False
        self.done = threading.Event()  # everything generated and played, or dropped


@dataclass
class _IntentTask:
    """A recognised request delegated to the harness, waiting for its result to be spoken."""

    match: IntentMatch
    ref: _TurnRef
    started_ms: int
    acknowledged: bool = False


@dataclass
class _Overlap:
    """Speech heard while Venus had the floor, being judged."""

    onset_ms: int
    turn_id: str
    words: str = ""
    previous_words: str = ""  # the partial before `words`
    final: str | None = None
    speech_active: bool = True
    ended_ms: int = -1
    verdict: OverlapVerdict | None = None
    stopped: bool = False
    held: bool = False  # Venus is paused in place while a provisional stop is checked against the words
    levels: list[float] = dataclasses.field(default_factory=list)  # mic level blocks since the onset (dBFS)
    reviewed_words: tuple[str, str] = ("", "")  # (previous, current) partial words the last review saw
    level_reviewed: bool = False  # the verdict was re-judged once the overlap's level became measurable
    resume_votes: int = 0  # partials in a row, while held, that said the speech does not claim the floor
    confidence: float | None = None  # whisper's mean word probability in the final transcript
    last_word_p: float | None = None  # and its last word's
    similarity: float | None = None  # to the enrolled user's voice (from the pipeline, 1 s of speech on)


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
        self.intents = intents
        if intents is None and harness is not None and self.options.local_intents:
            try:
                self.intents = IntentMatcher.load()
            except ConfigError as exc:  # missing or broken templates: Venus still talks, the LLM answers all
                log.error("local intents are off: %s", exc)
                timeline.append(ev.SystemNotice(level="warning", code="intents-unavailable", text=(
                    f"Everyday requests go to the language model only: {exc}. {exc.fix or ''}".strip())))
        self._intent_tasks: dict[str, _IntentTask] = {}  # task id -> the request it answers
        self._closed_checked: tuple[str, bool] = ("", False)  # the last text checked by _closed_request
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
        self._asked: str | None = None  # the task whose confirmation Venus asked about last
        self._asked_turn = ""  # the turn that asked it aloud: its heard words tell whether the user heard it
        self._asked_words = 0  # how many words of that turn make the question itself
        self._turn_voice: float | None = None  # lowest similarity to the enrolled voice in this user turn
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
        # Venus's current turn
        self._turn: _TurnRef | None = None  # Venus's current (or starting) turn
        # Every call into the LLM runs on this one worker, in order, so the loop never waits for a model and
        # an interruption's cut always lands before the next answer starts.
        self._llm_jobs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="venus-llm-control")
        self._prefill_lock = threading.Lock()
        self._prefill_text: str | None = None  # the latest partial waiting to be prefilled
        self._overlap: _Overlap | None = None
        self._held_turn: Any = None  # the answer paused while an overlap is judged (see _share_cpu)
        self._side_conversation_until = -1
        self._previous_overlap: tuple[ev.OverlapKind, int] | None = None  # last settled non-stop verdict, its end
        self._superseded: set[int] = set()  # onsets of ended overlaps replaced by a newer one before their final
        self._resume_at: int | None = None
        self._deliveries: deque[Any] = deque()  # timeline events, and _Answer
        self._last_activity_ms = 0
        self._facing: bool | None = None
        self._person_present: bool | None = None
        self._muted = False
        # loudness calibration (dBFS after echo cancellation)
        self._level_now = -100.0
        self._user_levels: deque[float] = deque(maxlen=200)
        self._last_word_p: float | None = None  # whisper's probability of the last word of the user's last final
        # the last 2 s of level blocks with the time each was heard: the VAD reports quiet speech (TV across the
        # room) 300-400 ms after it began, and an overlap's loudness counts the blocks from its onset on
        self._recent_levels: deque[tuple[int, float]] = deque(maxlen=40)
        self._levels_lock = threading.Lock()
        self._unsubscribe = timeline.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._loop, name="venus-runtime", daemon=True)

    # ---- life cycle ------------------------------------------------------------------------------------------

    def start(self) -> Runtime:
        """Start the loop thread; returns self."""
        self.timeline.append(ev.RuntimeState(state=self.state))
        self._prime_asr()
        # Evaluate the system prompt (persona, tools) now, while the user is still speaking, not after.
        self._llm_jobs.submit(self._prefill)
        self._thread.start()
        return self

    def wait_ready(self, timeout: float = 120.0) -> bool:
        """Block until the start-up work on the LLM worker (the system prompt's evaluation) is done."""
        try:
            self._llm_jobs.submit(lambda: None).result(timeout=timeout)
        except TimeoutError:
            return False
        return True

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

    def _prefill(self, partial: bool = False) -> None:
        try:
            if not partial:
                self.conversation.warm_up()
                return
            with self._prefill_lock:
                text, self._prefill_text = self._prefill_text, None
            if text is not None and self._turn is None:
                self.conversation.prefill(text)
        except Exception:  # a failing model shows up again, with its notice, at the first answer
            log.exception("prefilling the context failed")

    def _prefill_partial(self) -> None:
        # The user's words so far go into the model's cache while they speak (on the LLM worker, latest
        # partial only), so the answer does not start by evaluating them.
        if self._turn is not None or self._overlap is not None or not self._partial.strip():
            return
        with self._prefill_lock:
            queued = self._prefill_text is not None
            self._prefill_text = self._partial
        if not queued:
            self._llm_jobs.submit(self._prefill, True)

    def close(self) -> None:
        """Stop talking, stop the loop and detach from the timeline."""
        self._unsubscribe()
        self.mouth.stop()
        if self._turn is not None:
            self._turn.cancelled = True
        self.conversation.cancel()
        self._closing.set()
        self._thread.join(timeout=5)
        self._llm_jobs.shutdown(wait=True, cancel_futures=True)

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
        self._level_now = level_db
        with self._levels_lock:
            self._recent_levels.append((self._now(), level_db))
            overlap = self._overlap
            if overlap is not None and overlap.speech_active:
                overlap.levels.append(level_db)
            elif self._segment_open and overlap is None:
                self._user_levels.append(level_db)

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
            self._lend_cores(False)  # the ASR needs its core back at once
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
            if self._overlap is not None and event.segment_start_ms == self._overlap.onset_ms:
                self._overlap.previous_words, self._overlap.words = self._overlap.words, event.text
                if event.speaker_similarity is not None:
                    self._overlap.similarity = event.speaker_similarity
            elif not self._muted and event.segment_start_ms not in self._superseded:
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
                self._facing = event.facing_screen
        elif getattr(event, "task_id", None) in self._intent_tasks:
            self._on_intent_event(event)
        elif not isinstance(event, ev.DelegationCancelled):  # a cancel is the user's own doing: nothing to say
            # results, failures, reminders and confirmation requests wait for a natural gap
            self._deliveries.append(event)

    def _venus_has_floor(self) -> bool:
        # between two clauses nothing may be playing, but the floor is still Venus's
        return self._turn_active() and (self.state == State.SPEAKING or self.mouth.speaking)

    def _on_speech_start(self, event: ev.UserSpeechStart) -> None:
        if self._muted:
            return
        self._last_activity_ms = self._now()
        if self._venus_has_floor():
            previous = self._overlap
            if previous is not None and not previous.speech_active and not previous.stopped and not previous.held:
                # the last burst is over and did not stop Venus ("mm-hmm", then "wait, stop"): the new one is
                # judged on its own, and the old one's final words, when they come, settle nothing
                self._superseded.add(previous.onset_ms)
                if previous.verdict is not None and not previous.verdict.stop:
                    self._previous_overlap = (previous.verdict.kind, previous.ended_ms)
                previous = self._overlap = None
            if previous is None:
                turn_id = self._turn.turn_id if self._turn is not None else ""
                with self._levels_lock:  # the blocks heard between the onset and the VAD's report count too
                    heard = [db for t, db in self._recent_levels if t > event.start_ms]
                    self._overlap = _Overlap(onset_ms=event.start_ms, turn_id=turn_id, levels=heard)
                self._share_cpu()
            return
        if self.state == State.THINKING and self._turn_active():
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
        overlap = self._overlap
        if overlap is not None and event.start_ms == overlap.onset_ms:
            overlap.speech_active, overlap.ended_ms = False, event.end_ms
            if overlap.stopped:  # it was an interruption: the segment is the user's turn
                self._segment_open, self._silence_since, self._awaiting_final = False, self._quiet_from(event), True
            elif overlap.held:  # how long it lasted is itself a cue (a short "yeah"): re-judge without waiting
                overlap.reviewed_words = ("\0", "\0")
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
        overlap = self._overlap
        if event.segment_start_ms in self._superseded:
            self._superseded.discard(event.segment_start_ms)
            return
        if overlap is not None and event.segment_start_ms == overlap.onset_ms:
            overlap.final = text
            if event.speaker_similarity is not None:
                overlap.similarity = event.speaker_similarity
            if event.words:
                overlap.confidence = sum(w.probability for w in event.words) / len(event.words)
                overlap.last_word_p = event.words[-1].probability
            self._judge_overlap(final=True)
            return
        self._awaiting_final = False
        with self._prefill_lock:
            self._prefill_text = None  # the final is on the timeline now: a queued partial of it is stale
        if not text:
            if not self._user_text and not self._segment_open and self.state == State.USER_SPEAKING:
                self._to(State.LISTENING)  # a noise or an echo the VAD let through: nothing was said
            return
        self._user_text.append(text)
        self._alternatives = event.alternatives
        self._last_word_p = event.words[-1].probability if event.words else None
        self._note_voice(event.speaker_similarity)

    def _on_typed(self, event: ev.UserText) -> None:
        if self._turn_active() or self.mouth.speaking:
            self.mouth.stop()
            self._interrupt("the user typed a new message")
        self._user_text, self._partial, self._alternatives = [event.text], "", ()
        self._turn_voice = None
        self._end_user_turn(typed=True)

    def _command(self, command: str, value: Any) -> None:
        if command == "stop":
            if self._turn is not None:
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
                if self._turn_active():
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
        if self._overlap is not None and (self._overlap.verdict is None or self._overlap.verdict.provisional
                                          or _reviewable(self._overlap.verdict)):
            self._judge_overlap(final=False)
        self._share_cpu()
        if self.state in (State.USER_SPEAKING, State.YIELDING) and not self._segment_open:
            self._check_end_of_turn(now)
        if self.state == State.THINKING and self.mouth.speaking:
            self._to(State.SPEAKING)
        if self.state in (State.THINKING, State.SPEAKING) and self._turn_finished():
            self._turn = None
            self._last_activity_ms = now
            self._to(State.LISTENING)
        if self._resume_at is not None and now >= self._resume_at and self.state == State.LISTENING \
                and not self._segment_open:
            self._resume_at = None
            self._respond(actions=(ev.Action.RESUME, ev.Action.RESPOND))
        if self._intent_tasks:
            self._acknowledge_slow_tasks(now)
        if self._deliveries and self.state == State.LISTENING and not self._segment_open:
            self._maybe_deliver(now)
        if self.state == State.LISTENING and not self._ready_deliveries() and self._resume_at is None \
                and not self._segment_open and self._overlap is None and self._inbox.empty() \
                and not any(not t.acknowledged for t in self._intent_tasks.values()):
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
                                   and self._closed_request(text)):
            self._end_user_turn()

    # ---- overlaps -------------------------------------------------------------------------------------------

    def _context(self) -> ConversationContext:
        conv = self.settings.conversation
        turn_id, clause = self._speaking_clause
        speaking = clause if self._turn is not None and turn_id == self._turn.turn_id else ""
        previous = self._previous_overlap
        follows = previous[0] if previous is not None and self._now() - previous[1] <= self.options.follow_ms else None
        overlap = self._overlap
        answer_age = overlap.onset_ms - self._speaking_since if overlap is not None and self._speaking_since >= 0 \
            and self.state == State.SPEAKING else None
        return ConversationContext(assistant_name=conv.assistant_name, speaking_text=speaking,
                                   user_name=conv.user_name, topic_text=self._last_request,
                                   other_names=tuple(self._other_names), answer_age_ms=answer_age,
                                   side_conversation=self._now() < self._side_conversation_until, follows=follows)

    def _relative_loudness(self, overlap: _Overlap, min_blocks: int | None = None) -> float | None:
        # The overlap's loud part (90th percentile of its blocks) against the loud part of the user's speech:
        # like with like. The user's median block was the reference before, but the user's segments hold
        # pauses and the VAD's padding, so background speech 14-22 dB down measured only 3-10 dB down.
        # About a second of the user calibrates; the overlap needs min_overlap_level_blocks of its own, from its
        # onset (its first blocks are the soft start of a word: the user's "Actually" measured -29 dB there)
        need = self.options.min_overlap_level_blocks if min_blocks is None else min_blocks
        if len(self._user_levels) < 20 or len(overlap.levels) < need:
            return None
        user = sorted(self._user_levels)
        heard = sorted(overlap.levels)
        return heard[int(0.9 * (len(heard) - 1))] - user[int(0.9 * (len(user) - 1))]

    def _judge_overlap(self, *, final: bool) -> None:
        overlap = self._overlap
        assert overlap is not None
        loudness = self._relative_loudness(overlap)
        early = self._relative_loudness(overlap, self.options.early_level_blocks) if loudness is None else None
        features = OverlapFeatures(
            elapsed_ms=max(0, self._now() - overlap.onset_ms), speech_active=overlap.speech_active,
            words=overlap.final if overlap.final is not None else overlap.words, is_final=overlap.final is not None,
            loudness_db=loudness, early_loudness_db=early, facing_screen=self._facing,
            duration_ms=overlap.ended_ms - overlap.onset_ms if overlap.ended_ms >= 0 else None,
            word_confidence=overlap.confidence, speaker_similarity=overlap.similarity,
            previous_words=overlap.previous_words if overlap.final is None else "",
        )
        context = self._context()
        if overlap.verdict is None:
            verdict = self.overlap.decide(features, context)
            if verdict.kind is None:
                if final:  # the segment closed before the policy could tell: it was not a claim on the floor
                    self.mouth.unduck()
                    self._overlap = None
                return
            overlap.verdict = verdict
            self._record(verdict, overlap)
            if verdict.stop and verdict.provisional and not final:
                overlap.held = True  # pause in place until the words confirm or revise it
                self.mouth.pause()
            elif verdict.stop:
                self._yield_to(overlap, f"overlap judged {verdict.kind}: {verdict.reason}")
            else:
                self._keep_talking(verdict)
        if overlap.verdict is None or self._overlap is not overlap:
            return
        if final:
            self._review(overlap, features, context, final=True)
        elif (overlap.verdict.provisional or _reviewable(overlap.verdict)) \
                and (features.words or not features.speech_active) \
                and (features.previous_words, features.words) != overlap.reviewed_words:
            # new partial words (or the same words heard again): a provisional verdict is re-judged
            overlap.reviewed_words = (features.previous_words, features.words)
            self._review(overlap, features, context, final=False)
        elif overlap.verdict.provisional and features.loudness_db is not None and not overlap.level_reviewed:
            overlap.level_reviewed = True  # the overlap's level is measured now: it may show background speech
            self._review(overlap, features, context, final=False)

    def _share_cpu(self) -> None:
        # Speech over Venus being judged gets the CPU: the answer's decoding waits until the verdict settles.
        overlap, ref = self._overlap, self._turn
        judging = overlap is not None and not overlap.stopped and (overlap.verdict is None
                                                                    or overlap.verdict.provisional)
        turn = ref.turn if ref is not None and ref.from_llm else None
        target = turn if judging and self.options.hold_answer_during_overlap else None
        if target is not self._held_turn:
            if self._held_turn is not None:
                self._held_turn.hold(False)
            if target is not None:
                target.hold(True)
            self._held_turn = target

    def _keep_talking(self, verdict: OverlapVerdict) -> None:
        self.mouth.resume()
        self.mouth.unduck()
        self._note_side_conversation(verdict)

    def _note_side_conversation(self, verdict: OverlapVerdict) -> None:
        # A settled "talking to someone else" makes the next few seconds of speech likely more of the same;
        # a provisional one must not, or it would confirm itself when its own final words are judged.
        if verdict.kind == ev.OverlapKind.OTHER_ADDRESSEE and not verdict.provisional:
            self._side_conversation_until = self._now() + 6000

    def _yield_to(self, overlap: _Overlap, reason: str) -> None:
        overlap.held, overlap.stopped = False, True
        self._claimed_floor = True  # the user took the floor: what they say next gets an answer
        self._interrupt(reason)
        self._take_overlap_as_user_turn(overlap)

    def _record(self, verdict: OverlapVerdict, overlap: _Overlap) -> None:
        self.timeline.append(dataclasses.replace(verdict.to_event(), segment_start_ms=overlap.onset_ms))

    def _take_overlap_as_user_turn(self, overlap: _Overlap) -> None:
        self._to(State.YIELDING)
        self._segment_open = overlap.speech_active
        self._silence_since = None if overlap.speech_active else overlap.ended_ms
        self._awaiting_final = overlap.final is None
        if overlap.final:
            self._user_text.append(overlap.final)
            self._alternatives = ()  # its readings were not kept
            self._last_word_p = overlap.last_word_p
        self._note_voice(overlap.similarity)

    def _review(self, overlap: _Overlap, features: OverlapFeatures, context: ConversationContext, *,
                final: bool) -> None:
        if final:
            self._overlap = None
        earlier = overlap.verdict
        assert earlier is not None
        review = self.overlap.review(earlier, features, context)
        if review.kind is None:
            review = earlier
        if overlap.held and not review.stop:
            # Early partials are often garbled ("hold on" heard as "that will not."): while the user still
            # speaks, a held answer goes on only on a name or background cues, or when two partials agree.
            overlap.resume_votes += 1
            # a name, a level/voice cue, or words that are all backchannel ("Oh, wow.") settle it at once
            settled = review.named or review.kind == ev.OverlapKind.BACKGROUND or (
                review.kind == ev.OverlapKind.BACKCHANNEL and review.scores.get("backchannel", 0) >= 0.99)
            agreed = overlap.resume_votes >= 2 and review.scores.get("words", 0) >= self.options.resume_min_words
            if not (final or not features.speech_active or settled or agreed):
                return
        elif overlap.held:
            overlap.resume_votes = 0
        if review.kind != earlier.kind:
            self._record(review, overlap)
        overlap.verdict = review
        if final:
            self._note_side_conversation(review)
            if not review.stop:
                self._previous_overlap = (review.kind, overlap.ended_ms if overlap.ended_ms >= 0 else self._now())
        if overlap.held:
            if review.stop and (final or not review.provisional):
                self._yield_to(overlap, f"overlap judged {review.kind}: {review.reason}")
            elif not review.stop:
                overlap.held = False
                self._keep_talking(review)  # a held answer simply goes on: nothing was lost
            return
        if overlap.stopped:
            if review.stop:
                if final and overlap.final and overlap.final not in self._user_text:
                    self._user_text.append(overlap.final)
                    self._alternatives = ()  # its readings were not kept
                    self._last_word_p = overlap.last_word_p
                if final:  # its final is in, even an empty one ("Venus," alone often decodes to nothing)
                    self._awaiting_final = False
                return
            # a false interruption: nothing needed an answer, so the unfinished answer resumes
            self.timeline.append(ev.SystemNotice(code="false-interruption",
                                                 text="That was not meant for me; I'll go on."))
            self._user_text = [t for t in self._user_text if t != overlap.final]
            self._segment_open, self._silence_since, self._awaiting_final = False, None, False
            overlap.stopped = False  # its final words, when they come, are not a turn of the user's
            self._to(State.LISTENING)
            self._resume_at = self._now() + self.options.resume_gap_ms
        elif review.stop and review.provisional and not final:
            overlap.held = True  # Venus went on, then the words turned: pause again until they settle
            self.mouth.pause()
        elif review.stop:
            self._yield_to(overlap, f"overlap judged {review.kind} once the words were in: {review.reason}")
            if final:
                self._awaiting_final = False

    # ---- Venus's turns --------------------------------------------------------------------------------------

    def _turn_active(self) -> bool:
        return self._turn is not None and not self._turn.done.is_set()

    def _turn_finished(self) -> bool:
        return (self._turn is None or self._turn.done.is_set()) and not self.mouth.speaking

    def _end_user_turn(self, *, typed: bool = False) -> None:
        self._last_request = " ".join(self._user_text) or self._last_request
        readings = [" ".join([*self._user_text[:-1], other]) for other in self._alternatives] if self._user_text else []
        self._alternatives = ()
        self._learn_names(" ".join(self._user_text))
        reply = self._answer(" ".join(self._user_text), typed=typed)
        self._user_text, self._partial, self._silence_since = [], "", None
        self._last_word_p, self._turn_voice = None, None
        self._awaiting_final, self._segment_open = False, False
        if reply == "unclear":
            self._say(f"Sorry, was that a yes or a no? {self._question_again()}", asking=self._asked)
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
        match = self._match_intent(self._last_request)
        for reading in readings if match is None else ():  # "Set a tiger for ten minutes" also read as a timer
            if (match := self._match_intent(reading)) is not None:
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
        return self._asked is not None and self.harness is not None and self._asked in self.harness.pending_confirmations()

    def _note_voice(self, similarity: float | None) -> None:
        if similarity is not None:
            self._turn_voice = similarity if self._turn_voice is None else min(self._turn_voice, similarity)

    def _answer(self, text: str, *, typed: bool) -> str | None:
        """The turn as an answer to a pending question or a cancel: "yes", "no", "cancel", "unclear", "not-you",
        or None when it is neither (a request, or conversation, which the turn goes on to handle)."""
        if self.harness is None or not text.strip() or self._match_intent(text) is not None:
            return None  # a request the intents know is a request, even one that starts with "okay"
        if typed:
            return self.harness.handle_user_text(text, source="ui", asked=self._asked)
        asked = self._asked if self._question_heard() else None
        if asked is not None and not self._sounds_like_user():
            # the words answer the question, but not in the user's voice: the TV, a guest, a recording
            if self.harness.reads_as_answer(text):
                log.info("an answer %r in another voice (similarity %.2f) approves nothing", text, self._turn_voice)
                return "not-you"
        return self.harness.handle_user_text(text, source="voice", asked=asked)

    def _question_heard(self) -> bool:
        # the question Venus asked about `_asked` was played up to its end (its words are in the heard words)
        if self._asked is None or not self._asked_turn:
            return False
        return len(self._heard_text(self._asked_turn).split()) >= self._asked_words

    def _sounds_like_user(self) -> bool:
        # only with voice matching on and a score for this turn (the pipeline scores answers to open questions
        # against the enrolled voice); the threshold is the overlap policy's "someone other than the user"
        if not self.settings.conversation.voice_matching or self._turn_voice is None:
            return True
        return self._turn_voice >= self.overlap.options.same_speaker_threshold

    def _question_again(self) -> str:
        pending = self.harness.pending_confirmations() if self.harness is not None else []
        request = next((e for e in reversed(self.timeline.events(kinds=[ev.Kind.CONFIRMATION_REQUESTED]))
                        if isinstance(e, ev.ConfirmationRequested) and e.task_id == self._asked), None)
        if request is None or self._asked not in pending:
            return "Say yes or no."
        return f"{_confirmation_text(request)} Say yes or no."

    def _respond(self, actions: Sequence[ev.Action] | None = None) -> None:
        ref = _TurnRef(uuid.uuid4().hex[:12], from_llm=True)
        self._turn = ref
        self._to(State.THINKING)
        if not self._segment_open:
            self._lend_cores(True)
        self._llm_jobs.submit(self._run_turn, ref, actions)

    def _lend_cores(self, lend: bool) -> None:
        # The decision and the first words get every core; the ASR (the user speaks again) and the voice (its
        # first clause is ready) take theirs back. Two threads cut the first clause's wait by ~1/3 here.
        use = getattr(getattr(self.conversation, "backend", None), "use_threads", None)
        if use is None:
            return
        n = self.options.answer_start_threads or psutil.cpu_count(logical=False) or 1
        use(n if lend and n > 1 else None)

    def _run_turn(self, ref: _TurnRef, actions: Sequence[ev.Action] | None) -> None:
        # LLM worker: start the turn, hand its clauses to the voice, and wait until they were played.
        try:
            if ref.cancelled:
                return
            ref.turn = self.conversation.respond(turn_id=ref.turn_id, actions=actions)
            if ref.cancelled:
                ref.turn.cancel()
            ref.utterance = self.mouth.speak(ref.turn_id, _Clauses(self._clauses(ref.turn)))
            ref.utterance.done.wait()
        except Exception:
            log.exception("assistant turn %s failed to start", ref.turn_id)
            self.timeline.append(ev.SystemNotice(level="error", code="backend-failed",
                                                 text="Venus could not answer; see the log."))
        finally:
            ref.done.set()

    def _clauses(self, turn: Any) -> Iterator[str]:
        # Runs on the voice's worker thread: hand a delegation to the harness (never blocks), then speak.
        turn.decided.wait()
        decision = turn.decision
        if decision is not None and decision.action == ev.Action.DELEGATE and self.harness is not None:
            self.harness.submit(decision.tool, decision.arguments, turn_id=turn.turn_id)
        for chunk in turn.chunks():
            if chunk.strip():
                self._lend_cores(False)  # the voice synthesizes from here on, beside the LLM
                yield chunk.strip()
        self._lend_cores(False)

    def _say(self, text: str, asking: str | None = None) -> None:
        """Speak a fixed sentence (reminders, acknowledgements); it joins the context as an assistant turn.

        `asking`: the task whose yes/no question this sentence asks; a spoken answer counts once it was heard.
        """
        ref = _TurnRef(uuid.uuid4().hex[:12], from_llm=False)
        if asking is not None:
            self._asked, self._asked_turn = asking, ref.turn_id
            self._asked_words = len(text.split(" Say yes or no")[0].split())
        self.timeline.append(ev.ControlDecision(turn_id=ref.turn_id, action=ev.Action.RESPOND))
        self._turn = ref
        self._to(State.THINKING)
        self._speak_on(ref, text)

    def _speak_on(self, ref: _TurnRef, text: str, reason: str = "notice") -> None:
        """Say `text` as the words of the (already decided) turn `ref`, then end it."""
        self.timeline.append(ev.AssistantTurnEnd(turn_id=ref.turn_id, text=text, heard_text=text, reason=reason))

        def speak() -> None:
            try:
                if not ref.cancelled:
                    ref.utterance = self.mouth.speak(ref.turn_id, iter([text]))
                    ref.utterance.done.wait()
            finally:
                ref.done.set()

        self._llm_jobs.submit(speak)

    # ---- recognised requests (engine.intents) ----------------------------------------------------------------

    def _match_intent(self, text: str) -> IntentMatch | None:
        if self.intents is None or self.harness is None or not text.strip():
            return None
        try:
            context = IntentContext(now=datetime.now(), reminders=self.harness.pending_reminders(),
                                    tasks=self.harness.running_tasks())
            return self.intents.match(text, context)
        except Exception:  # the LLM answers instead; a template bug must never silence Venus
            log.exception("intent matching failed for %r", text)
            return None

    def _closed_request(self, text: str) -> bool:
        # a whole request that cannot grow ("what time is it?") needs no long pause to be sure it is over
        if self._closed_checked[0] != text:
            match = self._match_intent(text)
            self._closed_checked = (text, match is not None and match.closed and not match.clarify)
        return self._closed_checked[1]

    def _delegate(self, match: IntentMatch) -> None:
        """Run a recognised request's tool now; its result is spoken when it comes (or 'On it.' first)."""
        if match.clarify:
            self._say(match.clarify)
            return
        problem = self.harness.check_call(match.tool, match.arguments)
        if problem:
            self._say(f"I can't do that as asked: {problem}. Could you say it another way?")
            return
        ref = _TurnRef(uuid.uuid4().hex[:12], from_llm=False)
        self.timeline.append(ev.ControlDecision(turn_id=ref.turn_id, action=ev.Action.DELEGATE, tool=match.tool,
                                                arguments=dict(match.arguments)))
        self._turn = ref
        self._to(State.THINKING)
        task_id = self.harness.submit(match.tool, dict(match.arguments), turn_id=ref.turn_id)
        self._intent_tasks[task_id] = _IntentTask(match, ref, self._now())

    def _on_intent_event(self, event: Any) -> None:
        task = self._intent_tasks.pop(event.task_id)
        waiting = not task.acknowledged and self._turn is task.ref and not task.ref.cancelled
        if isinstance(event, ev.ConfirmationRequested):
            # the confirmation is asked at once, as every one is; the turn that waited for it ends quietly
            if waiting:
                task.ref.done.set()
            task.acknowledged = True
            self._intent_tasks[event.task_id] = task
            self._deliveries.append(event)
            return
        if isinstance(event, ev.DelegationResult):
            text = render_result(task.match, event.result)
        elif isinstance(event, ev.DelegationFailed):
            text = render_failure(task.match, event.error)
        else:  # cancelled, by the user, who knows it
            if waiting:
                task.ref.done.set()
            return
        if waiting:
            self._speak_on(task.ref, text, reason="intent")
        else:
            self._deliveries.append(_Answer(text))

    def _acknowledge_slow_tasks(self, now: int) -> None:
        for task in self._intent_tasks.values():
            if not task.acknowledged and now - task.started_ms >= self.options.intent_ack_ms:
                task.acknowledged = True
                if self._turn is task.ref and not task.ref.cancelled:
                    self._speak_on(task.ref, acknowledgement(task.match))

    def _answer_visual(self, question: str) -> None:
        """'What does this say?': look now (OCR, faces, a multimodal model when set up) and say what was seen."""
        ref = _TurnRef(uuid.uuid4().hex[:12], from_llm=False)
        self._turn = ref
        self._to(State.THINKING)

        def look_and_say() -> None:
            try:
                if ref.cancelled:
                    return
                if self.vision is None:
                    text = "My camera is off. Turn it on in the window and ask me again."
                else:
                    from engine.vision import describe_observation

                    observation = self.vision.look(question)  # appends the observation to the timeline
                    multimodal = getattr(self.vision, "multimodal", None)
                    text = describe_observation(observation, multimodal.name if multimodal is not None else "")
                self.timeline.append(ev.ControlDecision(turn_id=ref.turn_id, action=ev.Action.RESPOND))
                self.timeline.append(ev.AssistantTurnEnd(turn_id=ref.turn_id, text=text, heard_text=text,
                                                         reason="notice"))
                if not ref.cancelled:
                    ref.utterance = self.mouth.speak(ref.turn_id, iter([text]))
                    ref.utterance.done.wait()
            except Exception:
                log.exception("looking failed")
                self.timeline.append(ev.SystemNotice(level="error", code="vision-failed",
                                                     text="I could not look through the camera; see the log."))
            finally:
                ref.done.set()

        self._llm_jobs.submit(look_and_say)

    def _interrupt(self, reason: str) -> None:
        """Stop speaking now; the LLM worker then cuts the turn to the words the user heard."""
        self.mouth.stop()
        ref, self._turn = self._turn, None
        if ref is None:
            return
        ref.cancelled = True
        if ref.from_llm:
            self.conversation.cancel()  # urgent: stops the decode before its next step, takes no lock
            self._llm_jobs.submit(self._cut_to_heard, ref, reason)

    def _cut_to_heard(self, ref: _TurnRef, reason: str) -> None:
        if ref.turn is None:
            return  # it never started: nothing was said, nothing to cut
        if ref.utterance is not None:
            ref.utterance.done.wait(self.options.heard_wait_s)  # the cut clause's heard words are reported by then
        self.conversation.apply_interruption(ref.turn_id, self._heard_text(ref.turn_id), reason)

    def _heard_text(self, turn_id: str) -> str:
        heard_of = getattr(self.mouth, "heard_text", None)
        if heard_of is not None:
            return heard_of(turn_id)
        words: list[str] = []
        for span in self.timeline.events(kinds=[ev.Kind.SPEECH_SPAN]):
            if span.turn_id == turn_id:
                words.extend(span.heard_words)
        return " ".join(words)

    # ---- proactive delivery ---------------------------------------------------------------------------------

    def _ready_deliveries(self) -> list[Any]:
        # one question at a time: while the confirmation asked last is unanswered, the next one waits, so that a
        # yes or no can only mean the question just heard
        if not self._deliveries:
            return []
        pending = self.harness.pending_confirmations() if self.harness is not None else []
        held = self._asked is not None and self._asked in pending
        return [e for e in self._deliveries
                if not (held and isinstance(e, ev.ConfirmationRequested) and e.task_id != self._asked)]

    def _maybe_deliver(self, now: int) -> None:
        ready = self._ready_deliveries()
        if not ready:
            return
        urgent = next((e for e in ready if isinstance(e, _URGENT)), None)
        if urgent is None:
            quiet = now - self._last_activity_ms >= self.options.proactive_gap_ms
            if not quiet or self._person_present is False:  # never to an empty room; it waits until they return
                return
        event = urgent or ready[0]
        self._deliveries.remove(event)
        if isinstance(event, ev.ReminderFired):
            self._say(f"Excuse me, a reminder: {event.text}")
        elif isinstance(event, _Answer):
            self._say(event.text)
        elif isinstance(event, ev.ConfirmationRequested):
            if event.task_id in (self.harness.pending_confirmations() if self.harness is not None else []):
                # a yes or no from now on answers this one, once the question was heard
                self._say(f"Before I go ahead: {_confirmation_text(event)} Say yes or no.",
                          asking=event.task_id)
        else:  # tasks finished or failed: one turn weaves them all in (they are in the context), in words only
            for other in [e for e in ready if not isinstance(e, _URGENT) and e is not event and e in self._deliveries]:
                self._deliveries.remove(other)
            self._respond(actions=(ev.Action.RESPOND,))


class _Clauses:
    """An answer's chunks, already cut into clauses by the LLM's chunker: the voice speaks them as they are."""

    presplit = True

    def __init__(self, chunks: Iterator[str]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[str]:
        return self._chunks


def _reviewable(verdict: OverlapVerdict) -> bool:
    # a settled "talking to someone else" that rests on a name is still checked against later words: the
    # name may have been misheard (OverlapPolicy.review)
    return verdict.kind == ev.OverlapKind.OTHER_ADDRESSEE and verdict.named


def _confirmation_text(event: ev.ConfirmationRequested) -> str:
    if event.prompt:
        prompt = event.prompt.strip()
        return prompt if prompt.endswith(("?", ".", "!")) else prompt + "."
    args = ", ".join(f"{k} {v}" for k, v in event.arguments.items())
    return f"{re.sub(r'[_-]', ' ', event.tool)} with {args}." if args else f"{event.tool}."
