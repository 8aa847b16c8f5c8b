"""What Venus says after a recognised request: rendered from the tool's result, never from a model's guess.

Each answer is one or two short sentences in plain words; numbers and clock times are written so the voice's
text normalizer reads them well. The result data is untrusted (it may hold screen or clipboard text): it is
only quoted, cut short, and never read as an instruction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.intents.builders import due_time
from engine.intents.matcher import IntentMatch

_QUOTE_WORDS = 40  # the most words of screen or clipboard text read out; "want the rest?" is the UI's job
_UNIT_WORDS = {
    "m": ("meter", "meters"), "km": ("kilometer", "kilometers"), "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"), "in": ("inch", "inches"), "ft": ("foot", "feet"), "yd": ("yard", "yards"),
    "mi": ("mile", "miles"), "nmi": ("nautical mile", "nautical miles"), "kg": ("kilogram", "kilograms"),
    "g": ("gram", "grams"), "mg": ("milligram", "milligrams"), "t": ("tonne", "tonnes"), "lb": ("pound", "pounds"),
    "oz": ("ounce", "ounces"), "st": ("stone", "stone"), "l": ("liter", "liters"), "ml": ("milliliter", "milliliters"),
    "gal": ("gallon", "gallons"), "qt": ("quart", "quarts"), "pt": ("pint", "pints"), "cup": ("cup", "cups"),
    "fl oz": ("fluid ounce", "fluid ounces"), "tbsp": ("tablespoon", "tablespoons"),
    "tsp": ("teaspoon", "teaspoons"), "s": ("second", "seconds"), "ms": ("millisecond", "milliseconds"),
    "min": ("minute", "minutes"), "h": ("hour", "hours"), "d": ("day", "days"), "wk": ("week", "weeks"),
    "km/h": ("kilometer per hour", "kilometers per hour"), "mph": ("mile per hour", "miles per hour"),
    "m/s": ("meter per second", "meters per second"), "kn": ("knot", "knots"), "b": ("byte", "bytes"),
    "kb": ("kilobyte", "kilobytes"), "mb": ("megabyte", "megabytes"), "gb": ("gigabyte", "gigabytes"),
    "tb": ("terabyte", "terabytes"), "m2": ("square meter", "square meters"), "ft2": ("square foot", "square feet"),
    "acre": ("acre", "acres"), "ha": ("hectare", "hectares"), "j": ("joule", "joules"),
    "kcal": ("calorie", "calories"), "kwh": ("kilowatt hour", "kilowatt hours"), "pa": ("pascal", "pascals"),
    "bar": ("bar", "bar"), "psi": ("psi", "psi"), "c": ("degree Celsius", "degrees Celsius"),
    "f": ("degree Fahrenheit", "degrees Fahrenheit"), "k": ("kelvin", "kelvin"),
}
_OPERATOR_WORDS = [("**", " to the power of "), ("*", " times "), ("/", " divided by "), ("+", " plus "),
                   ("-", " minus "), ("%", " modulo ")]


def number(value: Any) -> str:
    """A number as it should be read: whole numbers plain, others to at most 4 significant decimals."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.1f}".rstrip("0").rstrip(".")
    return f"{x:.4g}" if abs(x) >= 1e-4 else f"{x:.2e}"


def clock(moment: datetime) -> str:
    """3:40 PM, 9 AM, noon, midnight."""
    if moment.hour == 12 and moment.minute == 0:
        return "noon"
    if moment.hour == 0 and moment.minute == 0:
        return "midnight"
    hour = moment.hour % 12 or 12
    suffix = "AM" if moment.hour < 12 else "PM"
    return f"{hour} {suffix}" if moment.minute == 0 else f"{hour}:{moment.minute:02d} {suffix}"


def _day(moment: datetime, now: datetime) -> str:
    days = (moment.date() - now.date()).days
    if days == 0:
        return "today" if moment.hour < 18 else "tonight"
    if days == 1:
        return "tomorrow"
    if days < 7:
        return f"on {moment:%A}"
    return f"on {moment:%A, %B} {moment.day}"


def _due_words(moment: datetime, now: datetime) -> str:
    """"at 6:30 AM" today, "tomorrow at 6:30 AM" or "on Friday at 6:30 AM" later: three alarms at one hour on three
    days were listed as the same alarm three times."""
    return f"at {clock(moment)}" if moment.date() == now.date() else f"{_day(moment, now)} at {clock(moment)}"


