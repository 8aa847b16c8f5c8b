"""The perception front end: 16 kHz mic audio and the playback reference in, echo-free speech segments out.

It is plain computation with no threads, so the live pipeline and offline tests run exactly the same code.
The echo canceller only runs while an echo is possible (Venus is speaking or spoke within `echo_hold_ms`);
the rest of the time the mic goes straight to the VAD, which keeps idle listening cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audio.echo import AEC_FRAME, EchoCanceller, EchoGuard
from engine.vad import (
    FRAME_SAMPLES,
    SAMPLE_RATE,
    SegmenterOptions,
    SpeechProbability,
    VadSegmenter,
    VadTransition,
)

_EMPTY = np.zeros(0, np.float32)
# How far before the frame that opens a segment over Venus's voice its start may reach back, to where the VAD's run
# of speech began: a first word's length (a first syllable of up to 0.3 s was lost), bounded so that a run that
# echo residual kept going cannot pull her words into the user's segment.
ONSET_LOOKBACK_MS = 500


@dataclass(frozen=True)
class FrontEndStep:
    """What one call to `process` produced: cleaned audio, VAD transitions and the last speech probability."""

    cleaned: np.ndarray
    transitions: tuple[VadTransition, ...]
    level_db: float
    probability: float


class SpeechFrontEnd:
    """AEC (while an echo is possible), then Silero VAD with the echo guard, then the segmenter.

    Sample positions count cleaned audio, which is exactly as long as the mic audio given so far.
    """

    def __init__(self, vad: SpeechProbability, options: SegmenterOptions,
                 echo: EchoCanceller | None = None, guard: EchoGuard | None = None, *,
                 echo_hold_ms: int = 1500) -> None:
        if echo_hold_ms < 0:
            raise ValueError(f"echo_hold_ms must be >= 0, got {echo_hold_ms}")
        self.vad = vad
        self.segmenter = VadSegmenter(options)
        self.echo = echo
        self.guard = guard
        self.samples = 0  # cleaned samples produced so far (the 16 kHz perception clock)
        self._hold = echo_hold_ms * SAMPLE_RATE // 1000
        self._quiet_ref = self._hold  # reference samples since the speaker last played something
        self._ref_rest = _EMPTY  # reference audio short of a whole 10 ms frame
        self._mic_rest = _EMPTY  # mic audio short of a whole 10 ms frame (only while the AEC runs)
        self._frame = np.zeros(FRAME_SAMPLES, np.float32)  # the VAD frame being filled (cleaned audio)
        self._raw_frame = np.zeros(FRAME_SAMPLES, np.float32)  # the same frame before cancellation
        self._filled = 0
        self._prob = 0.0
        self._run_start = -1  # first sample of the current run of frames the VAD scored as speech (hysteresis)
        self._lookback = ONSET_LOOKBACK_MS * SAMPLE_RATE // 1000

    @property
    def echo_active(self) -> bool:
        """True while the canceller runs: the speaker played something within the hold time."""
        return self.echo is not None and self._quiet_ref < self._hold

    def add_reference(self, audio: np.ndarray) -> None:
        """Audio the speaker played, at 16 kHz, in playback order; fed to the canceller as it arrives
        (WebRTC buffers render frames itself and absorbs the jitter of the output callback)."""
        audio = np.asarray(audio, np.float32)
        if not audio.any():
            self._add_silent_reference(len(audio))
            return
        self._quiet_ref = 0
        self._feed_reference(audio if not len(self._ref_rest) else np.concatenate([self._ref_rest, audio]))

    def _add_silent_reference(self, count: int) -> None:
        if self.echo_active or (self.guard is not None and self.guard.active):
            data = np.concatenate([self._ref_rest, np.zeros(count, np.float32)])
            self._feed_reference(data)  # the canceller and guard see the silence too, in step with the mic
        else:
            self._ref_rest = _EMPTY
            if self.guard is not None:
                self.guard.forget_reference()
        self._quiet_ref = min(self._quiet_ref + count, self._hold)

    def _feed_reference(self, data: np.ndarray) -> None:
        whole = len(data) // AEC_FRAME * AEC_FRAME
        running = self.echo_active
        for i in range(0, whole, AEC_FRAME):
            frame = data[i:i + AEC_FRAME]
            if self.guard is not None:
                self.guard.add_reference(frame)
            if running:
                self.echo.add_reference(frame)  # type: ignore[union-attr]
        self._ref_rest = data[whole:].copy()

    def process(self, audio: np.ndarray) -> FrontEndStep:
        """Consume 16 kHz mic audio; returns the cleaned audio and any segment transitions it completed."""
        audio = np.asarray(audio, np.float32)
        if len(self._mic_rest):
            audio = np.concatenate([self._mic_rest, audio])
            self._mic_rest = _EMPTY
        if self.echo_active:
            cleaned, raw = self._cancel(audio)
        else:
            cleaned = raw = audio
            if self.echo is not None:
                self.echo.observe_quiet(audio)
        if self.guard is not None:
            self.guard.advance(len(raw))
        transitions = self._run_vad(cleaned, raw)
        level = float(10 * np.log10(np.dot(cleaned, cleaned) / len(cleaned) + 1e-10)) if len(cleaned) else -100.0
        return FrontEndStep(cleaned, transitions, level, self._prob)

    def _cancel(self, audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        whole = len(audio) // AEC_FRAME * AEC_FRAME
        self._mic_rest = audio[whole:].copy()
        raw = audio[:whole]
        cleaned = np.empty(whole, np.float32)
        for i in range(0, whole, AEC_FRAME):
            cleaned[i:i + AEC_FRAME] = self.echo.process(raw[i:i + AEC_FRAME])  # type: ignore[union-attr]
        return cleaned, raw

    def _run_vad(self, cleaned: np.ndarray, raw: np.ndarray) -> tuple[VadTransition, ...]:
        transitions: list[VadTransition] = []
        offset, total = 0, len(cleaned)
        while offset < total:
            take = min(FRAME_SAMPLES - self._filled, total - offset)
            self._frame[self._filled:self._filled + take] = cleaned[offset:offset + take]
            self._raw_frame[self._filled:self._filled + take] = raw[offset:offset + take]
            self._filled += take
            offset += take
            if self._filled == FRAME_SAMPLES:
                self._filled = 0
                transition = self._score_frame(self.samples + offset - FRAME_SAMPLES)
                if transition is not None:
                    transitions.append(transition)
        self.samples += total
        return tuple(transitions)

    def _score_frame(self, start: int) -> VadTransition | None:
        prob = self.vad(self._frame)
        if prob < self.segmenter.options.neg_threshold:
            self._run_start = -1
        elif self._run_start < 0:
            self._run_start = start
        threshold, onset = None, -1
        if self.guard is not None and not self.segmenter.in_speech and not self.no_echo_path:
            threshold = self.guard.threshold(self.segmenter.options.threshold)
            measured = self.echo is not None and self.echo.echo_path is True
            if not self.guard.allows(self._frame, self._raw_frame, echo_measured=measured):
                prob = 0.0  # the frame is no louder than the echo we expect: not the user
            if self.guard.active and self._run_start >= 0:
                # The guard decides whether an onset is the user, not where it began: it drops the quiet frames
                # inside a word ("What | time", the stop before the t) and the soft first frames under its raised
                # threshold, so the segment opened a word late. It starts where the VAD's run began instead.
                onset = max(self._run_start, start - self._lookback)
        self._prob = prob
        return self.segmenter.push(prob, start, threshold, onset)

    @property
    def no_echo_path(self) -> bool:
        """True once the canceller has measured that no echo reaches the mic (headphones): the guard then stands
        down, since there is no echo for an onset to exceed. Its energy test had held back a user quieter than
        Venus's own signal (most headsets: the mic speaks at -30 dBFS, the reference plays near full scale), and
        its raised threshold the soft start of their first word ("What time is it?" over her voice was heard as
        "time a bit.").
        """
        return self.echo is not None and self.echo.echo_path is False

    @property
    def silence_pending_since(self) -> int:
        """Sample where the current in-speech silence began, or -1 (lets ASR start the final early)."""
        return self.segmenter.silence_start if self.segmenter.in_speech else -1
