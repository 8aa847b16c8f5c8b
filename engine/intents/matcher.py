"""The intent matcher: hassil over the language's templates, then the builders; the best reading wins."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hassil import Intents, recognize_all

from engine import paths
from engine.errors import ConfigError
from engine.intents.builders import BUILDERS, NEEDS_SENTENCE, TOOL_OF, Built, Clarify, Context

log = logging.getLogger(__name__)

_MAX_READINGS = 64  # wildcard templates can read one sentence many ways; the first ones are the likely ones
_MAX_WORDS = 40  # a request is a sentence, not a paragraph


@dataclass(frozen=True)
class IntentContext:
    """The state a request may depend on: now, the pending reminders and the running tasks (newest last)."""

    now: datetime = field(default_factory=datetime.now)
    reminders: Sequence[Mapping[str, Any]] = ()  # {"reminder_id", "text", "due_at"}
    tasks: Sequence[Mapping[str, Any]] = ()  # {"task_id", "tool", "title"}
    tools: frozenset[str] | None = None  # the tools that are on (None: all), for "what can you do?"
    assistant_name: str = "Venus"  # for "who are you?"


@dataclass(frozen=True)
class IntentMatch:
    """A request recognised without the LLM: the tool call, or what to ask when a slot is missing."""

    intent: str  # the template group that matched, e.g. "remind_in"
    tool: str  # the tool it delegates to
    arguments: dict[str, Any]  # the tool's arguments ({} with `clarify`)
    clarify: str | None = None  # said instead of running the tool (a question, or why nothing is done)
    # with a question: the request the answer completes ("set a timer for {answer}"); with a tool call: the request
    # that more of the same continues ("add {answer} to my shopping list" for "and eggs too")
    follow_up: str = ""
    text: str = ""  # the words matched
    # the request cannot grow: no free-text slot runs to the end of the words ("what time is it", "12 times 14",
    # "set a timer for 5 minutes"), so a short pause after it ends the turn ("remind me to call" may go on)
    closed: bool = False


class IntentMatcher:
    """Recognise everyday requests in the user's words; thread-safe, about a millisecond a sentence."""

    def __init__(self, intents: Intents) -> None:
        unknown = sorted(set(intents.intents) - set(BUILDERS))
        if unknown:
            raise ConfigError(f"intent templates name intents with no builder: {', '.join(unknown)}",
                              fix="rename them to one of: " + ", ".join(sorted(BUILDERS)))
        self._intents = intents
        self._lock = threading.Lock()  # hassil's recogniser caches lazily; one sentence at a time

    def warm_up(self) -> None:
        """Build what hassil builds on first use (each template group parses its sentences then: ~0.1 s for the
        English set, which the first request of a session would otherwise wait for) now."""
        with self._lock:
            for _ in recognize_all("warm up", self._intents):
                pass

    @classmethod
    def load(cls, language: str = "en", folder: Path | None = None) -> IntentMatcher:
        """The templates of `language` (assets/intents/<language>/*.yaml, or `folder`)."""
        folder = folder or paths.assets_dir() / "intents" / language
        files = sorted(folder.glob("*.yaml"))
        if not files:
            raise ConfigError(f"no intent templates in {folder}", fix="reinstall Venus, or set the language to en")
        try:
            intents = Intents.from_files(files)
        except Exception as exc:  # a malformed template file: say which folder, keep the cause
            raise ConfigError(f"the intent templates in {folder} cannot be read: {exc}",
                              fix="fix or remove the file named in the error") from exc
        matcher = cls(intents)
        matcher.warm_up()
        return matcher

    @property
    def intent_names(self) -> list[str]:
        """The template groups loaded."""
        return sorted(self._intents.intents)

    def match(self, text: str, context: IntentContext | None = None) -> IntentMatch | None:
        """The request in `text`, or None when no template reads it (the LLM answers then)."""
        words = text.strip()
        if not words or len(words.split()) > _MAX_WORDS:
            return None
        ctx = context or IntentContext()
        view = Context(now=ctx.now, reminders=list(ctx.reminders), tasks=list(ctx.tasks), tools=ctx.tools,
                       assistant_name=ctx.assistant_name)
        best: tuple[tuple[int, int, int], IntentMatch] | None = None
        with self._lock:
            readings = recognize_all(_prepare(words), self._intents)
            for n, result in enumerate(readings):
                if n >= _MAX_READINGS:
                    break
                name = result.intent.name
                slots = {key: _as_said(result, entity) for key, entity in result.entities.items()}
                try:
                    builder = BUILDERS[name]
                    built = builder(slots, view, sentence=words) if name in NEEDS_SENTENCE else builder(slots, view)
                except Exception:  # a builder bug must not break the conversation: the LLM answers instead
                    log.exception("intent %s could not read %r", name, words)
                    continue
                if built is None:
                    continue
                wild = sum(len(str(e.value)) for e in result.entities.values() if e.is_wildcard)
                score = (1 if isinstance(built, Built) else 0, result.text_chunks_matched, -wild)
                if best is not None and score <= best[0]:
                    continue
                if isinstance(built, Clarify):
                    found = IntentMatch(name, TOOL_OF.get(name, name), {}, clarify=built.question,
                                        follow_up=built.follow_up, text=words)
                else:
                    found = IntentMatch(name, built.tool, built.arguments, text=words, closed=_closed(result),
                                        follow_up=built.follow_up)
                best = (score, found)
        return best[1] if best is not None else None


_FREE_TEXT = ("text", "items")  # slots whose words are kept as said (a note keeps its commas, a list its items)
_UNPUNCTUATED = re.compile(r"[^\w\s']+")


def _as_said(result: Any, entity: Any) -> Any:
    # hassil matches on words without punctuation; a free-text slot is taken from the words as they were written
    # ("milk, eggs, flour"), when the span it reports holds the same words
    if entity.name not in _FREE_TEXT or not entity.is_wildcard or not entity.text_span:
        return entity.value
    start, end = entity.text_span
    said = result.original_text[start:end].strip()
    same = _UNPUNCTUATED.sub(" ", said).split() == _UNPUNCTUATED.sub(" ", str(entity.value)).split()
    return said if same else entity.value


def _closed(result: Any) -> bool:
    # an open-ended wildcard (free text, a duration or a clock time read by our parsers) that is the last thing
    # matched could still be growing: "remind me in ten minutes to check the" / "set a timer for five"
    last = max(result.entities_list, key=lambda e: (e.text_span or (0, 0))[1], default=None)
    if last is None or not last.is_wildcard:
        return True
    return not result.original_text.rstrip(" ?.!").lower().endswith(str(last.text).strip().lower())


def _prepare(text: str) -> str:
    # typographic apostrophes (whisper, phones) would not match the templates' "what's"
    text = text.replace("’", "'").replace("‘", "'")
    # hesitations carry no meaning anywhere in a request ("set a timer for um seven minutes")
    text = re.sub(r"(?:^|(?<=[\s,]))(?:um+|uh+|erm?|hmm+)(?:[\s,.]+|$)", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"(\d)\s*°\s*([cfk])\b", r"\1 degrees \2", text, flags=re.IGNORECASE)  # 100°F
    text = re.sub(r"(\d)(?!(?:st|nd|rd|th)\b)([a-z]{1,3})\b", r"\1 \2", text, flags=re.IGNORECASE)  # 5km, 2pm
    return re.sub(r"\s+", " ", text).strip()
