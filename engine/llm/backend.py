"""The small interface every LLM backend implements, and the stream of text pieces a generation yields."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from engine.llm.template import ChatMessage


@dataclass(frozen=True)
class GenerateRequest:
    """How to generate one continuation."""

    max_tokens: int = 256  # hard cap on generated tokens
    temperature: float = 0.7  # 0 = greedy
    top_p: float = 0.9  # nucleus sampling mass
    top_k: int = 40  # candidates kept before top-p
    min_p: float = 0.05  # drop tokens under this fraction of the best one's probability
    seed: int = 0xC0FFEE  # sampling seed, so a run can be repeated
    stop: tuple[str, ...] = ()  # text that ends the generation (not included in the output)
    grammar: str = ""  # GBNF grammar constraining the output (in-process backend)
    json_schema: dict[str, Any] | None = None  # the same constraint as a JSON schema (remote backends)
    # Characters the text must never contain: an in-process backend masks every token holding one (spoken
    # answers have no use for "{" or "}", and a small model otherwise drifts into JSON after its decision
    # line); remote backends rely on `stop` instead.
    avoid_chars: str = ""

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be within 0..2, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be within (0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be 0 (off) or more, got {self.top_k}")
        if not 0.0 <= self.min_p < 1.0:
            raise ValueError(f"min_p must be within [0, 1), got {self.min_p}")
        if any(not s for s in self.stop):
            raise ValueError("stop sequences must not be empty strings")


@dataclass
class SyncStats:
    """What a context sync did: tokens kept from the cache, removed from it, and newly evaluated."""

    kept: int = 0
    removed: int = 0
    evaluated: int = 0
    total: int = 0
    cancelled: bool = False  # cancel() stopped the evaluation part-way; the next sync continues from there
    decode_s: float = 0.0  # seconds spent inside llama_decode (in-process backend), the rest is rendering


@dataclass
class FinishInfo:
    """Why and how a generation ended."""

    reason: str = ""  # "complete", "stop", "max_tokens", "cancelled", "context_full", "error: ..."
    text: str = ""  # everything yielded
    tokens: list[int] = field(default_factory=list)  # generated token ids (in-process backend only)


_DONE = object()


class TokenStream:
    """Text pieces of one generation, produced on a worker thread and read by iterating; cancellable.

    Iterating yields each piece as it is decoded. `finish` is filled once iteration ends; `cancel()` may be
    called from any thread and stops the producer before its next decode step. `hold()` pauses a producer that
    computes on this machine between steps until `release()` (the runtime holds the answer, which is seconds
    ahead of the voice, while whisper needs the CPU to judge speech over Venus); a hold lapses after
    `max_hold_s` so a forgotten release cannot stall an answer.
    """

    max_hold_s = 3.0

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.cancelled = threading.Event()
        self.finished = threading.Event()
        self.finish = FinishInfo()
        self._error: BaseException | None = None
        self._go = threading.Event()
        self._go.set()
        self.held_s = 0.0  # time the producer spent waiting on holds (for benchmarks and logs)

    # control side (any thread)
    def hold(self) -> None:
        """Pause the producer before its next step (until `release`, cancellation or `max_hold_s`)."""
        self._go.clear()

    def release(self) -> None:
        """Let a held producer go on."""
        self._go.set()

    def wait_if_held(self, meanwhile: Callable[[], object] | None = None) -> None:
        """Producer side, between steps: wait while held; returns at once on cancel, release or lapse.
        `meanwhile` is called as the wait begins and every 20 ms of it (a backend runs its side jobs there)."""
        if self._go.is_set():
            return
        started = time.monotonic()
        while True:
            if meanwhile is not None:
                meanwhile()
            if self._go.wait(0.02) or self.cancelled.is_set() or time.monotonic() - started >= self.max_hold_s:
                break
        self.held_s += time.monotonic() - started

    # producer side
    def put(self, piece: str) -> None:
        """Hand one piece to the reader (producer thread)."""
        self._queue.put(piece)

    def close(self, finish: FinishInfo, error: BaseException | None = None) -> None:
        """End the stream (producer thread); an error is re-raised in the reader."""
        self.finish = finish
        self._error = error
        self.finished.set()
        self._queue.put(_DONE)

    # reader side
    def cancel(self) -> None:
        """Ask the producer to stop before its next step; already queued pieces are still delivered."""
        self.cancelled.set()

    def __iter__(self) -> Iterator[str]:
        while True:
            item = self._queue.get()
            if item is _DONE:
                self._queue.put(_DONE)  # a second iteration ends at once too
                if self._error is not None:
                    raise self._error
                return
            yield item  # type: ignore[misc]

    def text(self) -> str:
        """Read to the end and return the whole text."""
        return "".join(self)


@runtime_checkable
class LLMBackend(Protocol):
    """What the conversation needs from a model: keep a context in step, generate into it, stop at once."""

    def sync(self, messages: Sequence[ChatMessage], *, evaluate: bool = True) -> SyncStats:
        """Make the backend's context hold exactly `messages`; with evaluate=False only drop what differs."""
        ...

    def generate(self, messages: Sequence[ChatMessage], request: GenerateRequest) -> TokenStream:
        """Continue the conversation; a trailing assistant message is a prefix the answer continues."""
        ...

    def cancel(self) -> None:
        """Stop every running or queued generation before its next step."""
        ...

    def close(self) -> None:
        """Release the model, threads and connections."""
        ...
