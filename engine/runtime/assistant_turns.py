"""Venus's own turns: an LLM answer, a fixed sentence or a look through the camera, spoken through the mouth.

Every call into the LLM runs on one worker thread, in order, so the loop never waits for a model and an
interruption's cut always lands before the next answer starts. The loop decides when a turn starts or stops;
this module only runs it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from engine.runtime.cpu_share import CpuShare
from engine.runtime.mouth import Mouth, Utterance
from engine.runtime.options import RuntimeOptions
from engine.timeline import events as ev
from engine.timeline.timeline import Timeline

log = logging.getLogger(__name__)


class VenusTurn:
    """Venus's turn as the loop sees it: queued, then an LLM turn (or a fixed sentence) being spoken."""

    def __init__(self, *, from_llm: bool) -> None:
        self.turn_id = uuid.uuid4().hex[:12]
        self.from_llm = from_llm
        self.turn: Any = None  # the engine.llm AssistantTurn, once started
        self.utterance: Utterance | None = None
        self.cancelled = False
        self.spoken = ""  # a fixed sentence's words (AssistantTurns.speak), to tell what of them was heard
        self.done = threading.Event()  # everything generated and played, or dropped


class AssistantTurns:
    """Runs Venus's turns on the LLM worker and cuts an interrupted one to the words the user heard."""

    def __init__(self, timeline: Timeline, conversation: Any, mouth: Mouth, cpu: CpuShare, *, harness: Any = None,
                 vision: Any = None, options: RuntimeOptions | None = None) -> None:
        self.timeline = timeline
        self.conversation = conversation  # engine.llm.Conversation
        self.mouth = mouth
        self.harness = harness
        self.vision = vision
        self.options = options or RuntimeOptions()
        self._cpu = cpu
        self.current: VenusTurn | None = None  # Venus's current (or starting) turn
        self._jobs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="venus-llm-control")
        self._prefill_lock = threading.Lock()
        self._prefill_text: str | None = None  # the latest partial waiting to be prefilled
        self._prefill_every_core = False  # ... on every core

    @property
    def active(self) -> bool:
        """A turn is queued or being generated and played."""
        return self.current is not None and not self.current.done.is_set()

    @property
    def finished(self) -> bool:
        """Nothing of Venus's turn is left to generate or to play."""
        return (self.current is None or self.current.done.is_set()) and not self.mouth.speaking

    # ---- the worker ----------------------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Evaluate the system prompt (persona, tools) now, while the user is still speaking, not after."""
        self._jobs.submit(self._prefill)

    def wait_ready(self, timeout: float) -> bool:
        """Block until the work queued so far (the system prompt's evaluation) is done."""
        try:
            self._jobs.submit(lambda: None).result(timeout=timeout)
        except TimeoutError:
            return False
        return True

    def on_worker(self, job: Callable[[], None], *, every_core: bool = False) -> None:
        """Run `job` on the LLM worker, in turn with prefills and answers (they share the model's KV cache).
        `every_core`: the model runs it on every core (the recogniser has nothing to decode now); an answer that
        starts meanwhile keeps them."""
        if not every_core:
            self._jobs.submit(job)
            return

        def on_every_core() -> None:
            self._cpu.lend_cores(True)
            try:
                job()
            finally:
                if self.current is None:
                    self._cpu.lend_cores(False)

        self._jobs.submit(on_every_core)

    def prefill(self, partial: str, *, every_core: bool = False) -> None:
        """Put the user's words so far into the model's cache (latest partial only), so the answer does not
        start by evaluating them. `every_core`: evaluate them on every core (nothing else needs one now)."""
        with self._prefill_lock:
            queued = self._prefill_text is not None
            self._prefill_text = partial
            self._prefill_every_core = self._prefill_every_core or every_core
        if not queued:
            self._jobs.submit(self._prefill, True)

    def drop_prefill(self) -> None:
        """The final transcript is on the timeline: a queued partial of it is stale."""
        with self._prefill_lock:
            self._prefill_text = None

    def _prefill(self, partial: bool = False) -> None:
        try:
            if not partial:
                self.conversation.warm_up()
                return
            with self._prefill_lock:
                text, self._prefill_text = self._prefill_text, None
                every_core, self._prefill_every_core = self._prefill_every_core, False
            if text is not None and self.current is None:
                if every_core:
                    self._cpu.lend_cores(True)
                try:
                    self.conversation.prefill(text)
                finally:
                    if every_core and self.current is None:  # an answer that started meanwhile keeps them
                        self._cpu.lend_cores(False)
        except Exception:  # a failing model shows up again, with its notice, at the first answer
            log.exception("prefilling the context failed")

    def cancel(self) -> None:
        """Drop the current turn and stop the decode (closing)."""
        if self.current is not None:
            self.current.cancelled = True
        self.conversation.cancel()

    def shutdown(self) -> None:
        """Stop the worker (after the loop has stopped)."""
        self._jobs.shutdown(wait=True, cancel_futures=True)

    # ---- turns ---------------------------------------------------------------------------------------------

    def respond(self, ref: VenusTurn, actions: Sequence[ev.Action] | None) -> None:
        """Generate the LLM's answer for `ref` and speak it."""
        self._jobs.submit(self._run_turn, ref, actions)

    def speak(self, ref: VenusTurn, text: str, reason: str = "notice") -> None:
        """Say `text` as the words of the (already decided) turn `ref`, then end it."""
        self.timeline.append(ev.AssistantTurnEnd(turn_id=ref.turn_id, text=text, heard_text=text, reason=reason))
        ref.spoken = text

        def speak() -> None:
            try:
                if not ref.cancelled:
                    ref.utterance = self.mouth.speak(ref.turn_id, iter([text]))
                    ref.utterance.done.wait()
            finally:
                ref.done.set()

        self._jobs.submit(speak)

    def look(self, ref: VenusTurn, question: str) -> None:
        """'What does this say?': look now (OCR, faces, a multimodal model when set up) and say what was seen."""

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

        self._jobs.submit(look_and_say)

    def interrupt(self, reason: str) -> None:
        """Stop speaking now; the worker then cuts the turn to the words the user heard."""
        self.mouth.stop()
        ref, self.current = self.current, None
        if ref is None:
            return
        ref.cancelled = True
        if ref.from_llm:
            self.conversation.cancel()  # urgent: stops the decode before its next step, takes no lock
            self._jobs.submit(self._cut_to_heard, ref, reason)
        elif ref.spoken:
            self._jobs.submit(self._cut_said_to_heard, ref, reason)

    def heard_text(self, turn_id: str) -> str:
        """The words of Venus's turn that were played (the mouth's report, else the timeline's speech spans)."""
        heard_of = getattr(self.mouth, "heard_text", None)
        if heard_of is not None:
            return heard_of(turn_id)
        words: list[str] = []
        for span in self.timeline.events(kinds=[ev.Kind.SPEECH_SPAN]):
            if span.turn_id == turn_id:
                words.extend(span.heard_words)
        return " ".join(words)

    def _run_turn(self, ref: VenusTurn, actions: Sequence[ev.Action] | None) -> None:
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
                self._cpu.lend_cores(False)  # the voice synthesizes from here on, beside the LLM
                yield chunk.strip()
        self._cpu.lend_cores(False)

    def _cut_to_heard(self, ref: VenusTurn, reason: str) -> None:
        if ref.turn is None:
            return  # it never started: nothing was said, nothing to cut
        if ref.utterance is not None:
            ref.utterance.done.wait(self.options.heard_wait_s)  # the cut clause's heard words are reported by then
        self.conversation.apply_interruption(ref.turn_id, self.heard_text(ref.turn_id), reason)

    def _cut_said_to_heard(self, ref: VenusTurn, reason: str) -> None:
        # A fixed sentence (a reminder, an acknowledgement) cut off: the timeline and the model's context keep the
        # words the user heard of it, as for an answer; its turn end had recorded it as heard whole.
        ref.done.wait(self.options.heard_wait_s)
        heard = self.heard_text(ref.turn_id) if ref.utterance is not None else ""
        if heard.strip() != ref.spoken.strip():
            self.conversation.apply_interruption(ref.turn_id, heard, reason)


class _Clauses:
    """An answer's chunks, already cut into clauses by the LLM's chunker: the voice speaks them as they are."""

    presplit = True

    def __init__(self, chunks: Iterator[str]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[str]:
        return self._chunks
