"""Clause chunker: cuts streamed text into speakable pieces so TTS can start before the answer is complete."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_SENTENCE_END = ".!?…"
_CLAUSE_END = ",;:—"
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "prof", "st", "vs", "etc", "e.g", "i.e", "approx", "no", "jr", "sr"}
_WORD = re.compile(r"\S+")
_ENUMERATOR = re.compile(r"\d{1,2}[.)]")  # "1." / "2)" opening an item of a numbered list


@dataclass(frozen=True)
class ChunkerOptions:
    """Where to cut."""

    min_clause_words: int = 4  # a comma/semicolon cut only after this many words (avoids "Well," alone)
    first_clause_words: int = 2  # the first chunk of a turn may be this short, to start speaking early
    max_words: int = 24  # cut at the last space once a chunk reaches this many words
    # ...and the first chunk at this many, so speech starts before a long sentence ends; each later chunk may be
    # twice as long as the one before (3, 6, 12, 24 words): a short chunk plays before the next is synthesized
    # (Piper takes ~35 ms per word on one thread, the LLM writes a word in ~30 ms, a word plays for ~350 ms)
    first_max_words: int = 3

    def __post_init__(self) -> None:
        if self.min_clause_words < 1 or self.first_clause_words < 1:
            raise ValueError("min_clause_words and first_clause_words must be at least 1")
        if self.max_words < max(self.min_clause_words, self.first_clause_words):
            raise ValueError(f"max_words ({self.max_words}) must be at least the clause minimums")
        if self.first_max_words < self.first_clause_words:
            raise ValueError(f"first_max_words ({self.first_max_words}) must be at least first_clause_words")


class ClauseChunker:
    """Feed text pieces with `push`, take finished chunks back; `flush` returns the rest at the end."""

    def __init__(self, options: ChunkerOptions | None = None) -> None:
        self.options = options or ChunkerOptions()
        self._buffer = ""
        self._emitted = 0
        self._line_start = True  # the buffer begins a line (the answer's first, or after a newline)

    def push(self, piece: str) -> list[str]:
        """Add streamed text; returns the chunks that are now complete (possibly none)."""
        self._buffer += piece
        chunks = []
        while (cut := self._find_cut()) is not None:
            rest = self._buffer[cut:]
            chunk, self._buffer = self._buffer[:cut].strip(), rest.lstrip()
            self._line_start = "\n" in rest[:len(rest) - len(self._buffer)]
            if chunk:
                chunks.append(chunk)
                self._emitted += 1
        return chunks

    @property
    def pending(self) -> str:
        """Text pushed but not yet part of a chunk (the start of the next clause)."""
        return self._buffer

    def flush(self) -> list[str]:
        """Whatever is left, as a last chunk."""
        rest, self._buffer = self._buffer.strip(), ""
        if rest:
            self._emitted += 1
            return [rest]
        return []

    def _find_cut(self) -> int | None:
        text = self._buffer
        min_clause = self.options.first_clause_words if self._emitted == 0 else self.options.min_clause_words
        words = 0
        for match in _WORD.finditer(text):
            words += 1
            end = match.end()
            if end >= len(text):
                break  # the last word may still be growing; wait for the space after it
            word = match.group()
            last = word[-1]
            if last in _SENTENCE_END and not _is_abbreviation(word) \
                    and not _is_enumerator(text, match, self._line_start):
                return end
            if last in _CLAUSE_END and words >= min_clause:
                return end
            if words >= min(self.options.max_words, self.options.first_max_words << min(self._emitted, 8)):
                return end
        return None


def sentence_ends(text: str) -> int:
    """How many sentences end in `text`, by the same rule the chunker cuts at (abbreviations and the numbers
    of a numbered list do not end one)."""
    words = list(_WORD.finditer(text))
    return sum(1 for i, m in enumerate(words)
               if m.group()[-1] in _SENTENCE_END and not _is_abbreviation(m.group())
               and not (i + 1 < len(words) and _is_enumerator(text, m, line_start=True)))


def _is_enumerator(text: str, match: re.Match[str], line_start: bool) -> bool:
    """ "1." at the start of a line is the number of a list item, not the end of a sentence ("I am 25." is)."""
    if not _ENUMERATOR.fullmatch(match.group()):
        return False
    before = text[:match.start()]
    if before.strip(" \t") == "":
        return line_start
    return before.rstrip(" \t").endswith("\n")


def _is_abbreviation(word: str) -> bool:
    if not word.endswith("."):
        return False
    stem = word.rstrip(".").lower().strip("\"'(")
    # "Dr." and "e.g." are not sentence ends; neither is an initial like "J."
    return stem in _ABBREVIATIONS or (len(stem) == 1 and stem.isalpha())


def chunk_stream(pieces: Iterable[str], options: ChunkerOptions | None = None) -> Iterator[str]:
    """Chunks of a whole stream of pieces, in order."""
    chunker = ClauseChunker(options)
    for piece in pieces:
        yield from chunker.push(piece)
    yield from chunker.flush()
