"""The intent task sets (tasks_dev.yaml, tasks_test.yaml): loading, argument equality and judging one match.

Argument equality (`arguments_equal`), per argument, after dropping the names an item lists in `ignore`:
- a missing argument equals None or an empty string; `max_results` and `monitor` (tool defaults that do not change
  what is asked) are compared only where the item names them;
- `at`: both read as ISO local date-times and equal to the minute;
- `expression`: both evaluated with the calculator (harness.builtin.calc.calculate) and the values compared, so
  "12*14", "12 * 14" and "14*12" are all right; one that does not evaluate is wrong;
- `from_unit`, `to_unit`: equal when they denote the same unit for the converter (lb = pound = pounds,
  c = celsius); a name the converter does not know is wrong, since the tool would refuse it;
- `reminder_id`, `task_id`: exactly;
- `list`: the list both name for the tool (harness.builtin.lists.list_key: "my Shopping List", "shopping" and ""
  are one list, "to do" and "to-do" another);
- `items`: the same things in the same order, each compared as free text (below);
- numbers: within 1e-6 absolute or 1e-4 relative;
- other text (note text and title, search query, open target, file name and content, clipboard text, timer text):
  case and punctuation ignored, a leading "to" or "that" ignored, the articles a/an/the ignored wherever they
  stand, and a leading "http(s)://" or "www." ignored.
An item is right when the arguments equal `args` or any object in its `also` list.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from harness.builtin.calc import CalculationError, calculate, convert
from harness.builtin.lists import list_key
from harness.tool import InvalidArguments

HERE = Path(__file__).parent
SPLITS = ("train", "dev", "test")  # train: a second author's phrasings, read by the template writer like dev
EXACT_KEYS = frozenset({"reminder_id", "task_id"})
UNIT_KEYS = frozenset({"from_unit", "to_unit"})
DEFAULTED_KEYS = frozenset({"max_results", "monitor"})  # compared only when an item names them
_ARTICLES = frozenset({"a", "an", "the"})
_LEADING = frozenset({"to", "that"})


class Outcome(StrEnum):
    """How one utterance was judged."""

    RIGHT = "right"  # the expected tool with equal arguments (or the expected clarifying question); None for a negative
    WRONG_ARGS = "wrong_args"  # the expected tool, other arguments (or a question where none was needed)
    WRONG_TOOL = "wrong_tool"  # another tool than expected, or any tool where None was expected
    MISS = "miss"  # None where a tool was expected


@dataclass(frozen=True)
class Case:
    """One utterance of a task set with what the matcher should make of it."""

    pattern: str  # phrasing-pattern id; a pattern lives in one split only
    split: str
    tool: str | None  # None: no tool may match
    say: str
    args: dict[str, Any] | None = None
    also: tuple[dict[str, Any], ...] = ()
    ignore: frozenset[str] = frozenset()
    clarify: bool = False
    spoken: str = ""  # what espeak-ng reads instead of `say`, when `say` holds symbols nobody would say
    context: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def speech(self) -> str:
        """The text spoken in the spoken run."""
        return self.spoken or self.say

    def expected(self) -> list[dict[str, Any]]:
        """Every argument object that counts as right."""
        return [self.args or {}, *self.also]


def task_file(split: str) -> Path:
    """The YAML file of a split."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    return HERE / f"tasks_{split}.yaml"


def load_cases(split: str) -> list[Case]:
    """Every case of a split ("dev", "test" or "all"), with its context resolved."""
    if split == "all":
        return [case for name in SPLITS for case in load_cases(name)]
    path = task_file(split)
    raw = yaml.safe_load(path.read_text())
    if raw.get("split") != split:
        raise ValueError(f"{path} says split {raw.get('split')!r}, expected {split!r}")
    contexts = raw["contexts"]
    cases = []
    for pattern in raw["patterns"]:
        for item in pattern["items"]:
            unknown = set(item) - {"say", "args", "also", "ignore", "clarify", "spoken", "ctx"}
            if unknown:
                raise ValueError(f"{path}: {pattern['id']}: unknown item fields {sorted(unknown)}")
            if pattern["tool"] is not None and "args" not in item and not item.get("clarify"):
                raise ValueError(f"{path}: {pattern['id']}: {item['say']!r} has neither args nor clarify")
            cases.append(Case(
                pattern=pattern["id"], split=split, tool=pattern["tool"], say=item["say"], args=item.get("args"),
                also=tuple(item.get("also", ())), ignore=frozenset(item.get("ignore", ())),
                clarify=bool(item.get("clarify")), spoken=item.get("spoken", ""),
                context=contexts[item.get("ctx", "default")],
            ))
    return cases


