"""From a matched template's slots to a tool call: one builder per intent.

A builder returns the tool's arguments, a `Clarify` (the tool is clear, a slot is missing or unreadable: Venus
asks), or None (the slot text is not what the template needs, e.g. "what is love" is not arithmetic: the next
template, or the LLM, gets the sentence).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from engine.intents.slots import (
    parse_clock,
    parse_date,
    parse_duration,
    parse_number,
    parse_when,
    spoken_expression,
    take_number,
)


@dataclass(frozen=True)
class Clarify:
    """What Venus says instead of running the tool: a question, or why there is nothing to do.

    `follow_up`: for a question, the request the user's answer completes, with "{answer}" where the answer
    goes ("set a timer for {answer}"): "For how long?" - "Five minutes." runs the timer."""

    question: str
    follow_up: str = ""


@dataclass(frozen=True)
class Built:
    """A tool call ready for the harness.

    `follow_up`: the request that more of the same continues, with "{answer}" for the new words ("Add bread to my
    shopping list." - "And eggs too.")."""

    tool: str
    arguments: dict[str, Any]
    follow_up: str = ""


Slots = Mapping[str, Any]
Result = Built | Clarify | None

_ARTICLES = re.compile(r"^(?:(?:the|a|an|my|some|that|this)\s+)+", re.IGNORECASE)
_TRAILING = re.compile(r"[\s,.;:!?]+$")
_COURTESY = re.compile(r"(?:[\s,]+(?:please|thanks|thank you|thank you very much|thanks a lot|cheers|for me))+$",
                       re.IGNORECASE)


def clean_text(value: Any) -> str:
    """A free-text slot as the tool should get it: trimmed, without trailing punctuation or a leading 'to'."""
    text = _TRAILING.sub("", str(value or "").strip())
    # courtesy at the end belongs to the request, not to the note or reminder ("..., thanks")
    text = _TRAILING.sub("", _COURTESY.sub("", text))
    text = re.sub(r"^(?:to|that)\s+", "", text, flags=re.IGNORECASE).strip()
    if len(text) >= 2 and text[0] in "\"'“‘" and text[-1] in "\"'”’":
        text = text[1:-1].strip()  # 'copy "hello" to the clipboard'
    return text


def _plain(value: Any) -> str:
    return _ARTICLES.sub("", clean_text(value)).strip()


@dataclass(frozen=True)
class Context:
    """What builders may consult: the clock, pending reminders and the running tasks."""

    now: datetime
    reminders: Sequence[Mapping[str, Any]]
    tasks: Sequence[Mapping[str, Any]]
    tools: frozenset[str] | None = None  # the tools that are on (None: all)
    assistant_name: str = "Venus"  # settings.conversation.assistant_name


def _seconds(value: Any) -> float | None:
    return parse_duration(str(value or ""))  # how long is too long is the tool's schema's call


def set_timer(slots: Slots, ctx: Context) -> Result:
    seconds = _seconds(slots.get("duration"))
    if seconds is None:
        return None if slots.get("duration") else Clarify("For how long?", "set a timer for {answer}")
    args: dict[str, Any] = {"seconds": seconds}
    label = clean_text(slots.get("label"))
    if label:
        args["text"] = label
    return Built("set_timer", args)


def _leading_duration(text: str) -> tuple[float, str] | None:
    """A duration said first and what follows it: "25 minute pomodoro" -> (1500, "pomodoro")."""
    words = text.split()
    for n in range(min(6, len(words) - 1), 0, -1):
        seconds = parse_duration(" ".join(words[:n]))
        if seconds is not None:
            return seconds, " ".join(words[n:])
    return None


def _holds_duration(text: str) -> bool:
    """A length of time anywhere in the words ("at 25 minutes below"): no program or file is named so."""
    words = text.split()
    return any(parse_duration(" ".join(words[i:i + n])) is not None
               for n in (2, 3) for i in range(len(words) - n + 1))


def timed(slots: Slots, ctx: Context) -> Result:
    """ "start a 25 minute pomodoro", "give me a ten minute break": an activity with its length is a timer."""
    split = _leading_duration(clean_text(slots.get("timed")))
    if split is None:
        return None
    seconds, label = split
    if re.fullmatch(r"(?:timer|countdown|count down|alarm)", label, re.IGNORECASE):
        return Built("set_timer", {"seconds": seconds})  # "start a five minute timer": nothing to name
    return Built("set_timer", {"seconds": seconds, "text": label})


def set_timer_ask(slots: Slots, ctx: Context) -> Result:
    return Clarify("For how long should the timer run?", "set a timer for {answer}")


# "every day", "each Monday", "weekly": a reminder that repeats, which the reminder tools cannot set (limits.yaml
# declines it rather than setting one reminder that says "take my pills every day")
_REPEATING = re.compile(r"\b(?:every|each)\s+(?:other\s+)?(?:day|morning|afternoon|evening|night|week|weekday|weekend|"
                        r"month|year|hour|minute|(?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b|"
                        r"\b(?:daily|weekly|monthly|hourly|nightly)\b", re.IGNORECASE)


def _reminder(when_text: str, text: str, ctx: Context) -> Result:
    if _REPEATING.search(f"{when_text} {text}"):
        return None
    when = parse_when(when_text, ctx.now)
    if when is None:
        if parse_date(when_text, ctx.now) is not None:  # "remind me tomorrow to ..." : a day, no time
            return Clarify(f"At what time {clean_text(when_text)}?",
                           f"remind me {clean_text(when_text)} at {{answer}} to {text}" if text else "")
        return None
    if when.delay_s is not None:  # with nothing to say it is a timer
        return Built("set_timer", {"seconds": when.delay_s, "text": text} if text else {"seconds": when.delay_s})
    if not text:
        return Clarify("What should I remind you about?", f"remind me {clean_text(when_text)} to {{answer}}")
    assert when.at is not None
    return Built("set_reminder", {"at": when.at.strftime("%Y-%m-%dT%H:%M"), "text": text})


def remind(slots: Slots, ctx: Context) -> Result:
    return _reminder(str(slots.get("when") or ""), clean_text(slots.get("text")), ctx)


def remind_told(slots: Slots, ctx: Context) -> Result:
    """ "tell me in ten minutes to ...": a reminder only when a whole time was said; otherwise ("tell me about
    Rome", "let me know about the weather tomorrow") it is a question for the model, never a clarifying one."""
    built = remind(slots, ctx)
    return built if isinstance(built, Built) else None


def wake(slots: Slots, ctx: Context) -> Result:
    when_text = str(slots.get("when") or "")
    clock = parse_clock(re.sub(r"^(?:at|for)\s+", "", when_text.strip().lower()))
    if clock is not None and not clock.meridiem_given and clock.hour < 12:
        when_text += " am"  # "wake me up at 7": the morning
    return _reminder(when_text, clean_text(slots.get("text")) or "wake up", ctx)


def remind_ask(slots: Slots, ctx: Context) -> Result:
    text = clean_text(slots.get("text"))
    words = text.split()
    for k in range(min(8, len(words) - 1), 0, -1):  # the time said first or last, without a "to" between
        for when, rest in ((" ".join(words[:k]), words[k:]), (" ".join(words[-k:]), words[:-k])):
            if parse_when(when, ctx.now) is not None:
                return _reminder(when, clean_text(" ".join(rest)), ctx)
    if text:
        return Clarify("When should I remind you?", f"remind me to {text} {{answer}}")
    return Clarify("What should I remind you about, and when?", "remind me to {answer}")


def list_reminders(slots: Slots, ctx: Context) -> Result:
    return Built("list_reminders", {})


def _overlap(words: str, candidate: str) -> int:
    stop = {"the", "a", "an", "my", "to", "for", "of", "and", "that", "this", "one"}
    left = {w for w in re.findall(r"[a-z0-9']+", words.lower()) if w not in stop}
    right = {w for w in re.findall(r"[a-z0-9']+", candidate.lower()) if w not in stop}
    return len(left & right) + sum(1 for a in left for b in right if a != b and len(a) > 3 and
                                   (a.startswith(b[:4]) or b.startswith(a[:4])))


def _choose(which: str, items: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> Mapping[str, Any] | None:
    if not items:
        return None
    if not which:
        return items[-1] if len(items) == 1 else None
    scored = [(_overlap(which, " ".join(str(item.get(f, "")) for f in fields)), i) for i, item in enumerate(items)]
    best = max(scored)
    if best[0] == 0 or sum(1 for s, _ in scored if s == best[0]) > 1:
        return None
    return items[best[1]]


def due_time(value: Any) -> datetime | None:
    """A reminder's due time as a local naive datetime: the harness keeps Unix time (its pending_reminders), the
    intent benchmark's contexts write ISO times. Read as ISO only, every reminder the runtime asked about by its time
    ("cancel my reminder at 9") was "not found"."""
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value)
        moment = datetime.fromisoformat(str(value))
    except (ValueError, OverflowError, OSError):
        return None
    return moment.astimezone().replace(tzinfo=None) if moment.tzinfo is not None else moment


def _due_at(reminder: Mapping[str, Any]) -> datetime | None:
    return due_time(reminder.get("due_at", ""))


def _by_time(which: str, reminders: Sequence[Mapping[str, Any]], now: datetime) -> Mapping[str, Any] | None:
    """The one reminder due at the time or on the day named ("the one at 9", "my reminder for tomorrow
    morning"); None when none or several are."""
    text = re.sub(r"^(?:(?:at|for|on|due|set for|that's at|that is at)\s+)+", "", which.lower()).strip()
    part = re.search(r"\b(morning|afternoon|evening|night|tonight)\b", text)
    clock = parse_clock(re.sub(r"\b(?:today|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|saturday|"
                               r"sunday)\b", "", text).strip() or "-")
    day_words = re.sub(r"\b(?:morning|afternoon|evening|night)\b", "", text).strip()
    if clock is not None:  # "at 9": the number is the clock's, only a day word names the day
        day_words = " ".join(re.findall(r"\b(?:today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|"
                                        r"sunday)\b", text))
    day = parse_date(day_words or "-", now)
    if clock is None and day is None and part is None:
        return None

    def fits(due: datetime) -> bool:
        if clock is not None:
            hour_fits = due.hour == clock.hour if clock.meridiem_given else due.hour % 12 == clock.hour % 12
            if not hour_fits or due.minute != clock.minute:
                return False
        if day is not None and due.date() != day.date():
            return False
        if part is not None:
            name = part.group(1)
            lo, hi = {"morning": (4, 12), "afternoon": (12, 18), "evening": (17, 23), "night": (18, 28),
                      "tonight": (17, 28)}[name]
            if not lo <= (due.hour if due.hour >= 4 else due.hour + 24) < hi:
                return False
        return True

    found = [r for r in reminders if (due := _due_at(r)) is not None and fits(due)]
    return found[0] if len(found) == 1 else None


def cancel_reminder(slots: Slots, ctx: Context, *, sentence: str = "") -> Result:
    if not ctx.reminders:
        return Clarify("There's no timer or reminder to cancel.")
    which = _plain(slots.get("which"))
    chosen = _choose(which, ctx.reminders, ("text",)) or (_by_time(which, ctx.reminders, ctx.now) if which else None)
    if chosen is None and not which and re.search(r"\btimer\b", sentence, re.IGNORECASE):
        timers = [r for r in ctx.reminders if re.search(r"\btimer\b", str(r.get("text", "")), re.IGNORECASE)]
        chosen = timers[0] if len(timers) == 1 else None  # "turn off the timer": the one timer among reminders
    if chosen is None and not which and len(ctx.reminders) > 1:
        return Clarify("Which one: " + " or ".join(str(r.get("text") or "the timer") for r in ctx.reminders[-3:])
                       + "?", "cancel the reminder about {answer}")
    if chosen is None:
        return Clarify(f"I can't find a timer or reminder about {which}.")
    return Built("cancel_reminder", {"reminder_id": str(chosen["reminder_id"])})


def create_note(slots: Slots, ctx: Context) -> Result:
    text = clean_text(slots.get("text"))
    if re.match(r"(?:when|what|how|who|where|why|if|whether)\b", text, re.IGNORECASE):
        return None  # "remember when we went to Paris?" is a memory to talk about, not a note
    return Built("create_note", {"text": text}) if text else Clarify("What should the note say?", "take a note: {answer}")


def create_note_ask(slots: Slots, ctx: Context) -> Result:
    return Clarify("What should the note say?", "take a note: {answer}")


def search_notes(slots: Slots, ctx: Context) -> Result:
    query = _plain(slots.get("query"))
    return Built("search_notes", {"query": query} if query else {})


_ITEM_SPLIT = re.compile(r"\s*(?:,|;|\band\b|&|\bplus\b|\bas well as\b)\s*", re.IGNORECASE)
_ITEM_LEAD = re.compile(r"^(?:a|an|the|some|also|more)\s+", re.IGNORECASE)


def list_items(value: Any) -> list[str]:
    """'milk, eggs and some bread' -> ['milk', 'eggs', 'bread']: one thing per comma or 'and' (so 'macaroni and
    cheese' is two: the cost of reading lists said aloud without a product catalog)."""
    items = []
    for part in _ITEM_SPLIT.split(clean_text(value)):
        item = _ITEM_LEAD.sub("", _TRAILING.sub("", part.strip())).strip()
        if item and item.lower() not in ("too", "also", "as well"):
            items.append(_count_in_digits(item))
    return items


def _count_in_digits(item: str) -> str:
    """'three cans of tomatoes' -> '3 cans of tomatoes': a count said in words is written as a list shows it."""
    words = item.split()
    found = take_number([w.lower() for w in words])
    if found is None or found[1] >= len(words) or not float(found[0]).is_integer() or words[0].lower() in ("a", "an"):
        return item
    return " ".join([str(int(found[0])), *words[found[1]:]])


def list_name(slots: Slots) -> str:
    """The list as named ('shopping', 'to do'); a request that names none means the shopping list."""
    name = _TRAILING.sub("", str(slots.get("listname") or "").strip()).lower()
    return _ARTICLES.sub("", name).strip() or "shopping"


_PRONOUNS = frozenset({"it", "that", "this", "them", "those", "these", "something", "stuff", "things"})


def add_to_list(slots: Slots, ctx: Context) -> Result:
    items = list_items(slots.get("items"))
    if not items:
        return None
    if all(item.lower() in _PRONOUNS for item in items):  # "put it on the list": what "it" is, the words do not say
        return Clarify(f"What should I put on the {list_name(slots)} list?", f"add {{answer}} to my {list_name(slots)} list")
    return Built("add_to_list", {"list": list_name(slots), "items": items}, f"add {{answer}} to my {list_name(slots)} list")


def read_list(slots: Slots, ctx: Context) -> Result:
    return Built("read_list", {"list": list_name(slots)})


def remove_from_list(slots: Slots, ctx: Context) -> Result:
    items = list_items(slots.get("items"))
    if not items:
        return None
    if all(item.lower() in _PRONOUNS for item in items):
        return Clarify(f"What should I take off the {list_name(slots)} list?",
                       f"take {{answer}} off my {list_name(slots)} list")
    return Built("remove_from_list", {"list": list_name(slots), "items": items})


def clear_list(slots: Slots, ctx: Context) -> Result:
    return Built("clear_list", {"list": list_name(slots)})


def current_time(slots: Slots, ctx: Context) -> Result:
    return Built("current_time", {})


def calculate(slots: Slots, ctx: Context) -> Result:
    expression = spoken_expression(str(slots.get("expression") or ""))
    return Built("calculate", {"expression": expression}) if expression else None


_VERBS = {"add": "+", "sum": "+", "multiply": "*", "subtract": "-", "take": "-", "divide": "/"}


def calculate_verbs(slots: Slots, ctx: Context, *, sentence: str = "") -> Result:
    a, b = parse_number(clean_text(slots.get("a"))), parse_number(clean_text(slots.get("b")))
    if a is None or b is None:
        return None
    verb = next((op for word, op in _VERBS.items() if re.search(rf"\b{word}\b", sentence.lower())), None)
    if verb is None and "divided into" in sentence.lower():
        verb = "/"
    if verb is None:
        return None
    return Built("calculate", {"expression": f"{a:g}{verb}{b:g}"})


def convert_units(slots: Slots, ctx: Context) -> Result:
    raw = clean_text(slots.get("quantity"))
    sign = -1.0 if re.match(r"(?:minus|negative)\s+", raw, re.IGNORECASE) else 1.0
    raw = re.sub(r"^(?:minus|negative)\s+", "", raw, flags=re.IGNORECASE)
    value = parse_number(raw) if raw else 1.0
    value = value * sign if value is not None else None
    if value is None or not slots.get("from_unit") or not slots.get("to_unit"):
        return None
    return Built("convert_units", {"value": value, "from_unit": str(slots["from_unit"]),
                                   "to_unit": str(slots["to_unit"])})


_DOMAIN = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|org|net|io|dev|edu|gov|co|uk|de|fr|app|ai|me|tv|info)"
                     r"(/\S*)?$", re.IGNORECASE)


