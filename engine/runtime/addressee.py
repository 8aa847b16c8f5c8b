"""The people around the user: the names they gave them ("my wife Anna"), and the words that prime the ASR for
speech aimed at them. The lexical cues of who words are aimed at live in engine.runtime.cues.
"""

from __future__ import annotations

import re

# "my wife Anna", "my son's name is Tom", "my roommate, Jake": the people the user lives or works with
_MENTION = re.compile(
    r"\b(?i:my) (?i:wife|husband|partner|son|daughter|kid|boy|girl|brother|sister|mom|mum|mother|dad|father|friend|"
    r"roommate|flatmate|colleague|boss|neighbou?r|boyfriend|girlfriend|fianc[eé]e?|grandma|grandpa|aunt|uncle|"
    r"cousin|baby|nephew|niece)(?i:'s name is| is called| is named| named| called|,)? ([A-Z][a-z]+)\b")
_NOT_A_NAME = frozenset({"I", "Is", "And", "But", "So", "The", "Will", "Can", "Has", "Was", "Who", "Just"})


def names_mentioned(text: str) -> list[str]:
    """Names the user gave the people around them ("my wife Anna and my son Tom" -> ["Anna", "Tom"])."""
    return [m.group(1) for m in _MENTION.finditer(text) if m.group(1) not in _NOT_A_NAME]


# Words for the people in a home that speech aimed at them opens with; they prime whisper for the first word
# of speech over Venus's voice (see StreamingRecognizer.begin), which it otherwise hears as a common word.
HINT_VOCATIVES = ("Mom", "Dad", "honey", "kids", "guys")


def overlap_hint(names: tuple[str, ...] | list[str] = (), assistant_name: str = "") -> str:
    """The ASR hint for speech over Venus: the household vocatives, the names of people the user knows, and last
    the assistant's own name (whisper tiny writes the start of "Venus, skip that" as "V S." or "Be us." without
    it). Last, because at the end of the prompt it costs the other names least: on 5 voices' first 450-600 ms,
    household names were heard 40 of 60 times without it, 39 with it last, 37 with it first; "Venus" 0 / 9 / 8
    of 10."""
    seen: list[str] = []
    for word in (*HINT_VOCATIVES, *names):
        if word.strip() and word.lower() not in {w.lower() for w in seen}:
            seen.append(word.strip())
    seen = seen[:23]
    if assistant_name.strip() and assistant_name.strip().lower() not in {w.lower() for w in seen}:
        seen.append(assistant_name.strip())
    return ", ".join(seen) + "."
