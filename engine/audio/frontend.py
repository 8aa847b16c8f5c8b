"""The perception front end: 16 kHz mic audio and the playback reference in, echo-free speech segments out.

It is plain computation with no threads, so the live pipeline and offline tests run exactly the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audio.echo import AEC_FRAME, EchoCanceller, EchoGuard
from engine.vad import FRAME_SAMPLES, SegmenterOptions, SpeechProbability, VadSegmenter, VadTransition


@dataclass(frozen=True)
class FrontEndStep:
    """What one call to `process` produced: cleaned audio, VAD transitions and the last speech probability."""

    cleaned: np.ndarray
    transitions: tuple[VadTransition, ...]
    level_db: float
    probability: float


class SpeechFrontEnd:
    """AEC, then Silero VAD with the echo guard, then the segmenter; sample positions count cleaned audio."""

    def __init__(self, vad: SpeechProbability, options: SegmenterOptions,
                 echo: EchoCanceller | None = None, guard: EchoGuard | None = None) -> None:
        self.vad = vad
        self.segmenter = VadSegmenter(options)
        self.echo = echo
        self.guard = guard
        self.samples = 0  # cleaned samples produced so far (the 16 kHz perception clock)
        self._mic = np.zeros(0, np.float32)
        self._cleaned = np.zeros(0, np.float32)
        self._raw = np.zeros(0, np.float32)  # the mic before cancellation, aligned with `_cleaned`
        self._ref_pending = np.zeros(0, np.float32)
        self._prob = 0.0

    def add_reference(self, audio: np.ndarray) -> None:
        """Audio the speaker played, at 16 kHz, in playback order; fed to the canceller as it arrives
        (WebRTC buffers render frames itself and absorbs the jitter of the output callback)."""
        data = np.concatenate([self._ref_pending, np.asarray(audio, np.float32)])
        whole = len(data) // AEC_FRAME * AEC_FRAME
        for i in range(0, whole, AEC_FRAME):
            frame = data[i:i + AEC_FRAME]
            if self.guard is not None:
                self.guard.add_reference(frame)
            if self.echo is not None:
                self.echo.add_reference(frame)
        self._ref_pending = data[whole:]

    def process(self, audio: np.ndarray) -> FrontEndStep:
        """Consume 16 kHz mic audio; returns the cleaned audio and any segment transitions it completed."""
        data = np.concatenate([self._mic, np.asarray(audio, np.float32)])
        whole = len(data) // AEC_FRAME * AEC_FRAME
        self._mic = data[whole:]
        out = []
        for i in range(0, whole, AEC_FRAME):
            frame = data[i:i + AEC_FRAME]
            if self.guard is not None:
                self.guard.tick()
            if self.echo is not None:
                frame = self.echo.process(frame)
            out.append(frame)
        cleaned = np.concatenate(out) if out else np.zeros(0, np.float32)
        transitions = self._run_vad(cleaned, data[:whole])
        level = float(10 * np.log10(np.mean(cleaned * cleaned) + 1e-10)) if len(cleaned) else -100.0
        return FrontEndStep(cleaned, tuple(transitions), level, self._prob)

    def _run_vad(self, cleaned: np.ndarray, raw: np.ndarray) -> list[VadTransition]:
        data = np.concatenate([self._cleaned, cleaned])
        raw = np.concatenate([self._raw, raw])
        transitions = []
        offset = 0
        while len(data) - offset >= FRAME_SAMPLES:
            frame = data[offset:offset + FRAME_SAMPLES]
            start = self.samples + offset - len(self._cleaned)
            prob = self.vad(frame)
            threshold = None
            if self.guard is not None and not self.segmenter.in_speech:
                threshold = self.guard.threshold(self.segmenter.options.threshold)
                if not self.guard.allows(frame, raw[offset:offset + FRAME_SAMPLES]):
                    prob = 0.0  # the frame is no louder than the echo we expect: not the user
            self._prob = prob
            transition = self.segmenter.push(prob, start, threshold)
            if transition is not None:
                transitions.append(transition)
            offset += FRAME_SAMPLES
        self.samples += len(cleaned)
        self._cleaned = data[offset:].copy()
        self._raw = raw[offset:].copy()
        return transitions

    @property
    def silence_pending_since(self) -> int:
        """Sample where the current in-speech silence began, or -1 (lets ASR start the final early)."""
        return self.segmenter.silence_start if self.segmenter.in_speech else -1
