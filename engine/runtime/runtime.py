"""The foreground loop: the turn-taking state machine run on its own thread, driven by timeline events.

Perception, the LLM, the voice and the harness all write to the timeline; the runtime reads it (through a
queue, so no producer ever waits for it) and hands each event, controller command and tick to the
`StateMachine`, which keeps the conversation's state (listening, user speaking, thinking, speaking, yielding)
and decides who has the floor. Urgent control never queues: a user speech onset while Venus talks ducks the
voice on the perception thread itself, and `stop_talking` silences it on the caller's thread before any
bookkeeping.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any

from engine.intents import IntentMatcher
from engine.runtime.mouth import Mouth
from engine.runtime.options import RuntimeOptions
from engine.runtime.overlap import OverlapOptions, OverlapPolicy
from engine.runtime.overlap_tracker import TrackedOverlap
from engine.runtime.state_machine import StateMachine
from engine.runtime.turn_taking import EndOfTurnDetector, EndOfTurnOptions
from engine.settings import Settings
from engine.timeline import events as ev
from engine.timeline.timeline import Timeline

__all__ = ["Runtime", "RuntimeOptions"]

log = logging.getLogger(__name__)

State = ev.RuntimeStateName
_WATCHED = {
    ev.Kind.USER_SPEECH_START, ev.Kind.USER_SPEECH_END, ev.Kind.ASR_PARTIAL, ev.Kind.ASR_FINAL, ev.Kind.USER_TEXT,
    ev.Kind.VIDEO_OBSERVATION, ev.Kind.DELEGATION_RESULT, ev.Kind.DELEGATION_FAILED, ev.Kind.REMINDER_FIRED,
    ev.Kind.CONFIRMATION_REQUESTED, ev.Kind.DELEGATION_CANCELLED, ev.Kind.INTERRUPTION,
}


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
        self._machine = StateMachine(timeline, conversation, mouth, harness=harness, vision=vision,
                                     settings=self.settings, end_of_turn=self.end_of_turn, overlap=self.overlap,
                                     options=self.options, intents=intents)
        self._inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._closing = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._unsubscribe = timeline.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._loop, name="venus-runtime", daemon=True)

    @property
    def state(self) -> State:
        """The conversation's state now (listening, user speaking, thinking, speaking, yielding)."""
        return self._machine.state

    @property
    def intents(self) -> IntentMatcher | None:
        """The intent templates that answer everyday requests without the LLM (None: the LLM answers all)."""
        return self._machine.intents

    @property
    def awaiting_answer(self) -> bool:
        """Venus asked a yes/no question that is still open: the voice of what the user says next matters."""
        return self._machine.awaiting_answer

    @property
    def _overlap(self) -> TrackedOverlap | None:
        # the overlap being judged (tests wait on its state)
        return self._machine.overlap

    @property
    def _awaiting_final(self) -> bool:
        # the user's turn waits for a final transcript (tests check it)
        return self._machine.user_turn.awaiting_final

    # ---- life cycle ------------------------------------------------------------------------------------------

    def start(self) -> Runtime:
        """Start the loop thread; returns self."""
        self._machine.start()
        self._thread.start()
        return self

    def wait_ready(self, timeout: float = 120.0) -> bool:
        """Block until the start-up work on the LLM worker (the system prompt's evaluation) is done."""
        return self._machine.wait_ready(timeout)

    def close(self) -> None:
        """Stop talking, stop the loop and detach from the timeline."""
        self._unsubscribe()
        self.mouth.stop()
        self._machine.cancel()
        self._closing.set()
        self._thread.join(timeout=5)
        self._machine.shutdown()

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
        self._machine.hear_level(level_db)

    # ---- plumbing -------------------------------------------------------------------------------------------

    def _post(self, command: str, value: Any) -> None:
        self._idle.clear()
        self._inbox.put((command, value))

    def _on_event(self, event: ev.Event) -> None:
        # Runs on whichever thread appended the event: enqueue only, except the urgent duck.
        if isinstance(event, (ev.SpeechSpan, ev.UserSpeechStart)):
            self._machine.hear_now(event)
        if event.kind not in _WATCHED:
            return
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
                    self._machine.handle(value)
                elif command:
                    self._machine.command(command, value)
                if self._machine.tick() and self._inbox.empty():
                    self._idle.set()
            except Exception:  # the loop must survive any single failure; it is logged and noticed
                log.exception("runtime step failed")
                self.timeline.append(ev.SystemNotice(level="error", code="runtime-error",
                                                     text="Venus hit an internal error and recovered; see the log."))
                self._machine.recover()
