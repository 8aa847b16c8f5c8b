"""Numbers in words (any num2words language) and the English symbol rules of `engine.tts.normalize`.

Each rule is one compiled pattern and one function that says a match; they run in the order of `RULES`
(dates before times before money before plain numbers). Every rule's output is words, not digits or symbols.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

from num2words import num2words

from engine.tts._speech_words import (
    ABBREVIATIONS,
    CURRENCIES,
    CURRENCY_CODES,
    FRACTIONS,
    MONTHS,
    OPERATORS,
    SLASH_IDIOMS,
    UNITS,
    YEAR_CUES,
)

N = r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?"  # 1,234.5 or 1234.5 (ASCII digits only)
MINUS = r"(?<![^\s(\[])-"  # a minus that starts a word, not a hyphen inside one
SIGN = f"(?:{MINUS})?"
_MAX_DIGITS = 15  # longer whole numbers (card numbers, ids) are read digit by digit
_DIGIT = dict(zip("0123456789", "zero one two three four five six seven eight nine".split(), strict=True))
_MONTH_ORDER = list(MONTHS)[:12]


class Numbers:
    """Numbers in words in one num2words language (`lang`; None = leave digits as they are)."""

    def __init__(self, lang: str | None) -> None:
        self.lang = lang
        self.english = lang is not None and lang.startswith("en")

    def integer(self, n: int) -> str:
        """A whole number in words (US style in English: no "and", no commas)."""
        if self.lang is None:
            return str(n)
        words = num2words(n, lang=self.lang)
        return _us(words) if self.english else words

    def number(self, written: str) -> str:
        """A written number (sign, thousands separators, decimals) in words; anything else comes back as is."""
        digits = written.replace(",", "")
        negative = digits.startswith("-")
        whole, _, fraction = digits.lstrip("-").partition(".")
        if self.lang is None or not re.fullmatch(r"[0-9]+", whole) or not re.fullmatch(r"[0-9]*", fraction):
            return written
        if len(whole) > _MAX_DIGITS or (len(whole) > 1 and whole.startswith("0") and not fraction):
            said = " ".join(_DIGIT[d] for d in whole) if self.english else written.lstrip("-")
        elif not self.english:  # num2words says the sign in its own language ("minus drei")
            value = Decimal(f"{whole}.{fraction}") if fraction else int(whole)
            return num2words(-value if negative else value, lang=self.lang)
        else:
            said = self.integer(int(whole)) + (" point " + " ".join(_DIGIT[d] for d in fraction) if fraction else "")
        return ("minus " if self.english else "-") + said if negative else said

    def digits(self, written: str) -> str:
        """Each digit as a word: "555" -> "five five five"."""
        return " ".join(_DIGIT[d] for d in written if d in _DIGIT)

    def ordinal(self, n: int) -> str:
        """1 -> "first"."""
        return _us(num2words(n, lang="en", to="ordinal"))

    def year(self, n: int) -> str:
        """1999 -> "nineteen ninety-nine", 2005 -> "two thousand five"."""
        return _us(num2words(n, lang="en", to="year"))


def _us(words: str) -> str:
    return words.replace(",", "").replace(" and ", " ")


def _rest(m: re.Match) -> str:
    return m.string[m.end():]


def _ends_sentence(m: re.Match) -> bool:
    """The match swallowed a period that also ended the sentence."""
    rest = _rest(m)
    return m.group().endswith(".") and (not rest.strip() or re.match(r"\s+[A-Z]", rest) is not None)


# ---- dates and times ---------------------------------------------------------------------------------------

def _date(nz: Numbers, month: int, day: int, year: int | None) -> str | None:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{_MONTH_ORDER[month - 1]} {nz.ordinal(day)}" + (f", {nz.year(year)}" if year is not None else "")


def _say_iso_date(nz: Numbers, m: re.Match) -> str:
    return _date(nz, int(m.group(2)), int(m.group(3)), int(m.group(1))) or m.group()


def _say_slash_date(nz: Numbers, m: re.Match) -> str:
    a, b, year = int(m.group(1)), int(m.group(2)), m.group(3)
    month, day = (a, b) if a <= 12 else (b, a)  # US order unless the first number cannot be a month
    return _date(nz, month, day, int(year) if len(year) == 4 else 2000 + int(year)) or m.group()


def _say_month_day(nz: Numbers, m: re.Match) -> str:
    month = _MONTH_ORDER.index(MONTHS[m.group(1)]) + 1
    return _date(nz, month, int(m.group(2)), int(m.group(3)) if m.group(3) else None) or m.group()


def _say_day_month(nz: Numbers, m: re.Match) -> str:
    day, month, year = int(m.group(1)), MONTHS[m.group(2)], m.group(3)
    if not 1 <= day <= 31:
        return m.group()
    the = "" if re.search(r"\bthe\s+$", m.string[: m.start()], re.I) else "the "
    return f"{the}{nz.ordinal(day)} of {month}" + (f", {nz.year(int(year))}" if year else "")


def _say_time(nz: Numbers, m: re.Match) -> str:
    hour, minute, second, half = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
    if hour > 24 or minute > 59 or (second and int(second) > 59):
        return m.group() if second or half else f"{nz.integer(hour)} to {nz.integer(minute)}"  # a ratio, 30:45
    if minute == 0:
        said = (nz.integer(hour) if half else "midnight" if hour in (0, 24) else
                f"{nz.integer(hour)} o'clock" if hour <= 12 else f"{nz.integer(hour)} hundred")
    else:
        said = f"{nz.integer(hour)} {'oh ' if minute < 10 else ''}{nz.integer(minute)}"
    if second and int(second):
        said += f" and {nz.integer(int(second))} second" + ("s" if int(second) != 1 else "")
    return said + (_say_half(m, half) if half else "")


def _say_hour(nz: Numbers, m: re.Match) -> str:
    hour = int(m.group(1))
    return nz.integer(hour) + _say_half(m, m.group(2)) if 1 <= hour <= 12 else m.group()


def _say_half(m: re.Match, half: str) -> str:
    """ " AM" / " PM" (espeak reads "a m" as "uh em"), keeping a sentence-ending period "a.m." swallowed."""
    return (" PM" if half[0] in "pP" else " AM") + ("." if _ends_sentence(m) else "")


# ---- money, units, expressions -----------------------------------------------------------------------------

def _money(nz: Numbers, symbol: str, amount: str, scale: str | None, negative: bool) -> str:
    one, many, cent, cents = CURRENCIES[symbol]
    minus = "minus " if negative else ""
    if scale:
        size = {"k": "thousand", "m": "million", "bn": "billion", "b": "billion"}.get(scale.lower(), scale.lower())
        return f"{minus}{nz.number(amount)} {size} {many}"
    whole, _, fraction = amount.replace(",", "").partition(".")
    if len(fraction) > 2 or (fraction and not cent):
        return f"{minus}{nz.number(amount)} {many}"
    units, hundredths = int(whole), int(fraction.ljust(2, "0")) if fraction else 0
    said = f"{nz.integer(units)} {one if units == 1 else many}" if units or not hundredths else ""
    if hundredths:
        said += (" and " if said else "") + f"{nz.integer(hundredths)} {cent if hundredths == 1 else cents}"
    return minus + said


def _say_money_before(nz: Numbers, m: re.Match) -> str:
    return _money(nz, m.group("sym"), m.group("amt"), m.group("scale"), bool(m.group("sign")))


def _say_money_after(nz: Numbers, m: re.Match) -> str:
    symbol, amount = m.group("sym"), m.group("amt")
    if symbol == "¢":
        return f"{nz.number(amount)} cent" + ("" if amount == "1" else "s")
    return _money(nz, CURRENCY_CODES.get(symbol, symbol), amount, None, bool(m.group("sign")))


def _say_unit(nz: Numbers, m: re.Match) -> str:
    amount, between, unit = m.group(1), m.group(2), m.group(3)
    if unit == "in" and between.endswith(" ") and re.match(r"\s+\w", _rest(m)):
        return m.group()  # "5 in the box": "in" is a unit only attached ("5in") or before punctuation
    one, many = UNITS[unit]
    singular = amount in ("1", "-1") and not re.search(r"[0-9]", between)
    return f"{amount}{between.rstrip()} {one if singular else many}"


def _say_expression(nz: Numbers, m: re.Match) -> str:
    text = m.group()
    tokens = re.findall(rf"(?:(?<=^)|(?<=[\s{_OPS}])){SIGN}{N}|{N}|[^\s0-9]", text)
    numbers, ops = tokens[0::2], tokens[1::2]
    if len(numbers) != len(ops) + 1 or not all(o in OPERATORS for o in ops):
        return text
    spaced = re.search(r"\s", text) is not None
    if len(ops) == 1 and ops[0] in "-–" and spaced and re.match(r"\s+(?!(?:is|are|was|equals|gives|makes|leaves)\b)[a-z]", _rest(m)):
        return f"{nz.number(numbers[0])} to {nz.number(numbers[1])}"  # "3 - 5 days": a range before a noun
    if len(ops) == 1 and ops[0] in "-–/x" and not spaced:
        a, op, b = numbers[0], ops[0], numbers[1]
        if op == "/":
            return _say_fraction(nz, a, b)
        if op == "x":
            return f"{nz.number(a)} by {nz.number(b)}"  # dimensions: 1920x1080
        if all(re.fullmatch(r"1[1-9][0-9]{2}|20[0-9]{2}", n) for n in (a, b)):
            return f"{nz.year(int(a))} to {nz.year(int(b))}"
        return f"{nz.number(a)} to {nz.number(b)}"  # a range: 3-5
    if len(ops) == 1 and ops[0] == "–":
        return f"{nz.number(numbers[0])} to {nz.number(numbers[1])}"
    said = [nz.number(numbers[0])]
    for op, n in zip(ops, numbers[1:], strict=True):
        if op == "^" and n in ("2", "3"):
            said.append("squared" if n == "2" else "cubed")
        else:
            said += [OPERATORS[op], nz.number(n)]
    return " ".join(said)


def _say_fraction(nz: Numbers, a: str, b: str) -> str:
    if (a, b) in SLASH_IDIOMS:
        return SLASH_IDIOMS[(a, b)]
    if re.fullmatch(r"[0-9]+", a + b) and 0 < int(a) < int(b) <= 10:
        n, d = int(a), int(b)
        one, many = FRACTIONS.get(d) or (nz.ordinal(d), nz.ordinal(d) + "s")
        return f"{nz.integer(n)} {one if n == 1 else many}"
    return f"{nz.number(a)} over {nz.number(b)}"


def _say_decade(nz: Numbers, m: re.Match) -> str:
    cue, written = m.group(1) or "", m.group(2)
    words = nz.year(int(written)) if len(written) == 4 else nz.integer(int(written))
    return cue + (words[:-1] + "ies" if words.endswith("y") else words + "s")


def _say_version(nz: Numbers, m: re.Match) -> str:
    parts = m.group(2).split(".")
    joined = (" dot " if len(parts) == 4 else " point ").join(nz.integer(int(p)) for p in parts)
    return ("version " if m.group(1) else "") + joined


def _abbreviation_rule(said: str, may_end_sentence: bool) -> Callable[[Numbers, re.Match], str]:
    def say(nz: Numbers, m: re.Match) -> str:
        starts_sentence = not m.string[: m.start()].strip() or m.string[: m.start()].rstrip()[-1] in ".!?"
        out = said[0].upper() + said[1:] if m.group()[0].isupper() and starts_sentence else said
        if out.endswith(",") and not re.match(r"\s+\w", _rest(m)):
            out = out[:-1]
        return out + "." if may_end_sentence and _ends_sentence(m) else out

    return say


Rule = tuple[re.Pattern, Callable[[Numbers, re.Match], str]]
_OPS = re.escape("".join(OPERATORS))
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_UNIT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_HALF = r"[AaPp]\.?\s?[Mm]\b\.?"


def _rule(pattern: str, say: Callable[[Numbers, re.Match], str], flags: int = 0) -> Rule:
    return re.compile(pattern, flags), say


RULES: list[Rule] = [
    *[_rule(rf"(?<![\w.]){p}(?=[\s,;:)]|$)", _abbreviation_rule(said, ends)) for p, said, ends in ABBREVIATIONS],
    _rule(r"\b((?:call|dial|text)\s+)([0-9]{3,})\b", lambda nz, m: m.group(1) + nz.digits(m.group(2)), re.I),
    _rule(r"(?:(?<=^)|(?<=[\s(]))[~≈]\s?(?=[0-9$€£])", lambda nz, m: "about "),
    _rule(r"(?<![\w/.-])([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?![\w-])", _say_iso_date),
    _rule(r"(?<![\w/.])([0-9]{1,2})/([0-9]{1,2})/([0-9]{4}|[0-9]{2})(?![\w/])", _say_slash_date),
    _rule(rf"\b({_MONTH})\.?\s+([0-9]{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+([0-9]{{4}})\b)?(?![:.,/][0-9])",
          _say_month_day),
    _rule(rf"(?<![\w.])([0-9]{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?(?:,?\s+([0-9]{{4}})\b)?",
          _say_day_month),
    _rule(rf"\b({_MONTH})\.?,?\s+([0-9]{{4}})\b(?![:.,][0-9])",
          lambda nz, m: f"{MONTHS[m.group(1)]} {nz.year(int(m.group(2)))}"),
    _rule(rf"(?<![\w:.])([0-9]{{1,2}}):([0-9]{{2}})(?::([0-9]{{2}}))?(?![\w:]|\.[0-9])(?:\s?({_HALF}))?",
          _say_time),
    _rule(rf"(?<![\w:.])([0-9]{{1,2}})\s?({_HALF})", _say_hour),
    _rule(rf"(?P<sign>{MINUS})?(?P<sym>[$€£¥])\s?(?P<amt>{N})"
          rf"(?:\s?(?P<scale>thousand|million|billion|trillion|[kKmMB]|bn)\b)?", _say_money_before),
    _rule(rf"(?P<sign>{MINUS})?(?<![\w.])(?P<amt>{N})\s?(?P<sym>[€£¢]|(?:USD|EUR|GBP|JPY)\b)", _say_money_after),
    _rule(r"(?<![\w+-])(?:\+?1[-. ])?(?:\([0-9]{3}\)\s?|[0-9]{3}[-.])[0-9]{3}[-.][0-9]{4}(?![\w-])",
          lambda nz, m: ", ".join(nz.digits(g) for g in re.findall(r"[0-9]+", m.group()))),
    _rule(r"\b((?:the|early|mid|late|his|her|their|your|my|our)\s+)'?([0-9]0)s\b", _say_decade, re.I),
    _rule(r"(?<![\w.,])()'([0-9]0)s\b", _say_decade),
    _rule(r"(?<![\w.,])()([0-9]{3}0)s\b", _say_decade),
    _rule(r"(?<=[0-9])\s?%", lambda nz, m: " percent"),
    _rule(rf"({SIGN}{N})((?:\s?[-–]\s?{N})?\s?)({_UNIT})(?![\w/°²³])", _say_unit),
    _rule(r"(?<![\w.])([0-9]{1,3}(?:,[0-9]{3})*|[0-9]+)(st|nd|rd|th)\b",
          lambda nz, m: nz.ordinal(int(m.group(1).replace(",", ""))), re.I),
    _rule(rf"(?<![\w.,]){SIGN}{N}(?:\s?[{_OPS}]\s?{SIGN}{N})+(?![\w]|[.,][0-9])", _say_expression),
    _rule(r"(?<![\w.])([0-9]+):([0-9]+)(?![\w:])",
          lambda nz, m: f"{nz.integer(int(m.group(1)))} to {nz.integer(int(m.group(2)))}"),
    _rule(rf"\b({YEAR_CUES})(\s+)(1[1-9][0-9]{{2}}|20[0-9]{{2}})(?![\w]|[.,][0-9])",
          lambda nz, m: m.group(1) + m.group(2) + nz.year(int(m.group(3))), re.I),
    _rule(r"\b(Q[1-4]|FY)(\s+)(1[1-9][0-9]{2}|20[0-9]{2})\b",
          lambda nz, m: m.group(1) + m.group(2) + nz.year(int(m.group(3)))),
    _rule(r"(?<![\w.,])(19[0-9]{2}|20[0-9]{2})(?=,?\s+(?:was|is|will|saw|has|had|brought)\b)",
          lambda nz, m: nz.year(int(m.group(1)))),
    _rule(r"(?<![\w.])(1[1-9][0-9]{2}|20[0-9]{2})(\s+)(AD|BC|BCE|CE)\b",
          lambda nz, m: nz.year(int(m.group(1))) + m.group(2) + m.group(3)),
    _rule(r"(?<![\w.])(v)?([0-9]+(?:\.[0-9]+){2,3})(?![\w]|\.[0-9])", _say_version),
    _rule(rf"(?<![\w.,])({N})x(?!\w)", lambda nz, m: f"{nz.number(m.group(1))} times"),
    _rule(r"(?<=[0-9])\+(?=[\s,.;:)]|$)", lambda nz, m: " plus"),
    _rule(r"(?:(?<=^)|(?<=[\s(]))#\s?(?=[0-9])", lambda nz, m: "number "),
    _rule(r"(?:(?<=^)|(?<=[\s(]))\+(?=[0-9])", lambda nz, m: "plus "),
    _rule(r"(?<=[0-9])\s?°", lambda nz, m: " degrees"),
    _rule(rf"(?<![\w.]){SIGN}{N}(?!\w)", lambda nz, m: nz.number(m.group())),  # "3D", "4K" stay for the voice
]
