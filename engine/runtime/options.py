"""Timings of the foreground loop (`Runtime`), shared by the loop and the parts it delegates to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuntimeOptions:
    """Timings of the foreground loop."""

    tick_ms: int = 20  # how often silence, overlap deadlines and delivery gaps are checked
    # from the end of the user's turn to Venus's first clause, nothing else needs the CPU (the final is in, the
    # voice waits for words): the LLM decodes with this many threads then (0 = every physical core, 1 = off)
    answer_start_threads: int = 0
    proactive_gap_ms: int = 1500  # quiet this long (user and Venus) before a background result is spoken
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
    # A segment that closed on one or two words that are neither a backchannel nor a name ("We" for "Wait,")
    # resumes a paused answer only on its final decode, awaited this long after the close (a short segment's
    # final takes ~100-200 ms on 2 cores): a garbled partial is not evidence. Unbounded, a slow final kept a
    # "yes" paused 1.4 s (see docs/BENCHMARKS.md).
    short_words_final_wait_ms: int = 250
    heard_wait_s: float = 0.5  # after stop(), how long to wait for the cut clause's heard-word report
    # the LLM's end-of-turn judgement of the final words (engine.runtime.turn_probe) comes on the LLM worker,
    # tens of ms after the final; the turn waits for it up to this much silence, then the lexical model decides
    end_of_turn_probe_wait_ms: int = 600
    # the chat LLM's reading of who final words over Venus's voice are said to (engine.runtime.addressee_probe)
    # is awaited this long, on the loop, only when the word rules would stop her for the words alone; she is
    # paused meanwhile. Its read took 250-450 ms beside whisper (2-core machine); it runs between two steps of
    # her answer's decode, which is held for the overlap (hold_answer_during_overlap); late, the rules decide
    addressee_probe_wait_ms: int = 800
    final_wait_ms: int = 8000  # a final transcript later than this is given up on (the turn ends without it)
    acknowledge_replies: bool = True  # say "Okay." after a spoken yes / no / cancel aimed at a task
    follow_ms: int = 1500  # speech over Venus this soon after an overlap that did not claim the floor, before
    #   its words are in, is taken for more of the same (no pause at the deadline; its words still decide)
    local_intents: bool = True  # everyday requests go straight to their tool (engine.intents), not to the LLM
    intent_ack_ms: int = 700  # a recognised request whose result takes longer than this is acknowledged first

    def __post_init__(self) -> None:
        if self.tick_ms < 1 or self.proactive_gap_ms < 0 or self.final_wait_ms < 0:
            raise ValueError("RuntimeOptions: tick_ms must be >= 1 and the gaps >= 0")
        if not 1 <= self.early_level_blocks <= self.min_overlap_level_blocks:
            raise ValueError(f"early_level_blocks must be 1..min_overlap_level_blocks, got {self.early_level_blocks}")
        if self.answer_start_threads < 0:
            raise ValueError(f"answer_start_threads must be >= 0, got {self.answer_start_threads}")