def normalize_text(text: str) -> str:
    """Free text as compared: lower case, no punctuation, no leading to/that, no articles, no URL scheme."""
    text = text.lower().replace("’", "'").strip()
    text = re.sub(r"^(https?://)?(www\.)?", "", text)
    text = text.replace("'", "")
    words = re.findall(r"[^\W_]+", text)
    while words and words[0] in _LEADING:
        words = words[1:]
    return " ".join(w for w in words if w not in _ARTICLES)


def same_unit(expected: Any, actual: Any) -> bool:
    """Whether two unit names denote the same unit for the converter (1 and 100 of one are 1 and 100 of the
    other); a name the converter does not know is never the same."""
    if not isinstance(expected, str) or not isinstance(actual, str):
        return False
    try:
        return all(numbers_close(convert(v, expected, actual), v) for v in (1.0, 100.0))
    except InvalidArguments:
        return False


def numbers_close(a: float, b: float) -> bool:
    """Equal within 1e-6 absolute or 1e-4 relative."""
    return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _minute(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)).replace(second=0, microsecond=0, tzinfo=None)
    except ValueError:
        return None


def _value(expression: Any) -> float | None:
    try:
        return float(calculate(str(expression)))
    except (CalculationError, TypeError, ValueError, OverflowError):
        return None


def value_equal(key: str, expected: Any, actual: Any) -> bool:
    """Whether one argument matches (rules in the module docstring)."""
    if key == "list":
        return list_key(str(expected or "")) == list_key(str(actual or ""))
    if key == "items":
        want, got = list(expected or []), list(actual or [])
        return len(want) == len(got) and all(value_equal("item", w, g) for w, g in zip(want, got, strict=True))
    if _empty(expected) or _empty(actual):
        return _empty(expected) and _empty(actual)
    if key == "at":
        want, got = _minute(expected), _minute(actual)
        return want is not None and want == got
    if key == "expression":
        want, got = _value(expected), _value(actual)
        return want is not None and got is not None and numbers_close(want, got)
    if key in UNIT_KEYS:
        return same_unit(expected, actual)
    if key in EXACT_KEYS:
        return str(expected) == str(actual)
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        got = _number(actual)
        return got is not None and numbers_close(float(expected), got)
    return normalize_text(str(expected)) == normalize_text(str(actual))


def arguments_equal(expected: dict[str, Any], actual: dict[str, Any], ignore: frozenset[str] = frozenset()) -> bool:
    """Whether a match's arguments equal the expected ones (rules in the module docstring)."""
    for key in (set(expected) | set(actual)) - ignore:
        if key not in expected and key in DEFAULTED_KEYS:
            continue
        if not value_equal(key, expected.get(key), actual.get(key)):
            return False
    return True


def judge(case: Case, hit: Any) -> Outcome:
    """The outcome of one match (`hit` is an IntentMatch or None)."""
    if case.tool is None:  # no tool may run; an answer that runs none ("What can you do?") is no tool either
        return Outcome.RIGHT if hit is None or not hit.tool else Outcome.WRONG_TOOL
    if hit is None:
        return Outcome.MISS
    if hit.tool != case.tool:
        return Outcome.WRONG_TOOL
    if case.clarify or hit.clarify:
        return Outcome.RIGHT if case.clarify and hit.clarify else Outcome.WRONG_ARGS
    arguments = dict(hit.arguments or {})
    if any(arguments_equal(expected, arguments, case.ignore) for expected in case.expected()):
        return Outcome.RIGHT
    return Outcome.WRONG_ARGS