def duration(seconds: float) -> str:
    """90 -> "a minute and a half", 600 -> "10 minutes", 5400 -> "an hour and a half"."""
    seconds = round(seconds)
    if seconds == 90:
        return "a minute and a half"
    if seconds == 5400:
        return "an hour and a half"
    if seconds == 1800:
        return "half an hour"
    parts = []
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(("an" if name == "hour" else "a") + f" {name}" if count == 1 else f"{count} {name}s")
    if not parts:
        return "a moment"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


_PART_WORDS = {2: ("half", "halves"), 3: ("third", "thirds"), 4: ("quarter", "quarters"), 5: ("fifth", "fifths"),
               10: ("tenth", "tenths")}


def _fraction_words(numerator: int, denominator: int) -> str:
    """(1, 3) -> "a third", (2, 3) -> "2 thirds"; other fractions as "1 over 7"."""
    one, many = _PART_WORDS.get(denominator, ("", ""))
    if not one:
        return f"{numerator} over {denominator}"
    if numerator == 1:
        return one if denominator == 2 else f"a {one}"  # "half of 250", "a third of 99"
    return f"{numerator} {many}"


def _spoken_expression(expression: str) -> str:
    text = re.sub(r"\((\d+(?:\.\d+)?)/100\)\*", r"\1 percent of ", expression)
    text = re.sub(r"\((\d+)/(\d+)\)\*", lambda m: _fraction_words(int(m.group(1)), int(m.group(2))) + " of ", text)
    text = text.replace("(", "").replace(")", "")
    text = re.sub(r"sqrt", "the square root of ", text)
    for symbol, words in _OPERATOR_WORDS:
        text = text.replace(symbol, words)
    return re.sub(r"\s+", " ", text).strip()


def _unit(unit: str, value: float) -> str:
    one, many = _UNIT_WORDS.get(unit.lower(), (unit, unit))
    return one if abs(float(value)) == 1 else many


def _quote(text: str) -> str:
    words = str(text).split()
    cut = " ".join(words[:_QUOTE_WORDS])
    return cut + (" …and more." if len(words) > _QUOTE_WORDS else "")


