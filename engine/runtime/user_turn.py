"""The user's turn as it is heard: the final words of its segments, the partial so far, when its silence began,
and the rule that says it is over (the end-of-turn detector on the words and the silence, or a whole request
that cannot grow)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from engine.runtime.overlap_tracker import TrackedOverlap
from engine.runtime.turn_probe import TurnProbe
from engine.runtime.turn_taking import EndOfTurnDetector


class TurnEnd(StrEnum):
    """What the silence after the user's speech means now."""

    WAIT = "wait"  # not over yet
    OVER = "over"  # the user is done: answer
    NOTHING_SAID = "nothing-said"  # a long silence and no words at all: back to listening


@dataclass
class UserTurn:
    """The user's current turn, assembled from final transcripts (and the latest partial) until it ends."""

    texts: list[str] = field(default_factory=list)  # the final words of its segments
    # the recogniser's other readings of the last segment (for the local intents, when its best reading is not a
    # request they know)
    alternatives: tuple[str, ...] = ()
    partial: str = ""
    segment_open: bool = False  # the VAD hears the user now
    silence_since: int | None = None  # when the user's silence began (session ms)
    awaiting_final: bool = False  # a segment closed and its final transcript has not come yet
    last_word_p: float | None = None  # whisper's probability of the last word of the last final

    @property
    def text(self) -> str:
        """The turn's final words so far."""
        return " ".join(self.texts)

    def text_with(self, final: str) -> str:
        """The turn's words once `final` is its next segment's final (what the end-of-turn rule will read)."""
        return " ".join([*self.texts, final])

    @property
    def readings(self) -> list[str]:
        """The whole turn once per other reading of its last segment."""
        return [" ".join([*self.texts[:-1], other]) for other in self.alternatives] if self.texts else []

    def clear(self) -> None:
        """The turn was taken: start the next one empty."""
        self.texts, self.partial, self.silence_since, self.alternatives = [], "", None, ()
        self.last_word_p, self.awaiting_final, self.segment_open = None, False, False

    def add_final(self, text: str, alternatives: tuple[str, ...], last_word_p: float | None) -> None:
        """A segment's final words, with the recogniser's other readings of it."""
        self.texts.append(text)
        self.alternatives, self.last_word_p = alternatives, last_word_p

    def segment_ended(self, quiet_from_ms: int) -> None:
        """The VAD closed a segment whose silence began at `quiet_from_ms`; its final comes later."""
        self.segment_open, self.silence_since, self.awaiting_final = False, quiet_from_ms, True

    def take_overlap(self, overlap: TrackedOverlap) -> None:
        """Speech over Venus took the floor: it is (the start of) this turn."""
        self.segment_open = overlap.speech_active
        self.silence_since = None if overlap.speech_active else overlap.ended_ms
        self.awaiting_final = overlap.final is None
        if overlap.final:
            self.add_final(overlap.final, (), overlap.last_word_p)  # its readings were not kept

    def take_overlap_final(self, overlap: TrackedOverlap) -> None:
        """The final words of the overlap that took the floor, unless they are in already."""
        if overlap.final and overlap.final not in self.texts:
            self.add_final(overlap.final, (), overlap.last_word_p)
        self.awaiting_final = False  # its final is in, even an empty one ("Venus," alone often decodes to nothing)

    def end(self, now_ms: int, detector: EndOfTurnDetector, *, final_wait_ms: int,
            closed: Callable[[str], bool], probe: TurnProbe | None = None, probe_wait_ms: int = 0,
            actionable: Callable[[str], bool] | None = None) -> TurnEnd:
        """Is the turn over after the silence so far? `closed(text)`: a turn that cannot grow (a whole request, a
        reply to Venus's question). `actionable(text)`: a request the intents parse as heard, which may grow but
        waits no longer than `request_max_silence_ms` for it.

        `probe`: the LLM's judgement of the words; while it is coming the turn waits up to `probe_wait_ms` of
        silence for it, then the lexical model decides alone.
        """
        if self.silence_since is None:
            return TurnEnd.WAIT
        silence = now_ms - self.silence_since
        if silence < 0:
            return TurnEnd.WAIT  # the segment's end was reported ahead of the session clock: not silent yet
        text = self.text or self.partial
        if not text:
            if silence > detector.options.max_silence_ms and not self.awaiting_final:
                return TurnEnd.NOTHING_SAID
            return TurnEnd.WAIT
        if self.awaiting_final and silence < final_wait_ms:
            return TurnEnd.WAIT  # the context is the timeline, so the answer waits for the final words
        final = not self.awaiting_final
        last_p = self.last_word_p if final and self.texts else None
        if final and silence >= detector.options.min_silence_ms and closed(text):
            return TurnEnd.OVER
        if final and actionable is not None and silence >= detector.options.request_max_silence_ms \
                and actionable(text):
            return TurnEnd.OVER
        llm, coming = probe.lookup(text) if probe is not None else (None, False)
        if coming and silence < probe_wait_ms:
            return TurnEnd.WAIT
        verdict = detector.decide(silence, text, is_final=final, last_word_probability=last_p, llm_probability=llm)
        return TurnEnd.OVER if verdict.end_of_turn else TurnEnd.WAIT