def _as_url(target: str) -> str | None:
    spoken = re.sub(r"\s+dot\s+", ".", target.strip(), flags=re.IGNORECASE).replace(" ", "")
    if re.match(r"^https?://", spoken, re.IGNORECASE):
        return spoken
    return f"https://{spoken.lower()}" if _DOMAIN.match(spoken) else None


# Things in the room that people open: "open the door" is not a desktop request (a reason, not a test case).
_NOT_OPENABLE = re.compile(r"^(?:the\s+)?(?:doors?|windows?|fridge|oven|box|bottle|jar|can|mouth|eyes|presents?|"
                           r"gifts?|mail|letters?|package|parcel|curtains?|blinds|gate|garage|it|that|this|them|up)"
                           r"(?:\s|$)", re.IGNORECASE)


_OWN_THINGS = re.compile(r"(?:(?:a|an|the|new)\s+)?(?:timer|alarm|reminder|note|memo|countdown|stopwatch)s?",
                         re.IGNORECASE)


# "open up to me", "open your heart", "start a conversation with me": people, not things on the computer
_NOT_A_THING = re.compile(r"^(?:me|us|you|him|her|yourself|myself)$|^your\s|\bwith (?:me|us|you)$", re.IGNORECASE)


def open_target(slots: Slots, ctx: Context) -> Result:
    target = clean_text(slots.get("target"))
    target = re.sub(r"\s+(?:app|application|program|browser window)$", "", _plain(target), flags=re.IGNORECASE)
    if not target or _NOT_OPENABLE.match(target) or len(target.split()) > 5:
        return None  # things in the room, or a sentence that only starts with "open"
    if _holds_duration(target) or _OWN_THINGS.fullmatch(target) or _NOT_A_THING.search(target):
        return None  # "start a 25 minute pomodoro", "start a timer": Venus's own things, not programs
    url = _as_url(target)
    return Built("open", {"target": url or target})