def _listing(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _due(item: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(str(item["due_at"]))


def _reminder_label(item: Mapping[str, Any]) -> str:
    """'a 5-minute timer' for a timer set without words (its text is Venus's own 'Your ... timer is done.'),
    else the reminder's words."""
    if item.get("timer") and item.get("set_at"):
        length = round((_due(item) - datetime.fromisoformat(str(item["set_at"]))).total_seconds())
        for size, unit in ((3600, "hour"), (60, "minute"), (1, "second")):
            if length % size == 0 and length // size < (24 if size == 3600 else 60):
                count = length // size
                return f"a {'one' if count == 1 else count}-{unit} timer"
        return f"a timer for {duration(length)}"
    return str(item.get("text", "a reminder")).strip().rstrip(".")


def _left(seconds: float) -> str:
    """Time still to go as a listener wants it: to the second under ten minutes, then to the minute."""
    seconds = max(1, round(seconds))
    if seconds >= 600:
        seconds = round(seconds / 60) * 60
    return duration(seconds)


def _time_left(items: list[Mapping[str, Any]], said: str, now: datetime) -> str:
    """'How much time is left on my timer?': the soonest timer (or reminder, or alarm, as asked) and its time."""
    asked = re.search(r"\b(timer|reminder)s?\b", said, re.IGNORECASE)
    kind = asked.group(1).lower() if asked else ""
    pool = [item for item in items if not kind or bool(item.get("timer")) == (kind == "timer")] or items
    if not pool:
        return "You have no timers running." if kind == "timer" else "You have no timers or reminders."
    first = pool[0]
    due = _due(first)
    left = (due - now).total_seconds()
    if left <= 0:
        return f"{_reminder_label(first)[:1].upper()}{_reminder_label(first)[1:]} is going off now."
    if first.get("timer"):
        answer = f"Your {_reminder_label(first).removeprefix('a ')} has {_left(left)} left."  # "Your 5-minute timer"
    else:
        at = clock(due) if due.date() == now.date() else f"{_day(due, now)} at {clock(due)}"
        answer = f"Your reminder, {_reminder_label(first)}, is in {_left(left)}, at {at}."
    others = len(pool) - 1
    if others:
        answer += f" {others} more after it." if others > 1 else " One more after it."
    return answer


_LIST_TOOLS = frozenset({"add_to_list", "read_list", "remove_from_list", "clear_list"})
_LIST_SAID = 8  # items read out before "and N more"


def _list_answer(tool: str, data: Mapping[str, Any]) -> str:
    """What to say after a list tool ran, from what it did (items added, already there, not found)."""
    name = f"your {data.get('list') or 'shopping'} list"
    if tool == "read_list":
        items = [str(item) for item in data.get("items") or []]
        if not items:
            return f"{name[:1].upper()}{name[1:]} is empty."
        said = items[:_LIST_SAID] + ([f"{len(items) - _LIST_SAID} more"] if len(items) > _LIST_SAID else [])
        count = "one thing" if len(items) == 1 else f"{len(items)} things"
        return f"{name[:1].upper()}{name[1:]} has {count}: {_listing(said)}."
    if tool == "clear_list":
        return f"Okay, {name} is empty now."
    if tool == "add_to_list":
        added, already = list(data.get("added") or []), list(data.get("already") or [])
        said = f"Okay, I added {_listing(added)} to {name}." if added else ""
        if already:
            said = f"{said} You already have {_listing(already)} on {name}.".strip()
        return said
    removed, missing = list(data.get("removed") or []), list(data.get("missing") or [])
    said = f"Okay, I took {_listing(removed)} off {name}." if removed else ""
    if missing:
        said = f"{said} I didn't find {_listing(missing)} on {name}.".strip()
    return said


def render_result(match: IntentMatch, result: Any, now: datetime | None = None,
                  reminders: Sequence[Mapping[str, Any]] = ()) -> str:
    """What to say once the task for `match` succeeded with `result` (the tool's data); `reminders`: the timers
    and reminders still to come ({"due_at", ...}), which "what are you working on?" mentions too."""
    now = now or datetime.now()
    data = result if isinstance(result, dict) else {}
    args = match.arguments
    tool = match.tool
    if tool == "set_timer":
        span = duration(float(args.get("seconds", 0)))
        if match.intent == "snooze":
            return f"Okay, I'll remind you again in {span}." if args.get("text") else f"Okay, a timer for {span}."
        if match.intent in ("remind", "wake") and args.get("text"):
            return f"Okay, in {span} I'll remind you to {args['text']}."
        label = f" for {args['text']}" if args.get("text") else ""
        return f"Okay, a timer{label} for {span} is running."
    if tool == "set_reminder":
        when = datetime.fromisoformat(str(args["at"]))
        if match.intent == "wake" and args.get("text") == "wake up":
            return f"Okay, I'll wake you {_day(when, now)} at {clock(when)}."
        return f"Okay, I'll remind you {_day(when, now)} at {clock(when)} to {args.get('text', '')}."
    if tool == "list_reminders":
        items = [item for item in data.get("reminders") or [] if item.get("due_at")]
        if match.intent == "time_left":
            return _time_left(items, match.text, now)
        if not items:
            return "You have no timers or reminders."
        spoken = [f"{_reminder_label(item)} {_due_words(_due(item), now)}" for item in items[:3]]
        left = (_due(items[0]) - now).total_seconds()
        if len(items) == 1 and 0 < left < 3600:
            spoken[0] += f", in {_left(left)}"
        if len(items) > 3:  # "A, B, C and 17 more", not "A, B and C, and 17 more"
            spoken.append(f"{len(items) - 3} more")
        count = "one" if len(items) == 1 else str(len(items))
        return f"You have {count}: {_listing(spoken)}."
    if tool in _LIST_TOOLS:
        return _list_answer(tool, data)
    if tool == "change_reminder":
        if "seconds" in args:
            return f"Okay, it's now set for {duration(float(args['seconds']))} from now."
        moved = datetime.fromisoformat(str(args["at"]))
        return f"Okay, I moved it to {_day(moved, now)} at {clock(moved)}."
    if tool == "cancel_reminder":
        return "Okay, it's cancelled."
    if tool == "create_note":
        return f"Noted: {args.get('text', '')}."
    if tool == "search_notes":
        notes = data.get("notes") or []
        about = f" about {args['query']}" if args.get("query") else ""
        if not notes:
            return f"I found no notes{about}."
        first = notes[0]
        if len(notes) == 1:
            return f"One note{about}: {_quote(first.get('preview') or first.get('title', ''))}"
        return f"{len(notes)} notes{about}. The newest says: {_quote(first.get('preview') or first.get('title', ''))}"
    if tool == "current_time":
        moment = datetime.fromisoformat(str(data["iso"])) if data.get("iso") else now
        if re.search(r"\b(date|day|today|month|year)\b", match.text, re.IGNORECASE):
            return f"Today is {moment:%A, %B} {moment.day}, {moment.year}."
        return f"It's {clock(moment)}."
    if tool == "calculate":
        said = f"{_spoken_expression(str(args.get('expression', '')))} is {number(data.get('value'))}."
        return said[:1].upper() + said[1:]
    if tool == "convert_units":
        value, got = float(args.get("value", 0)), data.get("value")
        return (f"{number(value)} {_unit(str(args.get('from_unit', '')), value)} is "
                f"{number(got)} {_unit(str(args.get('to_unit', '')), float(got or 0))}.")
    if tool == "open":
        target = str(data.get("opened") or args.get("target", ""))
        kind = data.get("kind")
        shown = re.sub(r"^https?://", "", target).rstrip("/") if kind == "url" else args.get("target", target)
        return f"Opening {shown}."
    if tool == "read_clipboard":
        text = str(data.get("text") or "").strip()
        return f"Your clipboard says: {_quote(text)}" if text else "Your clipboard is empty."
    if tool == "write_clipboard":
        return "Done, it's on your clipboard."
    if tool == "read_screen":
        lines = [str(line.get("text", line)) if isinstance(line, dict) else str(line) for line in data.get("lines", [])]
        text = " ".join(lines).strip()
        return f"Your screen says: {_quote(text)}" if text else "I can't read any text on the screen."
    if tool == "system_status":
        parts = []
        battery = data.get("battery")
        if battery:
            state = "charging" if battery.get("plugged_in") else "on battery"
            parts.append(f"Battery is at {number(round(battery['percent']))} percent, {state}")
        if "cpu_percent" in data:
            parts.append(f"the processor is {number(round(data['cpu_percent']))} percent busy")
        if data.get("memory"):
            parts.append(f"memory is {number(round(data['memory']['percent']))} percent used")
        if data.get("disk"):
            parts.append(f"{number(round(data['disk']['free_gb']))} gigabytes are free on disk")
        return (_listing(parts) + ".")[:1].upper() + (_listing(parts) + ".")[1:] if parts else "All looks normal."
    if tool == "find_files":
        matches = data.get("matches") or []
        if not matches:
            return "I found no files like that."
        names = [str(m.get("path", "")).replace("\\", "/").rsplit("/", 1)[-1] for m in matches[:3]]
        more = f", and {len(matches) - 3} more" if len(matches) > 3 else ""
        count = "one file" if len(matches) == 1 else f"{len(matches)} files"
        return f"I found {count}: {_listing(names)}{more}."
    if tool == "list_tasks":
        tasks = data.get("tasks") or []
        working = f"I'm working on {_listing([str(t.get('title', t.get('tool', 'a task'))) for t in tasks[:3]])}." \
            if tasks else "Nothing is running."
        return f"{working} {_waiting(reminders, now)}".strip() if reminders else \
            working if tasks else "Nothing right now."
    if tool == "cancel_task":
        return f"Okay, I stopped {data.get('title', 'it')}."
    return "Done."


def _waiting(reminders: Sequence[Mapping[str, Any]], now: datetime) -> str:
    # "One timer or reminder is set, due in 48 seconds." (a timer left running is work the user set Venus to do)
    dues = sorted(d for d in (due_time(r.get("due_at")) for r in reminders) if d is not None)
    if not dues:
        return ""
    left = (dues[0] - now).total_seconds()
    due = f"in {duration(max(1.0, left))}" if left < 3600 else f"{_day(dues[0], now)} at {clock(dues[0])}"
    if len(dues) == 1:
        return f"One timer or reminder is set, due {due}."
    return f"{_count_word(len(dues))} timers or reminders are set, the next due {due}."


def _count_word(n: int) -> str:
    return ("Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")[n - 2] if 2 <= n <= 9 else str(n)


def render_failure(match: IntentMatch, error: str) -> str:
    """What to say when the task for `match` failed: what went wrong, in one sentence."""
    reason = re.sub(r"\s+", " ", str(error)).strip().rstrip(".")
    reason = reason[:160] + ("…" if len(reason) > 160 else "")
    doing = {"calculate": "work that out", "convert_units": "convert that", "open": f"open {match.arguments.get('target', 'that')}",
             "set_timer": "set that timer", "set_reminder": "set that reminder", "create_note": "save the note",
             "read_screen": "read the screen", "read_clipboard": "read the clipboard",
             "write_clipboard": "copy that", "find_files": "search the files", "system_status": "check the computer",
             }.get(match.tool, "do that")
    return f"Sorry, I couldn't {doing}: {reason}."


def acknowledgement(match: IntentMatch) -> str:
    """Said when a task takes longer than a moment: what Venus is doing, before its result."""
    return {"read_screen": "Let me read the screen.", "find_files": "Searching your files.",
            "open": "Opening it.", "system_status": "Checking."}.get(match.tool, "On it.")
