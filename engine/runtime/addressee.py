"""Who is the user talking to? Lexical addressee cues for speech heard while Venus speaks.

Whisper tiny often drops or garbles the name at the start of speech aimed at someone else ("Anna, where ..."
becomes "And where ..."), so the name alone is not enough. What is left in the words still tells a lot:
an assistant is asked for information, for changes to its answer, or about the topic it is talking about;
a person in the room is asked to act in the physical world ("can you grab the mail?"), asked about their own
doings ("where did you put the keys?"), or told something about the home ("the pasta is boiling over!").
These cues are weak one by one; the overlap policy weighs them against stronger ones (the assistant's name,
a stop cue, the camera's facing-screen cue).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Actions only a person in the room can do (an assistant on a desktop has no hands and no car).
PHYSICAL_VERBS = frozenset(
    "grab bring fetch carry put pick feed walk open close shut lock unlock wash clean cook boil pour hand pass "
    "drive park hurry wake sit move come go get take hang fix buy leave keep turn throw wipe stir taste dry fold "
    "hide boil burn spill".split())
# Things of the home and of the people in it.
HOUSEHOLD_NOUNS = frozenset(
    "door mail keys key oven stove pasta pot dinner lunch breakfast table kitchen dishes cat dog car shoes coat "
    "jacket kids baby bed garage trash laundry window lights tv phone bag groceries milk water towel room "
    "upstairs downstairs outside".split())
# Words about the conversation with Venus itself: its answer, its speech, the question asked.
META_WORDS = frozenset(
    "question answer version summary repeat explain louder slower slowly faster quickly skip again mean meant "
    "word words joke story detail details example examples short shorter longer simpler instead topic "
    "understand spell pronounce wrong".split())
# Function words that say nothing about the topic.
FUNCTION_WORDS = frozenset(
    "the a an and or but so of to in on at for with by from is are was were be been it its it's this that "
    "these those there here i you he she we they me him her us them my your his our their what who how why "
    "when where which do does did can could would should will shall have has had not no yes please just now "
    "then very really".split())

_ASK_ABOUT_WORLD = re.compile(r"^(?:\w+ )?(what|what's|whats|how|who|who's|when|where|why|which)\b")
_ADDRESSEE_DOINGS = re.compile(r"\b(did|have|are|were|will|do|can|could|would) you\b")
_PROMISE_TO_LISTENER = re.compile(r"\b(i'll|i will|i'm going to|let me) (call|see|meet|text|pick|join|help|show) "
                                  r"(you|ya)\b|\b(love|miss|see) you\b")
_WANT = re.compile(r"\bi (want|wanted|meant|mean|need|didn't ask|did not ask|asked|don't want)\b|\blet's\b")
_TOKEN = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True)
class AddresseeCues:
    """Evidence that words were said to the assistant or to someone else; each 0..1, with the reasons."""

    to_assistant: float
    to_other: float
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def other_wins(self) -> bool:
        """True when the words point clearly more at someone else than at the assistant."""
        return self.to_other >= 0.5 and self.to_other > self.to_assistant


def _stems(tokens: list[str]) -> set[str]:
    # "boiling" -> "boil", "keys" -> "key", "turned" -> "turn": enough to meet the lexicons above
    out = set(tokens)
    for t in tokens:
        for suffix in ("ing", "ed", "s"):
            if t.endswith(suffix) and len(t) - len(suffix) >= 3:
                out.add(t[: -len(suffix)])
    return out


def content_words(text: str) -> set[str]:
    """The words of `text` that carry a topic (no function words, nothing shorter than 3 letters)."""
    return {t for t in _TOKEN.findall(text.lower()) if len(t) >= 3 and t not in FUNCTION_WORDS}


def addressee_cues(words: str, speaking_text: str = "", topic_text: str = "") -> AddresseeCues:
    """Score who `words` are aimed at, given what Venus is saying (`speaking_text`) and the topic so far."""
    tokens = _TOKEN.findall(words.lower())
    joined = " ".join(tokens)
    reasons: list[str] = []
    to_assistant = to_other = 0.0
    if not tokens:
        return AddresseeCues(0.0, 0.0, ())
    shared = content_words(words) & (content_words(speaking_text) | content_words(topic_text))
    if shared:
        to_assistant += 0.6
        reasons.append(f"follows Venus's topic ({', '.join(sorted(shared))})")
    stems = _stems(tokens)
    if META_WORDS & stems:
        to_assistant += 0.6
        reasons.append("talks about Venus's answer")
    if _WANT.search(joined):
        to_assistant += 0.4
        reasons.append("says what the user wants")
    doings = _ADDRESSEE_DOINGS.search(joined)
    physical = PHYSICAL_VERBS & stems
    home = HOUSEHOLD_NOUNS & stems
    if _ASK_ABOUT_WORLD.search(joined) and not doings:
        to_assistant += 0.4
        reasons.append("asks about the world")
    if physical:
        to_other += 0.35
        reasons.append(f"a physical action ({', '.join(sorted(physical))})")
    if home:
        to_other += 0.35
        reasons.append(f"things of the home ({', '.join(sorted(home))})")
    if _PROMISE_TO_LISTENER.search(joined):
        to_other += 0.6
        reasons.append("promises the listener something only a person could use")
    if doings and (physical or home):
        to_other += 0.3
        reasons.append("asks the listener about their own doings")
    return AddresseeCues(min(1.0, to_assistant), min(1.0, to_other), tuple(reasons))


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