def open_site(slots: Slots, ctx: Context) -> Result:
    target = _plain(slots.get("target"))
    if not target:
        return None
    url = _as_url(target) or f"https://{re.sub(r'[^a-z0-9-]', '', target.lower())}.com"
    return Built("open", {"target": url})


def read_clipboard(slots: Slots, ctx: Context) -> Result:
    return Built("read_clipboard", {})


def write_clipboard(slots: Slots, ctx: Context) -> Result:
    if re.search(r"\b(?:to|on|onto|in|into)\s+(?:my\s+|the\s+)?clipboard\W*$", str(slots.get("text") or ""),
                 re.IGNORECASE):
        return None  # "copy that to my clipboard" is read by the template that ends in "clipboard"
    text = clean_text(slots.get("text"))
    # "copy the word banana": the words named, not the naming
    text = clean_text(re.sub(r"^the (?:word|words|text|phrase|sentence|line)\s+(?=\S)", "", text, flags=re.IGNORECASE))
    if re.fullmatch(r"(?:it|that|this|the (?:text|words|answer|result))", text, re.IGNORECASE):
        return Clarify("What should I put on the clipboard?", "copy {answer} to the clipboard")
    return Built("write_clipboard", {"text": text}) if text else None


def read_screen(slots: Slots, ctx: Context) -> Result:
    return Built("read_screen", {})


