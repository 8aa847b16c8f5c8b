"""Who gets the CPU at the two moments that decide latency on a small machine.

From the end of the user's turn to Venus's first clause nothing else needs the CPU, so the LLM decodes with
every core; the ASR (the user speaks again) and the voice (its first clause is ready) take theirs back. While
speech over Venus is judged, the answer's decoding (seconds ahead of the voice) waits, so whisper has the CPU
and the verdict comes sooner.
"""

from __future__ import annotations

from typing import Any

import psutil

from engine.runtime.options import RuntimeOptions


class CpuShare:
    """Lends the LLM's backend every core, and holds an answer's decoding while an overlap is judged."""

    def __init__(self, conversation: Any, options: RuntimeOptions) -> None:  # conversation: engine.llm.Conversation
        self.conversation = conversation
        self.options = options
        self._held: Any = None  # the AssistantTurn whose decoding waits
        # read once: psutil asks sysfs on every call, and lend_cores runs at each clause and each speech onset
        self._cores = options.answer_start_threads or psutil.cpu_count(logical=False) or 1

    def lend_cores(self, lend: bool) -> None:
        """Every core to the LLM (`lend`), or back to its own thread count; safe from any thread."""
        # Two threads cut the first clause's wait by ~1/3 here.
        use = getattr(getattr(self.conversation, "backend", None), "use_threads", None)
        if use is None:
            return
        use(self._cores if lend and self._cores > 1 else None)

    def hold_answer(self, turn: Any) -> None:
        """Hold `turn`'s decoding (an engine.llm AssistantTurn) and release any other; None releases all."""
        target = turn if self.options.hold_answer_during_overlap else None
        if target is not self._held:
            if self._held is not None:
                self._held.hold(False)
            if target is not None:
                target.hold(True)
            self._held = target
