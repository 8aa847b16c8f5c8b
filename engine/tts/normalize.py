"""Written text -> the words a voice should say: numbers, symbols, markdown, links and abbreviations.

`speakable` runs on every clause inside the voices (`PiperSynthesizer`, `EspeakSynthesizer`), so the audio, the
clause's word timing and the heard words (`SpeechSpan.heard_words`, `planned_text`) all come from the same
normalized text: what the user heard, in words. It is regex work only (no models), never raises, and leaves
ordinary prose as it is. It is idempotent because the passes are run until they change nothing (at most four
times; dropping a stray symbol can free a number for the number rules). Numbers are read by `num2words` in the
voice's language; the symbol rules (units, currencies, dates, operators, abbreviations) are English and run only
for English; markdown, code, emoji and URLs (read with "dot" and "slash") are handled in every language.

Choices a listener would notice, each in one place below:
- fenced code and inline code that is more than a short name become "(code omitted)";
- a URL is read as its host ("example dot com"), plus a short plain path; query strings and fragments are dropped;
- a file path is read as its file name and folder: "~/Documents/notes.txt" -> "notes dot t x t in the Documents
  folder";
- "a/b" of small whole numbers is a fraction ("three quarters"), other "a/b" is "a over b", " / " is "divided by";
- "3-5" is a range ("three to five"), "5 - 3" and any "-" in an expression with "=" is "minus".
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable

from num2words import CONVERTER_CLASSES

from engine.tts._english import RULES, SIGN, Numbers
from engine.tts._speech_words import EXTENSIONS, EXTENSIONS_SAID_AS_WORDS, PER_WORDS, VULGAR_FRACTIONS

log = logging.getLogger(__name__)


def speakable(text: str, language: str = "en") -> str:
    """`text` as words a voice reads correctly; plain prose comes back unchanged. Never raises."""
    try:
        lang = _num2words_language(language)
        said = _normalize(text if isinstance(text, str) else str(text), lang)
        for _ in range(3):  # a late pass can free something an earlier one reads (a dropped "_" before a number)
            again = _normalize(said, lang)
            if again == said:
                break
            said = again
        return said
    except Exception:  # a bug here must cost a badly read clause, never the answer's voice
        log.exception("speakable failed; the clause is spoken with its symbols dropped")
        return " ".join("".join(c for c in str(text) if c.isalnum() or c in " .,!?'").split())


def _num2words_language(language: str) -> str | None:
    """num2words' name for a voice language ("en-us" -> "en", "pt-br" -> "pt_BR"); None if it has none."""
    parts = re.split(r"[-_]", (language or "en").strip())
    base = parts[0].lower()
    candidates = [f"{base}_{parts[1].upper()}"] if len(parts) > 1 else []
    return next((c for c in [*candidates, base] if c in CONVERTER_CLASSES), None)


def _normalize(text: str, lang: str | None) -> str:
    numbers = Numbers(lang)
    text = _markdown(_code(_prefilter(text)))
    text = _URL.sub(lambda m: _trailing(m, _say_url), text)
    if numbers.english:
        text = _EMAIL.sub(lambda m: _say_email(m.group()), text)
        text = _PATH.sub(_say_path, text)
        text = _RELATIVE_FILE.sub(lambda m: f"{_say_file(m.group(2))} in the {_folder(m.group(1))} folder", text)
        text = _FILE.sub(lambda m: _say_file(m.group()), text)
        text = _DOMAIN.sub(lambda m: _trailing(m, _say_url), text)
        text = _VULGAR.sub(lambda m: f" {VULGAR_FRACTIONS[m.group()]} ", text)
        for pattern, say in RULES:
            text = pattern.sub(lambda m, say=say: say(numbers, m), text)
    elif lang is not None:
        text = _PLAIN_NUMBER.sub(lambda m: numbers.number(m.group().replace(",", ".")), text)  # 2,5 = 2.5
    return _tidy(_symbols(text, numbers.english))


_VULGAR = re.compile(f"[{''.join(VULGAR_FRACTIONS)}]")
_PLAIN_NUMBER = re.compile(rf"(?<![\w.,]){SIGN}[0-9]+(?:[.,][0-9]+)?(?!\w)")


# ---- language-neutral passes ---------------------------------------------------------------------------------

_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060\ufe00-\ufe0f\ufeff]")


# An XML or HTML tag ("</caption>", '<data source="x">'): markup a small model copies, never words to say.
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s+[\w:-]+(?:=\"[^\"]*\")?)*\s*/?>")


def _prefilter(text: str) -> str:
    text = _TAG.sub(" ", text)
    text = _INVISIBLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return text.replace("\u2212", "-").replace("\u2032", "'").replace("℃", "°C").replace("℉", "°F")