def system_status(slots: Slots, ctx: Context) -> Result:
    return Built("system_status", {})


_EXTENSIONS = {"pdf": "*.pdf", "pdfs": "*.pdf", "word": "*.docx", "text": "*.txt", "excel": "*.xlsx",
               "spreadsheet": "*.xlsx", "spreadsheets": "*.xlsx", "image": "*.png", "python": "*.py",
               "markdown": "*.md", "csv": "*.csv", "mp3": "*.mp3", "zip": "*.zip", "photo": "*.jpg",
               "photos": "*.jpg", "jpeg": "*.jpg", "jpg": "*.jpg", "png": "*.png", "txt": "*.txt"}


def find_files(slots: Slots, ctx: Context) -> Result:
    args: dict[str, Any] = {}
    name = _plain(slots.get("name") or slots.get("kind"))
    if len(name.split()) > 4:
        return None  # a file is not named with a sentence ("find my note and out of the end it", misheard)
    if name.lower() in ("my", "the", "all", "any", "some", "these", "those", "all my", "all the"):
        return None  # "look for my spreadsheets" read as a name "my": the reading with the kind of file is right
    if name:
        name = re.sub(r"\s+dot\s+", ".", name, flags=re.IGNORECASE)
        args["name"] = _EXTENSIONS.get(name.lower(), name)
    content = clean_text(slots.get("content"))
    if content:
        args["content"] = content.strip("\"'")
    return Built("find_files", args) if args else None


