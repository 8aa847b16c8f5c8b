"""The spoken-length budget: an answer stops after a few sentences and offers to go on.

A listener cannot skim: a 20-second monologue from a small model is mostly words nobody asked for. So the
answer's decoding stops once it has said `max_sentences` sentences and the model is about to write another;
the voice then says OFFER, and the text after the cut is never generated. The budget is lifted when the user
asked for more: a request for detail or for the rest ("tell me more", "explain in detail", "list all"), or a
yes to the offer at the end of the previous answer. The phrases below are the plain English ways of asking
for a longer answer (chosen for their meaning, not fitted to any test set); anything else gets the budget.

After such a yes the model goes on from the cut answer's last words, as if it had never stopped
(`continued_answer`): asked "Yes" after the offer, SmolLM2-135M apologised or started its answer over, while
continuing the cut answer itself gave its next sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.llm.chunker import sentence_ends
from engine.llm.template import ChatMessage

OFFER = "Want me to go on?"

# Ways of asking for more than a short answer: for detail, for the rest, for all of something, or for a long one.
_ASKS_FOR_MORE = (
    "tell me more", "more about", "more detail", "more details", "in detail", "detailed", "in depth",
    "the rest", "go on", "keep going", "carry on", "continue", "list all", "list every", "all of them",
    "every one", "step by step", "full story", "whole story", "long story", "long list", "long version",
    "long answer", "at length", "take your time",
)
# Ways of saying yes to OFFER (the reply's first words).
_YES = ("yes", "yeah", "yep", "yup", "sure", "please", "ok", "okay", "go ahead", "of course", "why not")

_MORE = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in _ASKS_FOR_MORE) + r")\b")
# A yes word that comes with a refusal is a refusal: "Okay, never mind", "Yeah no", "OK that's enough".
_DECLINE = re.compile(r"\b(?:no|nope|nah|never ?mind|not now|don'?t|do not|stop|enough|i'?m (?:good|fine|ok|okay)"
                      r"|that'?s (?:it|all|fine|ok|okay)|no thanks|skip it|forget it)\b")
_YES_FIRST = re.compile(r"^\W*(?:" + "|".join(re.escape(p) for p in _YES) + r")\b")


def asks_for_more(messages: Sequence[ChatMessage]) -> bool:
    """True when the newest user message asks for a long answer, or says yes to the previous answer's offer."""
    said = _newest_user_words(messages)
    return bool(_MORE.search(said)) or continued_answer(messages) is not None


def continued_answer(messages: Sequence[ChatMessage]) -> list[ChatMessage] | None:
    """When the newest user message accepts the offer that ended the previous answer: the context to generate
    the rest from (the messages up to that answer, which is left open without its offer); else None."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if not users:
        return None
    said = messages[users[-1]].content.lower()
    offered = next((i for i in range(users[-1] - 1, -1, -1) if messages[i].role == "assistant"), None)
    if offered is None or not messages[offered].content.rstrip().endswith(OFFER):
        return None
    if not (_YES_FIRST.search(said) or _MORE.search(said)) or _DECLINE.search(said):
        return None
    cut = messages[offered].content.rstrip().removesuffix(OFFER).rstrip()
    return [*messages[:offered], ChatMessage("assistant", f"{cut} ", control=messages[offered].control)]


def _newest_user_words(messages: Sequence[ChatMessage]) -> str:
    return next((m.content.lower() for m in reversed(messages) if m.role == "user"), "")


class SentenceBudget:
    """Counts the sentences handed to the voice; `full` once the answer may say no more."""

    def __init__(self, max_sentences: int) -> None:
        if max_sentences < 0:
            raise ValueError(f"max_sentences must be 0 (no budget) or more, got {max_sentences}")
        self.max_sentences = max_sentences
        self.sentences = 0

    def add(self, chunk: str) -> None:
        """Count a clause chunk that went to the voice."""
        self.sentences += sentence_ends(chunk)

    @property
    def full(self) -> bool:
        """The answer has said all the sentences it may (never with no budget)."""
        return 0 < self.max_sentences <= self.sentences