_FENCE = re.compile(r"(`{3,}|~{3,})[^\n]*(?:\n.*?(?:\1|\Z)|\Z)", re.S)
_INLINE_CODE = re.compile(r"`+([^`\n]*)`+")
_SHORT_NAME = re.compile(r"[\w.\-/~]+(?: [\w.\-/~]+){0,2}")


def _code(text: str) -> str:
    def fence(m: re.Match) -> str:
        body = m.group()[len(m.group(1)):].strip("`~ \t")
        return " (code omitted) " if body.strip() else " "

    text = _FENCE.sub(fence, text)
    return _INLINE_CODE.sub(lambda m: m.group(1) if _SHORT_NAME.fullmatch(m.group(1)) else "(code omitted)", text)


_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^>\s]+|[\w.+-]+@[\w.-]+)>")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.*?)[ \t#]*$")
_BULLET = re.compile(r"^[ \t]*[-*+•◦▪‣][ \t]+(.*)$")
_NUMBERED = re.compile(r"^[ \t]*([0-9]{1,3})[.)][ \t]+")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_RULE = re.compile(r"^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{2,}:?[ \t]*\|?)+[ \t]*$")
_EMPHASIS = [re.compile(p) for p in (r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"__(?=\S)(.+?)(?<=\S)__",
                                       r"~~(?=\S)(.+?)(?<=\S)~~",
                                       r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])",
                                       r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")]
_ENDS_CLAUSE = tuple(".,;:!?…")


def _markdown(text: str) -> str:
    text = _LINK.sub(lambda m: m.group(1) if m.group(1).strip() else m.group(2), text)
    text = _AUTOLINK.sub(r"\1", text)
    if "\n" in text or text.lstrip()[:1] in ("#", ">", "|", "-", "*", "+", "•"):
        lines = [_markdown_line(line) for line in text.split("\n")]
        kept = [(said, item) for said, item in lines if said.strip()]
        text = " ".join(said + ("," if item and i + 1 < len(kept) and not said.endswith(_ENDS_CLAUSE) else "")
                        for i, (said, item) in enumerate(kept))
    for _ in range(3):  # nested markers (***x***) come off one layer per round
        before = text
        for pattern in _EMPHASIS:
            text = pattern.sub(r"\1", text)
        if text == before:
            break
    return text


def _markdown_line(line: str) -> tuple[str, bool]:
    """A line without its markdown, and whether it was a list item, heading or table row (joined with commas)."""
    if _RULE.match(line) or _TABLE_RULE.match(line) and "-" in line:
        return "", False
    line = _QUOTE.sub("", line)
    if m := _HEADING.match(line):
        return m.group(1), True
    if m := _NUMBERED.match(line):
        return f"{m.group(1)}. {line[m.end():]}", True
    if m := _BULLET.match(line):
        return m.group(1), True
    if line.count("|") >= 2:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        return ", ".join(c for c in cells if c), True
    return line, False


