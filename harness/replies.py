"""Reading the user's spoken answers: yes, no, unclear, or cancel the background work.

A yes or no is read from the whole utterance, not from its first word: "Okay, so tonight on the news..." starts
like a yes and is not an answer, "Sure thing, Bob." is an answer to Bob, and "Yeah, no." is both. An utterance
counts as an answer only when every word in it is a word people answer a yes/no question with: the answer
particles themselves, "go ahead"-style verbs, politeness, fillers, and words that point at which task ("the
second one", "the note"). That vocabulary is closed on purpose: a question Venus asked has a small set of
possible answers, and anything outside it means the speaker is saying something else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Reply = Literal["yes", "no", "unclear", "cancel"]

# Cancel phrases are checked first: "no, stop looking" is a cancel, not just a "no".
_CANCEL = re.compile(
    r"\b(never ?mind|nevermind|forget (it|that|about it)|stop (looking|searching|that|it|the task|everything)"
    r"|cancel( (it|that|this|the (task|search|timer|request)))?|abort|don'?t bother|call it off)\b"
)
_LEAD_IN = re.compile(r"^(no|nope|ok|okay|yes|yeah|please|actually|oh)\s+")  # "no stop looking" (ASR drops commas)
_FILLER = re.compile(r"^(uh|um|hmm|well|oh|so|and|but|hey|venus)\b[\s,]*")

# Phrases of one meaning, matched before single words ("go ahead", "do not", "not now").
_YES_PHRASES = ("go ahead", "go for it", "do it", "please do", "sounds good", "of course", "all right",
                "that's fine", "that is fine", "sure thing", "yes please", "let's do it", "you may", "you can")
_NO_PHRASES = ("do not", "don't", "not now", "no thanks", "no thank you", "i don't think so", "better not",
               "hold on", "hold off", "not yet", "no way")
_YES_WORDS = {"yes", "yeah", "yep", "yup", "yea", "sure", "ok", "okay", "alright", "fine", "confirm", "confirmed",
              "approve", "approved", "affirmative", "absolutely", "definitely", "certainly", "correct", "right",
              "agreed", "proceed"}
_NO_WORDS = {"no", "not", "nope", "nah", "negative", "deny", "denied", "decline", "declined", "wait", "stop", "don't",
             "never", "cancel"}
# Words that may stand around an answer without changing it.
_NEUTRAL = {"please", "thanks", "thank", "you", "venus", "uh", "um", "hmm", "well", "oh", "so", "and", "but",
            "then", "that", "this", "it", "one", "the", "to", "for", "with", "a", "go", "ahead", "do", "on", "just",
            "now", "yes", "of", "course", "sounds", "good", "let's", "may", "can", "thing", "is", "i", "think",
            "sir", "indeed", "really", "totally", "again", "actually", "very", "much", "mean"}
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "last": -1}


@dataclass(frozen=True)
class Answer:
    """What an utterance says to Venus's pending questions."""

    reply: Reply | None  # None: the utterance is not an answer (someone saying something else)
    task_id: str | None = None  # the task it names ("the second one", "the note"); None = the one asked about
    ambiguous: bool = False  # it names something that fits more than one task, or none of them


def _strip_fillers(clause: str) -> str:
    clause = re.sub(r"\s+", " ", clause).strip()
    while True:
        trimmed = _FILLER.sub("", clause, count=1).strip()
        if trimmed == clause:
            return clause
        clause = trimmed


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z' ]+", " ", text.lower().replace("’", "'")).split()


def _is_cancel(text: str) -> bool:
    lowered = text.lower().replace("’", "'")
    clauses = [_strip_fillers(re.sub(r"[^a-z' ]+", " ", c)) for c in re.split(r"[.,!?;:]+", lowered)]
    return any(c and (_CANCEL.match(c) or _CANCEL.match(_LEAD_IN.sub("", c))) for c in clauses)


def tool_words(tool: str) -> set[str]:
    """The words a person may use to point at a task by its tool: 'create_note' -> {'create', 'note', 'notes'}."""
    parts = {w for w in re.split(r"[^a-z]+", tool.lower()) if len(w) > 2}
    return parts | {f"{w}s" for w in parts}


def read_answer(text: str, pending: Sequence[str] = (), tools: Mapping[str, str] | None = None) -> Answer:
    """Read `text` as an answer to a yes/no question about one of the `pending` task ids (oldest first).

    `tools` maps each pending task id to its tool name, so "yes, the note" can pick the note among several.
    A cancel phrase at the start of a clause ("no, stop looking") cancels background work instead.
    """
    if _is_cancel(text):
        return Answer("cancel")
    spoken = " ".join(_words(text))
    if not spoken:
        return Answer(None)
    yes = no = False
    for phrase in _NO_PHRASES:
        if re.search(rf"\b{re.escape(phrase)}\b", spoken):
            no, spoken = True, re.sub(rf"\b{re.escape(phrase)}\b", " ", spoken)
    for phrase in _YES_PHRASES:
        if re.search(rf"\b{re.escape(phrase)}\b", spoken):
            yes, spoken = True, re.sub(rf"\b{re.escape(phrase)}\b", " ", spoken)
    named = tools or {}
    pointing = {w for task_id in pending for w in tool_words(named.get(task_id, ""))}
    ordinal: int | None = None
    pointed: set[str] = set()
    for word in spoken.split():
        if word in _NO_WORDS:
            no = True
        elif word in _YES_WORDS:
            yes = True
        elif word in _ORDINALS:
            ordinal = _ORDINALS[word]
        elif word in pointing:
            pointed.add(word)
        elif word not in _NEUTRAL:
            return Answer(None)  # a word no answer needs: this is someone saying something else
    if not (yes or no):
        return Answer(None)
    reply: Reply = "unclear" if yes and no else ("yes" if yes else "no")
    return _with_target(reply, pending, named, ordinal, pointed)


def _with_target(reply: Reply, pending: Sequence[str], tools: Mapping[str, str], ordinal: int | None,
                 pointed: set[str]) -> Answer:
    if ordinal is None and not pointed:
        return Answer(reply)
    candidates = list(pending)
    if pointed:
        candidates = [t for t in candidates if pointed & tool_words(tools.get(t, ""))]
    if ordinal is not None:
        within = candidates if pointed else list(pending)
        candidates = [within[ordinal]] if -len(within) <= ordinal < len(within) else []
    if len(candidates) != 1:
        return Answer(reply, ambiguous=True)
    return Answer(reply, task_id=candidates[0])


def interpret_reply(text: str) -> Reply | None:
    """Classify a transcript as a yes, a no, both (unclear) or a cancel of background work; None when none."""
    return read_answer(text).reply
