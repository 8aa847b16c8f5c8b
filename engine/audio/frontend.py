"""The perception front end: 16 kHz mic audio and the playback reference in, echo-free speech segments out.

It is plain computation with no threads, so the live pipeline and offline tests run exactly the same code.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.audio.echo import AEC_FRAME, EchoCanceller, EchoGuard
from engine.vad import FRAME_SAMPLES, SegmenterOptions, SpeechProbability, VadSegmenter, VadTransition

_MAX_REFERENCE_BACKLOG = 50  # 10 ms frames (500 ms); beyond that the reference has drifted and is trimmed


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
        self._reference: deque[np.ndarray] = deque()
        self._ref_pending = np.zeros(0, np.float32)
        self._silence = np.zeros(AEC_FRAME, np.float32)
        self._prob = 0.0

    def add_reference(self, audio: np.ndarray) -> None:
        """Audio the speaker played, at 16 kHz, in playback order."""
        data = np.concatenate([self._ref_pending, np.asarray(audio, np.float32)])
        whole = len(data) // AEC_FRAME * AEC_FRAME
        for i in range(0, whole, AEC_FRAME):
            self._reference.append(data[i:i + AEC_FRAME])
        self._ref_pending = data[whole:]
        while len(self._reference) > _MAX_REFERENCE_BACKLOG:
            self._reference.popleft()

    def process(self, audio: np.ndarray) -> FrontEndStep:
        """Consume 16 kHz mic audio; returns the cleaned audio and any segment transitions it completed."""
        data = np.concatenate([self._mic, np.asarray(audio, np.float32)])
        whole = len(data) // AEC_FRAME * AEC_FRAME
        self._mic = data[whole:]
        out = []
        for i in range(0, whole, AEC_FRAME):
            ref = self._reference.popleft() if self._reference else self._silence
            if self.guard is not None:
                self.guard.add_reference(ref)
            frame = data[i:i + AEC_FRAME]
            if self.echo is not None:
                self.echo.add_reference(ref)
                frame = self.echo.process(frame)
            out.append(frame)
        cleaned = np.concatenate(out) if out else np.zeros(0, np.float32)
        transitions = self._run_vad(cleaned)
        level = float(10 * np.log10(np.mean(cleaned * cleaned) + 1e-10)) if len(cleaned) else -100.0
        return FrontEndStep(cleaned, tuple(transitions), level, self._prob)

    def _run_vad(self, cleaned: np.ndarray) -> list[VadTransition]:
        data = np.concatenate([self._cleaned, cleaned])
        transitions = []
        offset = 0
        while len(data) - offset >= FRAME_SAMPLES:
            frame = data[offset:offset + FRAME_SAMPLES]
            start = self.samples + offset - len(self._cleaned)
            prob = self.vad(frame)
            threshold = None
            if self.guard is not None and not self.segmenter.in_speech:
                threshold = self.guard.threshold(self.segmenter.options.threshold)
                if not self.guard.allows(frame):
                    prob = 0.0  # the frame is no louder than the echo we expect: not the user
            self._prob = prob
            transition = self.segmenter.push(prob, start, threshold)
            if transition is not None:
                transitions.append(transition)
            offset += FRAME_SAMPLES
        self.samples += len(cleaned)
        self._cleaned = data[offset:].copy()
        return transitions

    @property
    def silence_pending_since(self) -> int:
        """Sample where the current in-speech silence began, or -1 (lets ASR start the final early)."""
        return self.segmenter.silence_start if self.segmenter.in_speech else -1
