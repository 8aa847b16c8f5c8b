"""Cutting a stream of generated text into speakable clauses, as early as a clause exists."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*\s")
_CLAUSE_END = re.compile(r"[,;:—]\s")


def split_clauses(chunks: Iterable[str], *, min_clause_words: int = 2) -> Iterator[str]:
    """Yield clauses from text chunks: at sentence ends always, at commas once the clause has enough words."""
    if min_clause_words < 1:
        raise ValueError(f"min_clause_words must be >= 1, got {min_clause_words}")
    pending = ""
    for chunk in chunks:
        pending += chunk
        while True:
            cut = _find_cut(pending, min_clause_words)
            if cut is None:
                break
            clause, pending = pending[:cut].strip(), pending[cut:]
            if clause:
                yield clause
    if pending.strip():
        yield pending.strip()


def _find_cut(text: str, min_words: int) -> int | None:
    sentence = _SENTENCE_END.search(text)
    clause = None
    for match in _CLAUSE_END.finditer(text):
        if len(text[: match.start()].split()) >= min_words:
            clause = match
            break
    candidates = [m.end() for m in (sentence, clause) if m is not None]
    return min(candidates) if candidates else None
