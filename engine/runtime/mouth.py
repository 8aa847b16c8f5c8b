"""What the runtime speaks through: the speech pipeline, or a text-only stand-in for typed chat."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol


@dataclass
class Utterance:
    """Handle of one `speak` call: `done` is set once every clause was delivered or dropped."""

    turn_id: str
    done: threading.Event


class Mouth(Protocol):
    """The output side the foreground loop needs; `SpeechPipeline` implements it."""

    def speak(self, turn_id: str, text_chunks: Iterable[str]) -> Utterance: ...

    def stop(self) -> None: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def duck(self) -> None: ...

    def unduck(self) -> None: ...

    @property
    def speaking(self) -> bool: ...


class TextMouth:
    """Delivers clauses as text (terminal chat, tests); everything 'said' counts as heard."""

    def __init__(self, on_clause: Callable[[str, str], None] | None = None) -> None:
        self.on_clause = on_clause or (lambda turn_id, clause: None)
        self._active = 0
        self._lock = threading.Lock()
        self._generation = 0
        self._delivered: dict[str, list[str]] = {}

    def speak(self, turn_id: str, text_chunks: Iterable[str]) -> Utterance:
        """Consume the chunks on a small thread, handing each to `on_clause`."""
        done = threading.Event()
        generation = self._generation

        def run() -> None:
            started = False
            try:
                for chunk in text_chunks:
                    if generation != self._generation:
                        break
                    if not started:  # "speaking" starts with the first words, not with the request
                        started = True
                        with self._lock:
                            self._active += 1
                    self.on_clause(turn_id, chunk)
                    self._delivered.setdefault(turn_id, []).append(chunk.strip())
            finally:
                if started:
                    with self._lock:
                        self._active -= 1
                done.set()

        threading.Thread(target=run, name=f"venus-text-{turn_id}", daemon=True).start()
        return Utterance(turn_id, done)

    def heard_text(self, turn_id: str) -> str:
        """Everything delivered for a turn (in text, delivered means read)."""
        return " ".join(c for c in self._delivered.get(turn_id, []) if c)

    def stop(self) -> None:
        """Drop what has not been delivered yet."""
        self._generation += 1

    def pause(self) -> None:
        """Text cannot be held back once shown."""

    def resume(self) -> None:
        """Nothing was held."""

    def duck(self) -> None:
        """Nothing to lower in text."""

    def unduck(self) -> None:
        """Nothing to restore in text."""

    @property
    def speaking(self) -> bool:
        """True while a turn is still being delivered."""
        with self._lock:
            return self._active > 0