def list_tasks(slots: Slots, ctx: Context) -> Result:
    return Built("list_tasks", {})


def cancel_task(slots: Slots, ctx: Context) -> Result:
    which = _plain(slots.get("which"))
    if re.search(r"\b(?:timers?|reminders?|alarms?)\b", which, re.IGNORECASE):
        return None  # cancel_reminder's templates
    if not ctx.tasks:
        return Clarify("I'm not working on anything right now.")
    if which.lower() in ("", "task", "job", "search", "download", "everything", "it", "that") and len(ctx.tasks) == 1:
        return Built("cancel_task", {"task_id": str(ctx.tasks[-1]["task_id"])})
    chosen = _choose(which, ctx.tasks, ("tool", "title"))
    if chosen is None:
        if not which or which.lower() in ("task", "job"):
            return Clarify("Which one: " + " or ".join(str(t.get("title") or t.get("tool")) for t in ctx.tasks[-3:])
                           + "?")
        return None if ctx.reminders and _choose(which, ctx.reminders, ("text",)) else \
            Clarify(f"I'm not working on anything like {which}.")
    return Built("cancel_task", {"task_id": str(chosen["task_id"])})


def repeat(slots: Slots, ctx: Context) -> Result:
    """'Say that again': the runtime says her last answer again (LocalRequests.refusal); this is what it says when
    she has said nothing yet."""
    return Clarify("I haven't said anything yet.")


SNOOZE_S = 600.0  # "Snooze." with no length: ten minutes


def snooze(slots: Slots, ctx: Context) -> Result:
    """ "Snooze for five minutes": a timer; the runtime gives it the words of the reminder that just went off, so the
    same reminder comes again (LocalRequests.match)."""
    seconds = _seconds(slots.get("duration")) if slots.get("duration") else SNOOZE_S
    return Built("set_timer", {"seconds": seconds}) if seconds is not None else None


_JUST_SET_S = 300.0  # "cancel it" right after a timer or reminder was set means that one


def _just_set(ctx: Context) -> Mapping[str, Any] | None:
    """The timer or reminder set last, when that was in the last few minutes (what "it" means right after)."""
    now = ctx.now.timestamp()
    recent = [r for r in ctx.reminders if isinstance(r.get("set_at"), int | float) and now - r["set_at"] < _JUST_SET_S]
    return max(recent, key=lambda r: r["set_at"]) if recent else None


def _reminder_to_change(ctx: Context) -> Mapping[str, Any] | Clarify:
    """The timer or reminder "it" means: the one just set, else the only one."""
    if (recent := _just_set(ctx)) is not None:
        return recent
    if len(ctx.reminders) == 1:
        return ctx.reminders[0]
    if not ctx.reminders:
        return Clarify("There's no timer or reminder to change.")
    return Clarify("Which one: " + " or ".join(str(r.get("text") or "the timer") for r in ctx.reminders[-3:]) + "?")


