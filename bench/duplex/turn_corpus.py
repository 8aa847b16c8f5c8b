"""Seeded text corpus for training the end-of-turn model: complete requests and their unfinished prefixes.

Kept apart from the benchmark's own sentences (scenario_text.py) so the benchmark measures held-out text.
"""

from __future__ import annotations

import random

_PLACES = ["Berlin", "the office", "London", "my mother's house", "Chicago", "the station", "Rome", "the airport",
           "Madrid", "the beach", "Seoul", "downtown", "Toronto", "the gym", "Lisbon", "the library"]
_THINGS = ["the report", "a pizza", "my keys", "the tickets", "a new laptop", "the invoice", "some coffee",
           "a taxi", "the slides", "two concert tickets", "my glasses", "the charger", "a birthday cake"]
_PEOPLE = ["Anna", "my brother", "the team", "Carlos", "my boss", "Priya", "the landlord", "grandma", "Tom"]
_TIMES = ["tomorrow morning", "at seven", "next Friday", "in ten minutes", "tonight", "on Monday", "at noon",
          "later today", "this weekend", "in an hour", "at half past six"]
_TOPICS = ["black holes", "the French revolution", "photosynthesis", "jazz", "volcanoes", "the stock market",
           "penguins", "quantum computers", "the Roman empire", "sourdough bread", "electric cars"]

# Each template is a complete turn; {slots} are filled from the lists above.
_TEMPLATES = [
    "what time is it in {place}", "how far is {place} from here", "can you remind me to call {person} {time}",
    "remind me to bring {thing} {time}", "send {thing} to {person}", "tell me a fun fact about {topic}",
    "explain {topic} in simple words", "how do I get to {place}", "is it going to rain in {place} {time}",
    "I need to pick up {thing} {time}", "could you order {thing} for {person}",
    "what should I cook for {person} {time}", "set an alarm for {time}", "play some music",
    "what's on my calendar {time}", "book a table for two at an Italian place {time}",
    "how long does it take to drive to {place}", "can you summarize {thing}", "why is the sky blue",
    "turn off the lights", "who won the game last night", "translate good morning into Spanish",
    "I think I left {thing} at {place}", "let {person} know I'll be late", "what do you know about {topic}",
    "add {thing} to my shopping list", "do I have any meetings {time}", "how much is a flight to {place}",
    "write a short poem about {topic}", "find me a good restaurant near {place}", "thanks that's all",
    "I'd like to move my appointment to {time}", "please call {person}", "what's the capital of Australia",
    "open the document about {topic}", "I want to learn more about {topic}", "tell me a joke",
    "where did I put {thing}", "could you check the traffic to {place}", "is {place} open {time}",
    "yes please", "no that's fine", "okay go ahead", "what's two plus two", "stop the timer",
    "can you read me the news", "hello", "yes", "no", "thanks", "okay", "stop", "goodbye", "hi there",
    "sure", "never mind", "good morning", "I'm looking for {thing}", "schedule a call with {person} {time}",
]

# Where people trail off or pause: after these words a sentence is rarely complete.
_PAUSE_AFTER = {"for", "to", "the", "a", "an", "and", "with", "about", "of", "at", "in", "my", "on", "is",
                "that", "like", "some", "from", "near", "into", "i", "you", "me", "but", "or", "so", "um", "uh"}
_FILLERS = ["um", "uh", "so", "and", "like"]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(place=rng.choice(_PLACES), thing=rng.choice(_THINGS), person=rng.choice(_PEOPLE),
                           time=rng.choice(_TIMES), topic=rng.choice(_TOPICS))


def _is_question(text: str) -> bool:
    first = text.split()[0].lower()
    return first in {"what", "what's", "how", "why", "who", "where", "when", "is", "do", "can", "could", "does"}


def _punctuate_complete(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if _is_question(text):
        return text + ("?" if roll < 0.7 else "." if roll < 0.9 else "")
    return text + ("." if roll < 0.75 else "!" if roll < 0.82 else "")


def _punctuate_partial(text: str, rng: random.Random) -> str:
    # Whisper often closes a cut-off utterance with a period or an ellipsis, and a cut-off question with a
    # question mark ("How much does it cost to fly to?"); the model must not trust that.
    roll = rng.random()
    if _is_question(text) and roll < 0.5:
        return text + "?"
    return text + ("..." if roll < 0.25 else "." if roll < 0.55 else "," if roll < 0.7 else "")


def corpus(count: int = 6000, seed: int = 7) -> list[tuple[str, int]]:
    """(text, label) pairs; label 1 = a complete turn, 0 = an unfinished one."""
    rng = random.Random(seed)
    items: list[tuple[str, int]] = []
    while len(items) < count:
        sentence = _fill(rng.choice(_TEMPLATES), rng)
        words = sentence.split()
        if rng.random() < 0.5 or len(words) < 2:
            text = sentence[0].upper() + sentence[1:]
            items.append((_punctuate_complete(text, rng), 1))
            continue
        cuts = [i for i in range(1, len(words)) if words[i - 1].lower() in _PAUSE_AFTER]
        cut = rng.choice(cuts) if cuts and rng.random() < 0.75 else rng.randrange(1, len(words))
        prefix = words[:cut]
        if rng.random() < 0.15:
            prefix = prefix + [rng.choice(_FILLERS)]
        text = " ".join(prefix)
        items.append((_punctuate_partial(text[0].upper() + text[1:], rng), 0))
    return items