_URL = re.compile(r"(?:\b[a-zA-Z][a-zA-Z0-9+.-]*://|\bwww\.)[^\s<>\"'`)\]]+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_PATH = re.compile(r"(?<![\w/\\.:~])(~|\.{1,2}|[A-Za-z]:)?((?:[/\\][\w@+-]+(?:\.[\w@+-]+)*)+)([/\\]?)(?![\w/\\])")
_FILE = re.compile(rf"(?<![\w/\\.-])[\w-]+\.(?:{EXTENSIONS})(?![\w-]|\.\w)", re.I)
_RELATIVE_FILE = re.compile(rf"(?<![\w/\\.:~-])((?:[\w-]+/)+)([\w-]+\.(?:{EXTENSIONS}))(?![\w-]|\.\w)", re.I)
_DOMAIN = re.compile(r"(?<![\w.@-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
                     r"(?:com|org|net|io|dev|ai|app|edu|gov|info|co\.uk|uk|de|fr|me|tv|us)(?![\w-]|\.\w)"
                     r"(?:/[^\s<>\"'`)\]]*)?")


def _trailing(m: re.Match, say: Callable[[str], str]) -> str:
    """Say a match without the sentence punctuation it swallowed, then put the punctuation back."""
    whole = m.group()
    core = whole.rstrip(".,!?;:")
    return say(core) + whole[len(core):]


def _say_url(url: str) -> str:
    rest = re.sub(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", "", url)
    host = re.split(r"[/?#]", rest, maxsplit=1)[0]
    path = rest[len(host):].split("?")[0].split("#")[0]
    host = host.rsplit("@", 1)[-1].split(":")[0]
    host = host[4:] if host.lower().startswith("www.") else host
    segments = [s for s in path.split("/") if s]
    said = _say_host(host) if host else ""
    if 0 < len(segments) <= 2 and all(re.fullmatch(r"[A-Za-z][A-Za-z-]{0,19}", s) for s in segments):
        said += "".join(" slash " + s.replace("-", " ") for s in segments)
    return said or "a link"


def _say_host(host: str) -> str:
    return " dot ".join(label.replace("-", " ") for label in host.strip(".").split(".") if label)


def _say_email(address: str) -> str:
    user, _, host = address.partition("@")
    user = " dot ".join(p for p in user.replace("+", " plus ").replace("_", " underscore ").split(".") if p)
    return f"{user} at {_say_host(host)}"


def _say_file(name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return name.replace("_", " ").replace("-", " ")
    ext_said = ext if ext.lower() in EXTENSIONS_SAID_AS_WORDS or len(ext) > 4 else " ".join(ext.lower())
    stem = re.sub(r"[_.-]+", " ", stem).strip()
    return f"{stem} dot {ext_said}" if stem else f"dot {ext_said}"


def _folder(relative: str) -> str:
    """The innermost folder of "src/engine/": "engine"."""
    return relative.rstrip("/").rsplit("/", 1)[-1].replace("_", " ")


def _say_path(m: re.Match) -> str:
    """A path as its file (or folder) and the folder it is in: "~/Documents/notes.txt" -> "notes dot t x t in
    the Documents folder"; the rest of the path is dropped."""
    prefix, body, folder_end = m.group(1) or "", m.group(2), m.group(3)
    parts = [p for p in re.split(r"[/\\]", body) if p]
    if not parts or (not prefix and len(parts) < 2):
        return m.group()
    last = parts[-1].replace("_", " ")
    said = f"the {last} folder" if folder_end else _say_file(parts[-1])
    if len(parts) > 1:
        return f"{said} in the {parts[-2].replace('_', ' ')} folder"
    return f"{said} in your home folder" if prefix == "~" else said


# ---- symbols and punctuation -------------------------------------------------------------------------------

_SPOKEN_SYMBOLS = [(re.compile(p), s) for p, s in [
    (r"\s*(?:->|=>|→|⟶|⇒)\s*", " to "), (r"\s*(?:<-|←)\s*", " from "),
    (r"(?<=\s)=(?=\s)", "equals"), (r"(?<=\s)\+(?=\s)", "plus"), (r"(?<=\s)×(?=\s)", "times"),
    (r"(?<=\s)÷(?=\s)", "divided by"), (r"(?<=\s)±(?=\s)", "plus or minus"), (r"(?<=\s)≈(?=\s)", "about"),
    (r"(?<=\s)≠(?=\s)", "does not equal"), (r"(?<=\s)≤(?=\s)", "at most"), (r"(?<=\s)≥(?=\s)", "at least"),
    (r"(?<=\w)\+\+(?!\w)", " plus plus"), (r"\s*&\s*", " and "), (r"(?<=\s)@(?=\s)", "at"),
    (r"\bw/o(?=\s)", "without"), (r"\bw/(?=\s)", "with"),
    (rf"(?<=\w)/(?=(?:{PER_WORDS})\b)", " per "), (r"(?<=[A-Za-z])–(?=[A-Za-z])", " to "),
    (r"\band/or\b", "and or"), (r"(?<=[a-z]{2})/(?=[a-z]{2})", " or "), (r"²", " squared"), (r"³", " cubed"),
]]
_KEEP_PUNCT = set(".,!?;:'\"()-—–…’‘“”«»¡¿、。，！？；：「」『』")


def _symbols(text: str, english: bool) -> str:
    """Say the symbols that stand between words (English only), then drop every symbol and emoji left."""
    if english:
        for pattern, said in _SPOKEN_SYMBOLS:
            text = pattern.sub(said, text)
    return "".join(ch if _readable(ch) else "" if unicodedata.category(ch) == "Cf" else " " for ch in text)


def _readable(ch: str) -> bool:
    """Letters, marks, digits, the punctuation a voice pauses on, and CJK punctuation."""
    cat = unicodedata.category(ch)
    return cat[0] in "LM" or cat in ("Nd", "Nl") or ch in _KEEP_PUNCT or (cat[0] == "P" and ord(ch) > 0x2E7F)


_TIDY = [(re.compile(p), s) for p, s in [
    (r"([!?])[!?]+", r"\1"), (r"\.{4,}", "..."), (r"(?<!\.)\.\.(?!\.)", "."), (r"\s*-{2,}\s*", " — "),
    (r"([,;:])(?:\s*[,;:])+", r"\1"), (r"\(\s*[,;:.]?\s*\)", " "), (r"\s+", " "),
    (r" (?=[,.!?;:…](?:\s|$))", ""), (r"^[\s,;:.!?]+(?=\w)", ""),
]]


def _tidy(text: str) -> str:
    for pattern, said in _TIDY:
        text = pattern.sub(said, text)
    return text.strip() if any(c.isalnum() for c in text) else ""  # punctuation alone is nothing to say