def change_reminder(slots: Slots, ctx: Context) -> Result:
    """ "Make it 10 minutes." / "Move it to 6 pm.": the timer or reminder just set, moved."""
    when_text = clean_text(slots.get("when"))
    seconds = parse_duration(re.sub(r"^(?:in|for)\s+", "", when_text, flags=re.IGNORECASE))
    if seconds is None and (number := parse_number(when_text)) is not None and 0 < number <= 180:
        seconds = number * 60  # "make it 10": minutes, as timers are said
    when = None if seconds is not None else parse_when(when_text, ctx.now)
    if seconds is None and when is None:
        if parse_date(when_text, ctx.now) is not None:
            return Clarify(f"At what time {when_text}?")
        return None  # "make it snappy"
    target = _reminder_to_change(ctx)
    if isinstance(target, Clarify):
        return target
    if seconds is None and when is not None and when.delay_s is not None:
        seconds = when.delay_s
    if seconds is not None:
        return Built("change_reminder", {"reminder_id": str(target["reminder_id"]), "seconds": seconds})
    assert when is not None and when.at is not None
    return Built("change_reminder", {"reminder_id": str(target["reminder_id"]), "at": when.at.strftime("%Y-%m-%dT%H:%M")})


def cancel_last(slots: Slots, ctx: Context) -> Result:
    """ "Cancel it." / "Undo that.": the timer or reminder just set, else the one task running."""
    if (recent := _just_set(ctx)) is not None:
        return Built("cancel_reminder", {"reminder_id": str(recent["reminder_id"])})
    if len(ctx.tasks) == 1:
        return Built("cancel_task", {"task_id": str(ctx.tasks[0]["task_id"])})
    if not ctx.tasks and not ctx.reminders:
        return Clarify("There's no timer, reminder or task to cancel.")
    return Clarify("Which one should I cancel? Say the timer, the reminder or the task by name.")


# What each family of built-in tools lets the user do, in the order "What can you do?" lists them.
_CAPABILITIES = (
    (("set_timer", "set_reminder"), "set timers and reminders"),
    (("create_note", "search_notes"), "take notes"),
    (("add_to_list", "read_list"), "keep lists"),
    (("current_time",), "tell the time"),
    (("calculate", "convert_units"), "do sums and conversions"),
    (("open",), "open apps and websites"),
    (("find_files",), "find files"),
    (("read_clipboard", "write_clipboard"), "use your clipboard"),
    (("read_screen",), "read your screen"),
    (("system_status",), "check your system"),
)


def capabilities(slots: Slots, ctx: Context) -> Result:
    """'What can you do?': said from the tools that are on (a tool turned off in settings is not offered)."""
    can = [said for tools, said in _CAPABILITIES if ctx.tools is None or any(t in ctx.tools for t in tools)]
    if not can:
        return Clarify("Every tool is turned off in settings, so I can only talk with you.")
    listed = can[0] if len(can) == 1 else ", ".join(can[:-1]) + " and " + can[-1]
    return Clarify(f"I can {listed}. Or just talk with me.")


# Days of the year that fall on the same date every year: what "until Christmas" means, a calendar fact.
_FIXED_DAYS = {"christmas": (12, 25), "christmas day": (12, 25), "christmas eve": (12, 24), "xmas": (12, 25),
               "new year": (1, 1), "new years": (1, 1), "new year's": (1, 1), "new year's day": (1, 1),
               "new years day": (1, 1), "new year's eve": (12, 31), "new years eve": (12, 31),
               "halloween": (10, 31), "valentine's day": (2, 14), "valentines day": (2, 14),
               "valentine's": (2, 14), "valentines": (2, 14)}


def _named_day(words: str, now: datetime) -> tuple[datetime, str] | None:
    key = re.sub(r"[^\w' ]+", "", words.lower()).strip()
    key = re.sub(r"^(the|next|this|this year's|this coming)\s+", "", key).strip()
    if key in ("weekend", "the weekend"):  # Saturday (today, on a weekend)
        ahead = 0 if now.weekday() >= 5 else 5 - now.weekday()
        return now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=ahead), "the weekend"
    fixed = _FIXED_DAYS.get(key)
    if fixed is not None:
        day = now.replace(month=fixed[0], day=fixed[1], hour=0, minute=0, second=0, microsecond=0)
        if day.date() < now.date():
            day = day.replace(year=now.year + 1)
        return day, words.strip().rstrip("?.!")
    day = parse_date(words, now)
    return (day, f"{day:%A}, {day:%B} {day.day}") if day is not None else None


