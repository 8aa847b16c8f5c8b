"""Speech recognition with faster-whisper: a transcriber, and a worker thread that streams partials and finals."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.errors import ModelCorrupt
from engine.timeline.events import Word

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000


@dataclass(frozen=True)
class Transcript:
    """Text of one utterance; word times are in ms from the start of the audio given."""

    text: str
    words: tuple[Word, ...] = ()


class Transcriber(Protocol):
    """Anything that turns 16 kHz mono float32 audio into text."""

    def transcribe(self, audio: np.ndarray, *, word_timestamps: bool) -> Transcript: ...


@dataclass(frozen=True)
class WhisperOptions:
    """How faster-whisper is loaded and run."""

    model_path: Path  # a CTranslate2 model folder (from the registry; never a hub name)
    language: str = "en"  # ISO code; "" lets whisper detect it
    threads: int = 1  # CPU threads for CTranslate2; keep low beside the LLM
    beam_size: int = 1  # 1 = greedy, the fastest

    def __post_init__(self) -> None:
        if self.threads < 1 or self.beam_size < 1:
            raise ValueError(f"threads and beam_size must be >= 1, got {self.threads}, {self.beam_size}")


class WhisperTranscriber:
    """faster-whisper on the CPU with int8 weights."""

    def __init__(self, options: WhisperOptions) -> None:
        from faster_whisper import WhisperModel

        self.options = options
        if not (Path(options.model_path) / "model.bin").exists():
            raise ModelCorrupt(f"{options.model_path} holds no model.bin",
                               fix="run `venus models install` or point asr.model at a CTranslate2 model folder")
        self._model = WhisperModel(str(options.model_path), device="cpu", compute_type="int8",
                                   cpu_threads=options.threads, num_workers=1)

    def transcribe(self, audio: np.ndarray, *, word_timestamps: bool) -> Transcript:
        """Decode the whole clip (no VAD filter: the caller already cut it to speech)."""
        segments, _ = self._model.transcribe(
            np.asarray(audio, dtype=np.float32), language=self.options.language or None,
            beam_size=self.options.beam_size, word_timestamps=word_timestamps, vad_filter=False,
            condition_on_previous_text=False, without_timestamps=not word_timestamps, temperature=0.0,
        )
        texts: list[str] = []
        words: list[Word] = []
        for seg in segments:
            texts.append(seg.text.strip())
            for w in seg.words or ():
                words.append(Word(text=w.word.strip(), start_ms=int(w.start * 1000), end_ms=int(w.end * 1000),
                                  probability=float(w.probability)))
        return Transcript(" ".join(t for t in texts if t), tuple(words))


PartialCallback = Callable[[str, int], None]  # text, segment start sample
FinalCallback = Callable[[Transcript, int, int], None]  # transcript, segment start and end sample


class StreamingRecognizer:
    """A worker thread that transcribes the open speech segment every `partial_interval_ms` and at its end.

    `begin`, `feed` and `end` only copy and enqueue, so the perception thread never waits for whisper. A final
    always wins over a pending partial; partials are skipped while the worker is behind.
    """

    def __init__(self, transcriber: Transcriber, on_partial: PartialCallback, on_final: FinalCallback,
                 *, partial_interval_ms: int = 500) -> None:
        if partial_interval_ms < 50:
            raise ValueError(f"partial_interval_ms must be >= 50, got {partial_interval_ms}")
        self._transcriber = transcriber
        self._on_partial = on_partial
        self._on_final = on_final
        self._partial_samples = partial_interval_ms * SAMPLE_RATE // 1000
        self._lock = threading.Lock()
        self._chunks: list[np.ndarray] = []
        self._segment_start = -1
        self._samples = 0
        self._last_partial_at = 0
        self._jobs: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="venus-asr", daemon=True)
        self._closed = False
        self._busy = False
        self._early: tuple[tuple[int, int], Transcript] | None = None  # result of the last prefinal
        self._thread.start()

    def begin(self, start_sample: int, lookback: np.ndarray | None = None) -> None:
        """A segment opened at `start_sample`; `lookback` is the audio already heard from that sample on."""
        with self._lock:
            self._segment_start = start_sample
            self._chunks = [] if lookback is None else [np.array(lookback, dtype=np.float32)]
            self._samples = sum(len(c) for c in self._chunks)
            self._last_partial_at = self._samples

    def feed(self, audio: np.ndarray, *, allow_partial: bool = True) -> None:
        """More audio of the open segment; schedules a partial every interval (not while the user pauses)."""
        with self._lock:
            if self._segment_start < 0:
                return
            self._chunks.append(np.array(audio, dtype=np.float32))
            self._samples += len(audio)
            if allow_partial and self._samples - self._last_partial_at >= self._partial_samples:
                self._last_partial_at = self._samples
                self._jobs.put(("partial", self._segment_start))

    def prefinal(self, end_sample: int) -> None:
        """The user paused: transcribe up to `end_sample` now; if the segment then ends there, `end` reuses it."""
        with self._lock:
            if self._segment_start < 0 or end_sample - self._segment_start > self._samples:
                return
            audio = np.concatenate(self._chunks)[: end_sample - self._segment_start]
            start = self._segment_start
        self._jobs.put(("prefinal", (audio, start, end_sample)))

    def end(self, end_sample: int) -> None:
        """The segment closed at `end_sample`: transcribe it, with word timestamps."""
        with self._lock:
            if self._segment_start < 0:
                return
            audio = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.float32)
            start = self._segment_start
            audio = audio[: max(0, end_sample - start)]
            self._segment_start, self._chunks, self._samples = -1, [], 0
        self._jobs.put(("final", (audio, start, end_sample)))

    @property
    def idle(self) -> bool:
        """True when no segment is open and no job is queued or running."""
        return self._segment_start < 0 and self._jobs.empty() and not self._busy

    def cancel(self) -> None:
        """Drop the open segment without a final (for example when it was judged to be echo)."""
        with self._lock:
            self._segment_start, self._chunks, self._samples = -1, [], 0

    def close(self) -> None:
        """Stop the worker after the queued finals."""
        self._closed = True
        self._jobs.put(("close", None))
        self._thread.join(timeout=10)

    def _snapshot(self, segment_start: int) -> np.ndarray | None:
        with self._lock:
            if self._segment_start != segment_start or not self._chunks:
                return None
            self._chunks = [np.concatenate(self._chunks)]
            return self._chunks[0]

    def _run(self) -> None:
        while True:
            kind, payload = self._jobs.get()
            if kind == "close":
                return
            self._busy = True
            try:
                self._do(kind, payload)
            except Exception:  # a failed decode must not kill the worker; the segment is lost, not the session
                log.exception("ASR %s failed", kind)
            finally:
                self._busy = False

    def _do(self, kind: str, payload: object) -> None:
        if kind == "prefinal":
            audio, start, end = payload  # type: ignore[misc]
            self._early = ((start, end), self._transcriber.transcribe(audio, word_timestamps=True))
        elif kind == "partial":
            if self._has_final_waiting():
                return  # behind: the final matters more than another partial
            audio = self._snapshot(payload)  # type: ignore[arg-type]
            if audio is None or len(audio) < SAMPLE_RATE // 4:
                return
            transcript = self._transcriber.transcribe(audio, word_timestamps=False)
            if transcript.text:
                self._on_partial(transcript.text, payload)  # type: ignore[arg-type]
        else:
            audio, start, end = payload  # type: ignore[misc]
            began = time.perf_counter()
            early, self._early = self._early, None
            if early is not None and early[0] == (start, end):
                transcript = early[1]  # the pause held: the early decode is the final
            elif len(audio):
                transcript = self._transcriber.transcribe(audio, word_timestamps=True)
            else:
                transcript = Transcript("")
            log.debug("final of %.2f s audio in %.0f ms", len(audio) / SAMPLE_RATE, (time.perf_counter() - began) * 1000)
            self._on_final(transcript, start, end)

    def _has_final_waiting(self) -> bool:
        # Peek by draining and re-queueing; the queue is tiny (a few jobs at most).
        pending = []
        try:
            while True:
                pending.append(self._jobs.get_nowait())
        except queue.Empty:
            pass
        for job in pending:
            self._jobs.put(job)
        return any(kind in ("final", "prefinal", "close") for kind, _ in pending)
