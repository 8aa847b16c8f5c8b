"""Silero VAD (v6 ONNX) through onnxruntime, plus a segmenter with hysteresis and minimum durations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.errors import ModelCorrupt
from engine.threads import default_threads

SAMPLE_RATE = 16000
FRAME_SAMPLES = 512  # Silero's window at 16 kHz (32 ms)
_CONTEXT_SAMPLES = 64  # the model sees the last 64 samples of the previous frame in front of each frame


class SpeechProbability(Protocol):
    """Anything that scores a 512-sample 16 kHz frame with a speech probability."""

    def __call__(self, frame: np.ndarray) -> float: ...

    def reset(self) -> None: ...


class SileroVad:
    """Streaming Silero VAD: call with consecutive 512-sample float32 frames; keeps its recurrent state."""

    def __init__(self, model_path: Path, *, threads: int | None = None) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or default_threads("onnx")
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 4
        try:
            self._session = ort.InferenceSession(str(model_path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types for unreadable files
            raise ModelCorrupt(f"the VAD model {model_path} could not be loaded ({exc})",
                               fix="run `venus models install` to restore it") from exc
        names = {i.name for i in self._session.get_inputs()}
        if names != {"input", "h", "c"}:
            raise ModelCorrupt(f"{model_path} is not a Silero VAD v6 model (inputs {sorted(names)})",
                               fix="set the VAD model back to silero-vad-v6")
        self.reset()

    def reset(self) -> None:
        """Forget the recurrent state and context (start of a new stream)."""
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(_CONTEXT_SAMPLES, dtype=np.float32)
        self._buffer = np.zeros((1, _CONTEXT_SAMPLES + FRAME_SAMPLES), dtype=np.float32)

    def __call__(self, frame: np.ndarray) -> float:
        """Speech probability of one 512-sample frame."""
        if frame.shape != (FRAME_SAMPLES,):
            raise ValueError(f"Silero VAD takes frames of {FRAME_SAMPLES} samples, got {frame.shape}")
        self._buffer[0, :_CONTEXT_SAMPLES] = self._context
        self._buffer[0, _CONTEXT_SAMPLES:] = frame
        prob, self._h, self._c = self._session.run(None, {"input": self._buffer, "h": self._h, "c": self._c})
        self._context = frame[-_CONTEXT_SAMPLES:].copy()
        return float(np.asarray(prob).reshape(-1)[0])


@dataclass(frozen=True)
class SegmenterOptions:
    """How speech probabilities become speech segments."""

    threshold: float = 0.5  # probability that opens a segment
    neg_threshold: float = 0.35  # probability under which a frame counts as silence (hysteresis)
    min_speech_ms: int = 120  # a segment must hold this much speech before it is announced
    min_silence_ms: int = 300  # silence this long closes a segment
    speech_pad_ms: int = 100  # the segment starts this much before the first speech frame

    def __post_init__(self) -> None:
        if not 0.0 < self.neg_threshold <= self.threshold < 1.0:
            raise ValueError(f"need 0 < neg_threshold ({self.neg_threshold}) <= threshold ({self.threshold}) < 1")
        for name in ("min_speech_ms", "min_silence_ms", "speech_pad_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class VadTransition:
    """A segment opened (`started`) or closed; sample positions are on the 16 kHz perception stream."""

    started: bool
    start_sample: int
    end_sample: int = -1


class VadSegmenter:
    """Turns per-frame probabilities into start/end transitions with hysteresis and minimum durations."""

    def __init__(self, options: SegmenterOptions) -> None:
        self.options = options
        ms = SAMPLE_RATE // 1000
        self._min_speech = options.min_speech_ms * ms
        self._min_silence = options.min_silence_ms * ms
        self._pad = options.speech_pad_ms * ms
        self.reset()

    def reset(self) -> None:
        """Back to silence."""
        self.in_speech = False
        self._candidate_start = -1  # first speech frame of a not yet confirmed segment
        self._speech_run = 0
        self._silence_start = -1

    @property
    def silence_start(self) -> int:
        """First sample of the silence that may be closing the open segment, or -1."""
        return self._silence_start

    def push(self, prob: float, frame_start: int, threshold: float | None = None,
             onset: int = -1) -> VadTransition | None:
        """Feed the probability of the frame starting at `frame_start`; returns a transition when one happens.

        `onset`, where known, is the sample where this speech began before it passed `threshold` (the echo guard
        raises the threshold and drops frames while Venus speaks, but the user started earlier).
        """
        opens = self.options.threshold if threshold is None else threshold
        frame_end = frame_start + FRAME_SAMPLES
        if not self.in_speech:
            if prob >= opens:
                if self._candidate_start < 0:
                    self._candidate_start = frame_start if onset < 0 else min(frame_start, onset)
                self._speech_run += FRAME_SAMPLES
                if self._speech_run >= max(self._min_speech, FRAME_SAMPLES):
                    self.in_speech = True
                    self._silence_start = -1
                    return VadTransition(True, max(0, self._candidate_start - self._pad))
            elif prob < self.options.neg_threshold:
                self._candidate_start, self._speech_run = -1, 0
            return None
        if prob < self.options.neg_threshold:
            if self._silence_start < 0:
                self._silence_start = frame_start
            if frame_end - self._silence_start >= self._min_silence:
                end = self._silence_start + self._pad
                start = max(0, self._candidate_start - self._pad)
                self.reset()
                return VadTransition(False, start, end)
        elif prob >= self.options.neg_threshold:
            self._silence_start = -1
        return None