def days_until(slots: Slots, ctx: Context) -> Result:
    """'How many days until Christmas?', '... until May 12th?', '... until Friday?': counted from the clock."""
    found = _named_day(str(slots.get("when", "")), ctx.now)
    if found is None:
        return None  # not a day the templates know: the LLM answers
    day, name = found
    days = (day.date() - ctx.now.date()).days
    on = f"{day:%A}, {day:%B} {day.day}"
    if days == 0:
        return Clarify("It's the weekend now." if name == "the weekend" else f"That's today, {on}.")
    if days == 1:
        return Clarify(f"That's tomorrow, {on}.")
    said = name if name in (on, "the weekend") else string.capwords(name)  # "New Year's Eve"
    return Clarify(f"{days} days until {said}." if name == on else f"{days} days until {said}, on {on}.")


def date_of(slots: Slots, ctx: Context) -> Result:
    """'What's the date tomorrow?', 'What day is Christmas?', 'What day of the week is May 12th?': from the clock."""
    found = _named_day(str(slots.get("when", "")), ctx.now)
    if found is None:
        return None
    day, name = found
    days = (day.date() - ctx.now.date()).days
    year = f", {day.year}" if day.year != ctx.now.year else ""
    on = f"{day:%A}, {day:%B} {day.day}{year}"
    if name == "the weekend":
        return None  # "what day is the weekend" asks nothing a date answers
    if days == 0:
        return Clarify(f"Today is {on}.")
    if days == 1:
        return Clarify(f"Tomorrow is {on}.")
    if not name.startswith(f"{day:%A}"):  # a named day: "Christmas is on Friday, December 25."
        return Clarify(f"{string.capwords(name)} is on {on}.")
    if re.search(rf"\b{day:%A}\b", str(slots.get("when", "")), re.IGNORECASE):  # a weekday: its date is the answer
        return Clarify(f"{day:%A} is {day:%B} {day.day}{year}.")
    return Clarify(f"{day:%B} {day.day}{year} is a {day:%A}.")  # a date: its weekday is the answer


# Places people name that the time-zone database does not (it names cities: "Asia/Tokyo", "America/New_York"):
# countries and big cities with one zone, and the US coasts.
_PLACE_ZONES = {
    "uk": "Europe/London", "england": "Europe/London", "britain": "Europe/London", "scotland": "Europe/London",
    "ireland": "Europe/Dublin", "france": "Europe/Paris", "germany": "Europe/Berlin", "spain": "Europe/Madrid",
    "italy": "Europe/Rome", "netherlands": "Europe/Amsterdam", "holland": "Europe/Amsterdam", "poland": "Europe/Warsaw",
    "sweden": "Europe/Stockholm", "norway": "Europe/Oslo", "finland": "Europe/Helsinki", "greece": "Europe/Athens",
    "turkey": "Europe/Istanbul", "japan": "Asia/Tokyo", "china": "Asia/Shanghai", "beijing": "Asia/Shanghai",
    "india": "Asia/Kolkata", "delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata", "mumbai": "Asia/Kolkata",
    "bangalore": "Asia/Kolkata", "korea": "Asia/Seoul", "south korea": "Asia/Seoul", "vietnam": "Asia/Ho_Chi_Minh",
    "thailand": "Asia/Bangkok", "israel": "Asia/Jerusalem", "egypt": "Africa/Cairo", "kenya": "Africa/Nairobi",
    "nigeria": "Africa/Lagos", "new zealand": "Pacific/Auckland", "california": "America/Los_Angeles",
    "san francisco": "America/Los_Angeles", "seattle": "America/Los_Angeles", "las vegas": "America/Los_Angeles",
    "washington": "America/New_York", "washington dc": "America/New_York", "boston": "America/New_York",
    "miami": "America/New_York", "atlanta": "America/New_York", "texas": "America/Chicago", "dallas": "America/Chicago",
    "houston": "America/Chicago", "hawaii": "Pacific/Honolulu", "mexico": "America/Mexico_City",
    "brazil": "America/Sao_Paulo", "rio": "America/Sao_Paulo", "rio de janeiro": "America/Sao_Paulo",
    "argentina": "America/Argentina/Buenos_Aires", "buenos aires": "America/Argentina/Buenos_Aires",
    "peru": "America/Lima", "colombia": "America/Bogota", "chile": "America/Santiago",
}


def _zone_of(place: str) -> Any:
    """The time zone a place names (a city of the database, or one of the places above), or None."""
    import zoneinfo

    key = re.sub(r"[^a-z ]", "", place.lower().replace("-", " ")).strip()
    key = re.sub(r"^(?:the|in)\s+", "", key)
    name = _PLACE_ZONES.get(key)
    if name is None:
        try:
            zones = zoneinfo.available_timezones()
        except Exception:  # no time-zone data on this system
            return None
        name = next((z for z in zones if z.split("/")[-1].replace("_", " ").lower() == key), None)
    try:
        return zoneinfo.ZoneInfo(name) if name else None
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


