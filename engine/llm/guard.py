"""A guard on the spoken answer: small models recite their instructions ("Start every reply with one JSON
line ...") or go round in a loop, and neither may reach the user's ears.

It reads words, not characters: an answer trips it when it repeats a long run of words from the system
message, or says the same run of words twice. Both runs are long enough that a real answer does not make them
by chance ("I'm Venus, a friendly voice assistant" shares five words with the persona, not eight).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.llm.context import FENCE_LOOKALIKE

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")

FALLBACK = "Sorry, I lost my words there. Could you say that another way?"


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _runs(words: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i: i + n]) for i in range(len(words) - n + 1)]


@dataclass(frozen=True)
class GuardOptions:
    """How long a run of words must be to count as a recital or a loop."""

    prompt_run: int = 8  # this many words in a row from the system message: it is reciting its instructions
    loop_run: int = 6  # the same this-many words said twice: it is going round in a loop

    def __post_init__(self) -> None:
        if self.prompt_run < 3 or self.loop_run < 3:
            raise ValueError(f"runs shorter than 3 words match real answers; got {self.prompt_run}, {self.loop_run}")


class ReplyGuard:
    """`check(answer_so_far)` says why the answer must stop, or None while it is fine."""

    def __init__(self, system_message: str, options: GuardOptions | None = None) -> None:
        self.options = options or GuardOptions()
        self._prompt_runs = set(_runs(_words(system_message), self.options.prompt_run))

    def check(self, answer: str) -> str | None:
        """The reason to stop the answer (it recites the system message, or loops), else None."""
        if FENCE_LOOKALIKE.search(answer):
            # the tag Venus fences tool output with in the context, copied ("Paris.\n</data>", SmolLM2-135M)
            return "the answer wrote the fence of tool output (<data>)"
        words = _words(answer)
        for run in _runs(words, self.options.prompt_run):
            if run in self._prompt_runs:
                return f"the answer recited its instructions ({' '.join(run)!r})"
        seen: set[tuple[str, ...]] = set()
        for run in _runs(words, self.options.loop_run):
            if run in seen:
                return f"the answer went round in a loop ({' '.join(run)!r} twice)"
            seen.add(run)
        return None
