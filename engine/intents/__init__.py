"""Local intents: what the user said, matched against sentence templates, becomes a built-in tool call.

Everyday requests (timers, reminders, notes, the time, arithmetic, unit conversion, opening things, the clipboard,
the screen, system status, the background tasks) are recognised without the language model, by Home Assistant's
intent parser (`hassil`) over the templates in assets/intents/<language>/*.yaml. Slots become the tool's
arguments (durations, clock times, spoken arithmetic and units are parsed by engine.intents.slots), so delegation
works on the tiniest model; the LLM handles whatever no template covers.

    matcher = IntentMatcher.load()
    hit = matcher.match("Remind me in ten minutes to check the oven", IntentContext(now=datetime.now()))
    hit.tool, hit.arguments   # "set_timer", {"seconds": 600, "text": "check the oven"}
    hit.clarify               # None, or a question when a needed slot is missing or unreadable

The spoken answer is rendered from the tool's result by engine.intents.responses.
"""

from engine.intents.matcher import IntentContext, IntentMatch, IntentMatcher

__all__ = ["IntentContext", "IntentMatch", "IntentMatcher"]
