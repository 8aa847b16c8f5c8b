"""Slot values as people say them: numbers in words or digits, durations, clock times, spoken arithmetic.

Each parser takes the text a template's slot captured and returns a value, or None when the text is not one
(the matcher then tries the next template, or asks). They are plain functions over English words; a language
other than English brings its own module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_UNITS = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_FRACTIONS = {"half": 0.5, "quarter": 0.25, "third": 1 / 3}
_NUMBER_TOKEN = re.compile(r"^[-+]?\d+(?:[.,]\d+)*$")


def _tokens(text: str) -> list[str]:
    text = text.lower().replace("-", " ").replace("’", "'")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,000 -> 1000
    text = re.sub(r"[!?;:\"“”]|(?<!\d)[.,]|[.,](?!\d)", " ", text)
    return text.split()


def _digits(token: str) -> float | None:
    if not _NUMBER_TOKEN.match(token):
        return None
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


def take_number(tokens: list[str], start: int = 0) -> tuple[float, int] | None:
    """The number that starts at tokens[start] (digits or words: "twenty five", "a hundred and two", "2.5",
    "two point five", "one and a half"), and the index after it; None when no number starts there."""
    i, n = start, len(tokens)
    if i < n and (value := _digits(tokens[i])) is not None:
        i += 1
        if i + 2 < n and tokens[i] == "and" and tokens[i + 1] in ("a", "one") and tokens[i + 2] in _FRACTIONS:
            return value + _FRACTIONS[tokens[i + 2]], i + 3
        return value, i
    total, current, seen = 0.0, 0.0, False
    while i < n:
        word = tokens[i]
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word in _SCALES and (seen or word == "hundred"):
            scale = _SCALES[word]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
        elif word in ("a", "an") and i + 1 < n and tokens[i + 1] in _SCALES and not seen:
            current = 1
        elif word == "and" and seen and i + 1 < n and (tokens[i + 1] in _UNITS or tokens[i + 1] in _TENS):
            pass  # "a hundred and two"
        else:
            break
        seen = True
        i += 1
    if not seen:
        return None
    value = total + current
    if i + 1 < n and tokens[i] == "point":  # "two point five"
        decimals = ""
        j = i + 1
        while j < n and (tokens[j] in _UNITS and _UNITS[tokens[j]] < 10):
            decimals += str(_UNITS[tokens[j]])
            j += 1
        if decimals:
            return float(f"{int(value)}.{decimals}"), j
    if i + 2 < n and tokens[i] == "and" and tokens[i + 1] in ("a", "one") and tokens[i + 2] in _FRACTIONS:
        return value + _FRACTIONS[tokens[i + 2]], i + 3
    return value, i


def parse_number(text: str) -> float | None:
    """The whole of `text` as one number ("12", "twenty-five", "2.5", "a hundred"); None otherwise."""
    tokens = _tokens(text)
    if tokens and tokens[0] in ("a", "an") and len(tokens) == 1:
        return 1.0
    got = take_number(tokens)
    if got is None or got[1] != len(tokens):
        return None
    return got[0]


_DURATION_UNITS = {
    "second": 1, "seconds": 1, "sec": 1, "secs": 1, "s": 1,
    "minute": 60, "minutes": 60, "min": 60, "mins": 60, "m": 60,
    "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600, "h": 3600,
    "day": 86400, "days": 86400, "week": 604800, "weeks": 604800,
}
_VAGUE = {"couple": 2, "few": 3}


def parse_duration(text: str) -> float | None:
    """Seconds in a spoken duration: "ten minutes", "1.5 hours", "half an hour", "an hour and a half",
    "a minute and a half", "2 hours and 30 minutes", "90 secs", "a couple of minutes"; None otherwise."""
    tokens = [t for t in _tokens(re.sub(r"(\d)([a-z]+)\b", r"\1 \2", text.lower())) if t not in ("of", "just")]
    if len(tokens) >= 2 and tokens[0] in ("a", "an", "one") and tokens[1] in ("half", "quarter"):
        tokens = tokens[1:]  # "a quarter of an hour", "a half hour"
    if len(tokens) == 2 and tokens[0] in ("half", "quarter") and tokens[1] in _DURATION_UNITS:
        tokens = [tokens[0], "a", tokens[1]]  # "half hour"
    total, i, found = 0.0, 0, False
    while i < len(tokens):
        word = tokens[i]
        if word in ("and", ","):
            i += 1
            continue
        count: float | None = None
        if word in ("half", "quarter") and i + 2 < len(tokens) and tokens[i + 1] in ("a", "an") \
                and tokens[i + 2] in _DURATION_UNITS:  # "half an hour", "quarter of an hour"
            count, i = _FRACTIONS[word], i + 2
        elif word in ("a", "an") and i + 1 < len(tokens) and tokens[i + 1] in _VAGUE:
            count, i = float(_VAGUE[tokens[i + 1]]), i + 2
        elif word in ("a", "an", "one") and i + 1 < len(tokens) and tokens[i + 1] in _DURATION_UNITS:
            count, i = 1.0, i + 1
        else:
            got = take_number(tokens, i)
            if got is None:
                return None
            count, i = got
        if i >= len(tokens) or tokens[i] not in _DURATION_UNITS:
            return None
        unit = _DURATION_UNITS[tokens[i]]
        i += 1
        if i + 2 < len(tokens) + 0 and tokens[i] == "and" and tokens[i + 1] in ("a", "one") \
                and i + 2 < len(tokens) and tokens[i + 2] in _FRACTIONS:  # "an hour and a half"
            count += _FRACTIONS[tokens[i + 2]]
            i += 3
        total += count * unit
        found = True
    return total if found and total > 0 else None


@dataclass(frozen=True)
class ClockTime:
    """A time of day as said: hour 0-23 once `meridiem` is known, minutes, and whether am/pm was given."""

    hour: int
    minute: int
    meridiem_given: bool


_DAY_PARTS = {"morning": "am", "afternoon": "pm", "evening": "pm", "night": "pm", "tonight": "pm"}


def parse_clock(text: str) -> ClockTime | None:
    """A clock time: "3:40", "3 40 pm", "15:05", "9 am", "noon", "midnight", "quarter past three",
    "half past seven", "ten to four", "seven thirty", "seven o'clock", "5 in the evening"; None otherwise."""
    raw = text.lower().strip()
    raw = re.sub(r"\b([ap])\.?\s?m\.?(?=\s|$)", r"\1m", raw)  # a.m. / p m -> am / pm
    raw = re.sub(r"(\d)(am|pm)\b", r"\1 \2", raw)
    raw = raw.replace("o'clock", "").replace("o’clock", "").replace("oclock", "")
    tokens = [t for t in re.split(r"[\s]+", re.sub(r"(?<=\d)[:.](?=\d\d\b)", " ", raw)) if t and t not in ("at",)]
    meridiem: str | None = None
    for token in tokens:
        if token in ("am", "pm"):
            meridiem = token
        elif token in _DAY_PARTS:
            meridiem = _DAY_PARTS[token]
    tokens = [t for t in tokens if t not in ("am", "pm", "in", "the", "this", *_DAY_PARTS)]
    if tokens in (["noon"], ["midday"]):
        return ClockTime(12, 0, True)
    if tokens == ["midnight"]:
        return ClockTime(0, 0, True)
    hour: float | None
    minute = 0
    if len(tokens) >= 3 and tokens[1] in ("past", "after", "to", "till", "before"):  # "quarter past three"
        first = {"quarter": 15, "half": 30}.get(tokens[0])
        if first is None:
            got = take_number(tokens[:1])
            first = int(got[0]) if got else None
        rest = [t for t in tokens[2:] if t not in ("minutes", "minute")]
        hour = parse_number(" ".join(rest))
        if first is None or hour is None or not 0 <= first < 60:
            return None
        if tokens[1] in ("past", "after"):
            minute = first
        else:
            hour, minute = hour - 1, 60 - first
    else:
        if tokens and tokens[0] in _UNITS and 1 <= _UNITS[tokens[0]] <= 12:  # "seven thirty", "three forty"
            hour, end = float(_UNITS[tokens[0]]), 1
        else:
            got = take_number(tokens)
            if got is None:
                return None
            hour, end = got
        tail = tokens[end:]
        if tail:
            if tail[0] == "oh" and len(tail) == 2 and tail[1] in _UNITS:  # "seven oh five"
                minute = _UNITS[tail[1]]
            else:
                rest = parse_number(" ".join(tail))
                if rest is None or rest != int(rest):
                    return None
                minute = int(rest)
        elif hour >= 100 and hour % 100 < 60 and hour < 2400:  # "1540"
            hour, minute = hour // 100, int(hour % 100)
    if hour is None or hour != int(hour) or not 0 <= hour <= 24 or not 0 <= minute < 60:
        return None
    hour = int(hour) % 24 if hour == 24 else int(hour)
    if meridiem is not None and hour <= 12:
        if meridiem == "pm" and hour < 12:
            hour += 12
        elif meridiem == "am" and hour == 12:
            hour = 0
    return ClockTime(hour, minute, meridiem is not None or hour > 12 or hour == 0)


_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def resolve_when(clock: ClockTime | None, day: str, now: datetime) -> datetime | None:
    """The moment meant by a clock time and a day word ("", "today", "tonight", "tomorrow", a weekday):
    without am/pm the next such time after `now` (on a later day, 7-11 means morning); a time already past
    today means tomorrow. None when no time was given."""
    if clock is None:
        return None
    day = day.lower().strip().removeprefix("on ").removeprefix("this ").removeprefix("next ")
    base = now.replace(second=0, microsecond=0)
    if day in ("", "today", "tonight"):
        offset = None
    elif day == "tomorrow":
        offset = 1
    elif day in _WEEKDAYS:
        offset = (_WEEKDAYS.index(day) - now.weekday()) % 7 or 7
    else:
        return None
    hours = [clock.hour]
    if not clock.meridiem_given and 1 <= clock.hour <= 12:
        if offset is None and day != "tonight":
            hours = [clock.hour % 12, clock.hour % 12 + 12]  # the next one: "at 3" at 14:00 is 15:00
        else:
            hours = [clock.hour % 12 + 12] if clock.hour <= 6 or day == "tonight" else [clock.hour % 12]
    if offset is None:
        candidates = [base.replace(hour=h, minute=clock.minute) for h in hours]
        upcoming = [c for c in candidates if c > now]
        return min(upcoming) if upcoming else min(candidates) + timedelta(days=1)
    return (base + timedelta(days=offset)).replace(hour=hours[0], minute=clock.minute)


_OPERATORS = [  # longest first; spoken forms of the calculator's operators
    ("multiplied by", "*"), ("divided by", "/"), ("raised to power of", "**"), ("to power of", "**"),
    ("raised to", "**"), ("to power", "**"), ("plus", "+"), ("and", "+"), ("minus", "-"), ("less", "-"),
    ("times", "*"), ("x", "*"), ("×", "*"), ("*", "*"), ("over", "/"), ("/", "/"), ("÷", "/"), ("+", "+"),
    ("-", "-"), ("^", "**"), ("mod", "%"), ("modulo", "%"),
]
_FUNCTIONS = {"square root of": "sqrt", "root of": "sqrt", "sqrt": "sqrt", "factorial of": "factorial",
              "log of": "log10", "sine of": "sin", "cosine of": "cos"}
_POSTFIX = {"squared": "**2", "cubed": "**3", "factorial": "!"}


_PARTS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
          "fifth": 5, "fifths": 5, "tenth": 10, "tenths": 10}


def _fraction_of(tokens: list[str], i: int) -> tuple[float, int, int] | None:
    """A fraction said before "of" at tokens[i]: (numerator, denominator, the index after "of")."""
    numerator = 1.0
    if i < len(tokens) and tokens[i] in ("a", "an", "one"):
        i += 1
    elif (got := take_number(tokens, i)) is not None and got[1] < len(tokens) and tokens[got[1]] in _PARTS:
        numerator, i = got
    if i + 1 < len(tokens) and tokens[i] in _PARTS and tokens[i + 1] == "of":
        return numerator, _PARTS[tokens[i]], i + 2
    return None


def spoken_expression(text: str) -> str | None:
    """Spoken arithmetic as a calculator expression: "12 times 14" -> "12*14", "15 percent of 80" ->
    "(15/100)*80", "the square root of 2" -> "sqrt(2)", "3 squared plus 1" -> "3**2+1"; None when the text
    is not arithmetic (it needs at least one operation on numbers, and nothing but numbers and operations)."""
    raw = text.lower().replace("−", "-").replace("%", " percent ")
    raw = re.sub(r"(?<=\d)\s*([x×*/+^÷])\s*(?=\d)", r" \1 ", raw)
    raw = re.sub(r"(?<=\d),(?=\d{3}\b)", "", raw)
    tokens = [t for t in re.sub(r"[?!=]|(?<!\d)[.,]|[.,](?!\d)", " ", raw).split()
              if t not in ("the", "is", "equals", "equal", "what's", "whats", "what", "how", "much")]
    out: list[str] = []
    operations = 0
    i = 0
    expect_operand = True
    closes = 0
    while i < len(tokens):
        rest = " ".join(tokens[i:])
        if expect_operand:
            fn = next((f for f in _FUNCTIONS if rest == f or rest.startswith(f + " ")), None)
            if fn is not None:
                out.append(_FUNCTIONS[fn] + "(")
                closes += 1
                operations += 1
                i += len(fn.split())
                continue
            fraction = _fraction_of(tokens, i)  # "half of 250", "a third of 99", "two thirds of 90"
            if fraction is not None:
                numerator, denominator, i = fraction
                out.append(f"({numerator:g}/{denominator})*")
                operations += 1
                continue
            if tokens[i] in ("minus", "negative", "-") and i + 1 < len(tokens):
                out.append("-")
                i += 1
                continue
            got = take_number(tokens, i)
            if got is None:
                return None
            value, i = got
            out.append(f"{value:g}")
            out.append(")" * closes)
            closes = 0
            expect_operand = False
            if i + 1 < len(tokens) and tokens[i] == "percent" and tokens[i + 1] == "of":
                out[-2:] = [f"({value:g}/100)", ""]
                out.append("*")
                operations += 1
                expect_operand = True
                i += 2
            elif i < len(tokens) and tokens[i] == "percent":
                out[-2:] = [f"({value:g}/100)", ""]
                operations += 1
                i += 1
            continue
        if tokens[i] in _POSTFIX and tokens[i] != "factorial":
            out.append(_POSTFIX[tokens[i]])
            operations += 1
            i += 1
            continue
        op = next((o for o in _OPERATORS if rest == o[0] or rest.startswith(o[0] + " ")), None)
        if op is None:
            return None
        out.append(op[1])
        operations += 1
        i += len(op[0].split())
        expect_operand = True
    if expect_operand or operations == 0:
        return None
    return "".join(out)


_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}
_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                  "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
                  "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
                  "nineteenth": 19, "twentieth": 20, "thirtieth": 30}
_DAY_WORDS = {"today", "tonight", "tomorrow", *_WEEKDAYS}


def _day_of_month(tokens: list[str]) -> int | None:
    # "12th", "12", "twelfth", "twenty first"
    text = " ".join(tokens)
    if m := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?", text):
        return int(m.group(1))
    if len(tokens) == 2 and tokens[0] in ("twenty", "thirty") and tokens[1] in _ORDINAL_WORDS:
        return {"twenty": 20, "thirty": 30}[tokens[0]] + _ORDINAL_WORDS[tokens[1]]
    if len(tokens) == 1 and tokens[0] in _ORDINAL_WORDS:
        return _ORDINAL_WORDS[tokens[0]]
    return None


def parse_date(text: str, now: datetime) -> datetime | None:
    """A calendar day: "May 12th", "12 May", "the 20th", "on the twenty first of June", "tomorrow", "friday",
    "next week" (a week from today); the next such day from `now` (midnight). None otherwise."""
    tokens = [t for t in _tokens(text) if t not in ("on", "the", "of", "this", "next", "coming")]
    base = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if not tokens:
        return None
    if tokens == ["week"]:
        return base + timedelta(days=7)
    if len(tokens) == 1 and tokens[0] in _DAY_WORDS:
        if tokens[0] in ("today", "tonight"):
            return base
        if tokens[0] == "tomorrow":
            return base + timedelta(days=1)
        return base + timedelta(days=(_WEEKDAYS.index(tokens[0]) - now.weekday()) % 7 or 7)
    month = None
    rest = tokens
    for i, token in enumerate(tokens):
        key = token if token in _MONTHS else token[:4] if token[:4] == "sept" else token[:3]
        if token in _MONTHS or (len(token) <= 5 and key in _MONTH_ABBR):
            month = _MONTHS.index(token) + 1 if token in _MONTHS else _MONTH_ABBR[key]
            rest = tokens[:i] + tokens[i + 1:]
            break
    day = _day_of_month(rest)
    if day is None or not 1 <= day <= 31:
        return None
    year = now.year
    month = month or now.month
    for _ in range(13):  # the next such date, this month or year or the next
        try:
            candidate = base.replace(year=year, month=month, day=day)
        except ValueError:
            candidate = None
        if candidate is not None and candidate >= base:
            return candidate
        if len([t for t in tokens if t in _MONTHS or t[:3] in _MONTH_ABBR]):
            year += 1  # "May 12th" already past: next year's
        else:
            month, year = (1, year + 1) if month == 12 else (month + 1, year)
    return None


@dataclass(frozen=True)
class When:
    """A moment a reminder is for: `delay_s` from now (relative), or a local datetime (absolute)."""

    delay_s: float | None = None
    at: datetime | None = None


def _day_free(clock_text: str) -> str:
    return re.sub(r"\b(?:morning|evening|afternoon|night)\b", "", clock_text).strip() or clock_text


def parse_when(text: str, now: datetime) -> When | None:
    """When a reminder is for, in any order: "in ten minutes", "tomorrow at 9 am", "at 3:40", "on May 12th at
    2 pm", "at noon tomorrow", "tonight at 8", "friday at quarter past six", "5 pm"; None otherwise (a day
    without a time is not enough: the caller asks)."""
    raw = re.sub(r"\s+", " ", text.lower().strip(" ,.;:!?"))
    raw = re.sub(r"^(?:for|at|on|by)\s+", "", raw)
    if m := re.fullmatch(r"(?:in|after|within)\s+(.+?)(?:\s+from now)?", raw):
        seconds = parse_duration(m.group(1))
        return When(delay_s=seconds) if seconds else None
    if (seconds := parse_duration(raw)) is not None:  # "for 10 minutes"
        return When(delay_s=seconds)
    if m := re.fullmatch(r"(.+?)\s+from now", raw):
        seconds = parse_duration(m.group(1))
        return When(delay_s=seconds) if seconds else None
    # "tomorrow morning", "friday evening": the day stays where it is, the part of the day goes with the clock
    # ("7 tomorrow morning" is 7 am tomorrow), wherever the clock is said
    part = ""
    if m := re.search(rf"\b({'|'.join(sorted(_DAY_WORDS - {'tonight'}))})\s+(morning|afternoon|evening|night)\b", raw):
        part = m.group(2)
        raw = f"{raw[:m.end(1)]}{raw[m.end():]}".strip()
    # split into a day part and a clock part around "at"/"by", or a day word at either end
    day_text, clock_text = "", raw
    if " at " in f" {raw} ":
        before, _, after = f" {raw} ".partition(" at ")
        before, after = before.strip(), after.strip()
        day_after = ""
        for word in sorted(_DAY_WORDS, key=len, reverse=True):  # "at 9 tomorrow"
            if after.endswith(" " + word):
                after, day_after = after[: -len(word) - 1].strip(), word
                break
        day_text, clock_text = (before or day_after), after
    elif parse_clock(raw) is None:
        words = raw.split()
        splits = [(" ".join(words[:n]), " ".join(words[n:])) for n in range(1, len(words))] + \
                 [(" ".join(words[n:]), " ".join(words[:n])) for n in range(1, len(words))]
        for day_part, clock_part in splits:  # "tomorrow 9 am", "noon tomorrow", "9 tomorrow"
            if parse_date(day_part, now) is not None and parse_clock(_day_free(clock_part)) is not None:
                day_text, clock_text = day_part, clock_part
                break
    if day_text in ("tonight", "this evening", "this afternoon", "this morning"):
        part = {"tonight": "pm", "this evening": "pm", "this afternoon": "pm", "this morning": "am"}[day_text]
        clock_text, day_text = f"{clock_text} {part}", "today"
    if day_text.endswith((" morning", " evening", " afternoon", " night")):  # "may 12th morning at 8"
        day_text, _, part = day_text.rpartition(" ")
    if part:  # the part of the day goes with the clock, once
        clock_text = f"{clock_text} in the {part}"
    clock = parse_clock(clock_text)
    if clock is None:
        return None
    if not day_text:
        moment = resolve_when(clock, "", now)
    else:
        date = parse_date(day_text, now)
        if date is None:
            return None
        if date.date() == now.date():
            moment = resolve_when(clock, "today", now)
            if moment is not None and moment.date() != now.date():
                return None  # "today at 9 am" when it is past: not tomorrow by surprise
        else:
            hour = clock.hour
            if not clock.meridiem_given and 1 <= hour <= 12:
                hour = hour % 12 + 12 if hour <= 6 else hour % 12
            moment = date.replace(hour=hour, minute=clock.minute)
    return When(at=moment) if moment is not None else None