def world_time(slots: Slots, ctx: Context) -> Result:
    """'What time is it in Tokyo?': the computer's clock in the place's time zone (no task, like the time)."""
    place = _plain(slots.get("place")).strip()
    place = re.sub(r"\s+(?:now|right now|at the moment|today)$", "", place, flags=re.IGNORECASE)
    if not place or len(place.split()) > 4:
        return None
    zone = _zone_of(place)
    place = string.capwords(place) if place.islower() else place  # "new york" -> "New York"
    if zone is None:
        return Clarify(f"I don't know which time zone {place} is in. Try the name of a big city near it.")
    from engine.intents.responses import clock  # the one spoken clock format (responses imports this module)

    there = ctx.now.astimezone(zone)
    day = "" if there.date() == ctx.now.date() else f" on {there:%A}"
    return Clarify(f"It's {clock(there)}{day} in {place}.")

def identity(slots: Slots, ctx: Context) -> Result:
    """'Who are you?': her name (settings) and where she runs."""
    return Clarify(f"I'm {ctx.assistant_name}, a voice assistant running here on your computer. "
                   "Ask me what I can do.")


# Things no built-in tool can do, what to say instead, and the words in a tool's name that mean a tool can (an MCP
# server's "weather__forecast"): then the request is the model's, which can call that tool.
_OUT_OF_REACH = {
    "no_weather": (("weather", "forecast"),
                   "I can't check the weather myself: no forecast service is set up here. Want me to open "
                   "weather.com?", "open weather dot com"),
    "no_news": (("news", "headline", "stock", "score"),
                "I can't get the news or live scores: nothing here reads them. Name a news website and I'll open it.",
                ""),
    "no_music": (("music", "spotify", "song", "player", "media", "podcast"),
                 "I can't play music myself. I can open your music app if you tell me its name.", ""),
    "no_calls": (("call", "phone", "mail", "message", "sms", "text", "whatsapp", "slack"),
                 "I can't make calls or send or read messages from here. I can take a note so you remember to.",
                 ""),
    "no_devices": (("light", "home", "volume", "audio", "thermostat", "device", "switch", "lock"),
                   "I can't control the volume, lights or other devices: nothing here connects me to them.", ""),
    "no_currency": (("currency", "exchange", "forex", "money"),
                    "I can't convert money: exchange rates change every day, and nothing here fetches them.", ""),
    "no_repeating": (("calendar", "recurr", "repeat", "cron", "schedule"),
                     "I can only set one-time reminders for now, not ones that repeat. Tell me the next time, and "
                     "I'll remind you then.", ""),
}


def _out_of_reach(intent: str) -> Callable[[Slots, Context], Result]:
    words, answer, offer = _OUT_OF_REACH[intent]  # offer: the request a yes to the answer's question makes

    def build(slots: Slots, ctx: Context) -> Result:
        if ctx.tools is not None and any(word in tool.lower() for tool in ctx.tools for word in words):
            return None  # a tool that can: the model calls it
        if re.match(r"(?:me|us|it|that|this|them)\b", str(slots.get("anything") or ""), re.IGNORECASE):
            return None  # "call me Sam", "call it a day": no call
        return Clarify(answer, offer)
    return build

BUILDERS: dict[str, Callable[..., Result]] = {
    "set_timer": set_timer, "set_timer_ask": set_timer_ask, "timed": timed, "remind": remind, "wake": wake,
    "remind_ask": remind_ask, "remind_told": remind_told, "list_reminders": list_reminders,
    "time_left": list_reminders,
    "cancel_reminder": cancel_reminder,
    "create_note": create_note, "create_note_ask": create_note_ask, "search_notes": search_notes,
    "current_time": current_time, "calculate": calculate, "calculate_verbs": calculate_verbs,
    "convert_units": convert_units, "open": open_target, "open_site": open_site, "read_clipboard": read_clipboard,
    "write_clipboard": write_clipboard, "read_screen": read_screen, "system_status": system_status,
    "find_files": find_files, "list_tasks": list_tasks, "cancel_task": cancel_task, "capabilities": capabilities,
    "identity": identity, "days_until": days_until, "add_to_list": add_to_list, "read_list": read_list,
    "remove_from_list": remove_from_list, "clear_list": clear_list, "cancel_last": cancel_last, "change_reminder": change_reminder, "repeat": repeat,
    "snooze": snooze, "date_of": date_of, "world_time": world_time,
    **{intent: _out_of_reach(intent) for intent in _OUT_OF_REACH},
}
# Builders that also read the whole sentence (a word the templates match literally, such as "timer").
NEEDS_SENTENCE = frozenset({"calculate_verbs", "cancel_reminder"})
# The tool each intent leads to (for a Clarify, which tool the question is about).
TOOL_OF = {"set_timer_ask": "set_timer", "timed": "set_timer", "remind": "set_reminder", "remind_told": "set_reminder",
           "wake": "set_reminder",
           "remind_ask": "set_reminder", "create_note_ask": "create_note", "calculate_verbs": "calculate",
           "open_site": "open", "time_left": "list_reminders", "cancel_last": "cancel_reminder", "snooze": "set_timer",
           "capabilities": "", "identity": "", "days_until": "", "repeat": "", "world_time": "", "date_of": "",
           **dict.fromkeys(_OUT_OF_REACH, "")}  # "": an answer, no tool
