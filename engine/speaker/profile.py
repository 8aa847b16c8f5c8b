"""Is this the enrolled user's voice? Speaker embeddings and the user's enrolled profile.

Two embeddings, used together by default (`default_embedder`):
- the learned one, Resemblyzer's LSTM voice encoder (weights from its PyPI wheel, run in numpy by
  engine.speaker.voice_encoder; most speaker-embedding packages on PyPI fetch their weights from a hub at
  run time, this one ships them);
- a classic one: statistics of mel-cepstral coefficients over voiced frames plus pitch statistics, which
  needs no model and is strong on pitch (a woman's voice against a man's).
Their scores are averaged. Both separate clearly different voices (another person, a TV) and are weak on
similar voices; the overlap policy therefore treats the score as one signal among several, never as proof.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

SAMPLE_RATE = 16000


@dataclass(frozen=True)
class SpeakerEmbeddingOptions:
    """How audio becomes a speaker embedding."""

    sample_rate: int = SAMPLE_RATE  # input audio rate (Hz); the runtime feeds 16 kHz mono float32
    frame_ms: float = 25.0  # analysis window
    hop_ms: float = 10.0  # step between windows
    n_mels: int = 40  # mel filterbank size
    n_cepstra: int = 20  # cepstral coefficients kept (c0, the loudness term, is dropped afterwards)
    min_voiced_frames: int = 20  # fewer voiced frames than this (about 0.2 s) gives no embedding
    energy_floor_db: float = -35.0  # frames this far below the loudest frame count as silence

    def __post_init__(self) -> None:
        if self.sample_rate < 8000:
            raise ValueError(f"sample_rate must be at least 8000 Hz, got {self.sample_rate}")
        if not 5.0 <= self.frame_ms <= 100.0 or not 1.0 <= self.hop_ms <= self.frame_ms:
            raise ValueError(f"frame_ms must be 5-100 and hop_ms 1..frame_ms, got {self.frame_ms}/{self.hop_ms}")
        if not 2 <= self.n_cepstra <= self.n_mels:
            raise ValueError(f"n_cepstra must be between 2 and n_mels ({self.n_mels}), got {self.n_cepstra}")
        if self.min_voiced_frames < 1:
            raise ValueError(f"min_voiced_frames must be >= 1, got {self.min_voiced_frames}")
        if self.energy_floor_db >= 0:
            raise ValueError(f"energy_floor_db must be negative, got {self.energy_floor_db}")


class SpeakerEmbedder(Protocol):
    """Turns a stretch of speech into a fixed-size vector; similar voices give similar vectors."""

    def embed(self, audio: np.ndarray) -> np.ndarray | None:
        """The embedding of 16 kHz mono float audio, or None when it holds too little speech."""
        ...

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        """0..1, where 1 means the same voice."""
        ...


def _mel_filterbank(sample_rate: int, n_fft: int, n_mels: int) -> np.ndarray:
    def hz_to_mel(hz: np.ndarray | float) -> np.ndarray | float:
        return 2595.0 * np.log10(1.0 + np.asarray(hz) / 700.0)

    def mel_to_hz(mel: np.ndarray) -> np.ndarray:
        return 700.0 * (10 ** (mel / 2595.0) - 1.0)

    edges_hz = mel_to_hz(np.linspace(hz_to_mel(60.0), hz_to_mel(min(7600.0, sample_rate / 2)), n_mels + 2))
    bins = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    bank = np.zeros((n_mels, bins.size), dtype=np.float32)
    for m in range(n_mels):
        lo, mid, hi = edges_hz[m], edges_hz[m + 1], edges_hz[m + 2]
        rising = (bins - lo) / (mid - lo)
        falling = (hi - bins) / (hi - mid)
        bank[m] = np.clip(np.minimum(rising, falling), 0.0, None)
    return bank


def _dct_matrix(n_in: int, n_out: int) -> np.ndarray:
    k = np.arange(n_out)[:, None]
    n = np.arange(n_in)[None, :]
    return np.cos(math.pi / n_in * (n + 0.5) * k).astype(np.float32)


class MfccPitchEmbedder:
    """Speaker embedding from per-utterance MFCC means and spreads plus pitch statistics (numpy only)."""

    # Calibration of distance -> similarity, set on espeak-ng voices (same voice ~0.85, other voice ~0.05).
    _CEPSTRAL_SCALE = 30.0  # typical liftered cepstral-mean distance between two clips of one voice
    _PITCH_WEIGHT = 5.0  # a 0.1 difference in median log-f0 (about 10% pitch) adds 0.5 to the distance
    _MIDPOINT = 1.7  # distance at which similarity is 0.5
    _SLOPE = 3.0

    def __init__(self, options: SpeakerEmbeddingOptions | None = None) -> None:
        self.options = options or SpeakerEmbeddingOptions()
        o = self.options
        self._frame = int(o.sample_rate * o.frame_ms / 1000)
        self._hop = int(o.sample_rate * o.hop_ms / 1000)
        self._n_fft = 1 << (self._frame - 1).bit_length()
        self._window = np.hamming(self._frame).astype(np.float32)
        self._mel = _mel_filterbank(o.sample_rate, self._n_fft, o.n_mels)
        self._dct = _dct_matrix(o.n_mels, o.n_cepstra)

    def _frames(self, audio: np.ndarray) -> np.ndarray:
        count = 1 + (audio.size - self._frame) // self._hop
        index = np.arange(self._frame)[None, :] + self._hop * np.arange(count)[:, None]
        return audio[index]

    def _pitch(self, frames: np.ndarray) -> np.ndarray:
        # Autocorrelation pitch per voiced frame, 70-400 Hz; unvoiced frames (weak peak) are dropped.
        sr = self.options.sample_rate
        lo, hi = int(sr / 400), int(sr / 70)
        centred = frames - frames.mean(axis=1, keepdims=True)
        spectrum = np.fft.rfft(centred, n=2 * self._n_fft, axis=1)
        autocorr = np.fft.irfft(np.abs(spectrum) ** 2, axis=1)[:, : hi + 1]
        energy = autocorr[:, :1] + 1e-9
        peak_lag = lo + np.argmax(autocorr[:, lo : hi + 1], axis=1)
        strength = autocorr[np.arange(len(frames)), peak_lag] / energy[:, 0]
        return sr / peak_lag[strength > 0.45]

    def embed(self, audio: np.ndarray) -> np.ndarray | None:
        """The embedding of 16 kHz mono float audio, or None when it holds too little speech."""
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        if audio.size < self._frame * 2:
            return None
        emphasised = np.append(audio[0], audio[1:] - 0.97 * audio[:-1])
        frames = self._frames(emphasised)
        power_db = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12)
        voiced = power_db > max(power_db.max() + self.options.energy_floor_db, -80.0)
        if int(voiced.sum()) < self.options.min_voiced_frames:
            return None
        frames = frames[voiced]
        spectrum = np.abs(np.fft.rfft(frames * self._window, n=self._n_fft, axis=1)) ** 2
        log_mel = np.log(spectrum @ self._mel.T + 1e-8)
        cepstra = (log_mel @ self._dct.T)[:, 1:]  # drop c0: loudness is not identity
        pitch = self._pitch(self._frames(audio)[voiced])
        log_f0 = np.log(pitch) if pitch.size >= 5 else np.array([math.log(150.0)])
        pitch_stats = np.array([np.median(log_f0), np.subtract(*np.percentile(log_f0, [75, 25]))])
        return np.concatenate([cepstra.mean(axis=0), cepstra.std(axis=0), pitch_stats]).astype(np.float32)

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        """0..1 from a liftered cepstral distance plus the pitch difference; 1 means the same voice."""
        n = (a.size - 2) // 2
        lifter = np.arange(1, n + 1, dtype=np.float32)  # higher cepstra vary less, so weigh them up
        cepstral = float(np.sqrt(np.mean(((a[:n] - b[:n]) * lifter) ** 2))) / self._CEPSTRAL_SCALE
        distance = cepstral + self._PITCH_WEIGHT * abs(float(a[-2] - b[-2]))
        return float(1.0 / (1.0 + math.exp(self._SLOPE * (distance - self._MIDPOINT))))


class SpeakerProfile:
    """The enrolled user's voice: embeddings of the user's first utterances, compared against new speech."""

    def __init__(self, embedder: SpeakerEmbedder | None = None, max_utterances: int = 8) -> None:
        if max_utterances < 1:
            raise ValueError(f"max_utterances must be >= 1, got {max_utterances}")
        self.embedder = embedder or MfccPitchEmbedder()
        self.max_utterances = max_utterances
        self._enrolled: list[np.ndarray] = []

    @property
    def enrolled(self) -> bool:
        """True once at least one utterance was enrolled."""
        return bool(self._enrolled)

    @property
    def utterance_count(self) -> int:
        """How many utterances the profile holds."""
        return len(self._enrolled)

    def enroll(self, audio: np.ndarray) -> bool:
        """Add an utterance of the user's (until `max_utterances`); False when it held too little speech."""
        if len(self._enrolled) >= self.max_utterances:
            return False
        vector = self.embedder.embed(audio)
        if vector is None:
            return False
        self._enrolled.append(vector)
        return True

    def similarity(self, audio: np.ndarray) -> float | None:
        """Best similarity of `audio` to the enrolled utterances, or None before enrolment / on too little speech."""
        if not self._enrolled:
            return None
        vector = self.embedder.embed(audio)
        if vector is None:
            return None
        return max(self.embedder.similarity(vector, e) for e in self._enrolled)

    def similarity_to_embeddings(self, embeddings: Sequence[np.ndarray]) -> list[float]:
        """Similarity of precomputed embeddings to the profile (for batch evaluation)."""
        return [max(self.embedder.similarity(v, e) for e in self._enrolled) for v in embeddings]


class CombinedEmbedder:
    """Several embedders side by side: the embedding is their vectors concatenated, the score their mean."""

    def __init__(self, parts: Sequence[SpeakerEmbedder]) -> None:
        if not parts:
            raise ValueError("CombinedEmbedder needs at least one embedder")
        self.parts = list(parts)
        self._sizes: list[int] | None = None

    def embed(self, audio: np.ndarray) -> np.ndarray | None:
        """All parts' embeddings in one vector; None if any part had too little speech."""
        vectors = [p.embed(audio) for p in self.parts]
        if any(v is None for v in vectors):
            return None
        self._sizes = [len(v) for v in vectors]  # type: ignore[arg-type]
        return np.concatenate(vectors).astype(np.float32)  # type: ignore[arg-type]

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        """The mean of the parts' similarities."""
        if self._sizes is None or sum(self._sizes) != len(a) or len(a) != len(b):
            raise ValueError("similarity() takes two embeddings made by this embedder's embed()")
        scores, start = [], 0
        for part, size in zip(self.parts, self._sizes, strict=True):
            scores.append(part.similarity(a[start:start + size], b[start:start + size]))
            start += size
        return float(sum(scores) / len(scores))


def default_embedder() -> SpeakerEmbedder:
    """The learned voice encoder (when its model is installed) together with the MFCC-and-pitch embedding."""
    from engine.errors import ModelCorrupt, ModelNotFound
    from engine.models.registry import resolve
    from engine.speaker.voice_encoder import VoiceEncoder, VoiceEncoderEmbedder

    classic = MfccPitchEmbedder()
    try:
        learned = VoiceEncoderEmbedder(VoiceEncoder(resolve("resemblyzer-voice-encoder", kind="speaker")))
    except (ModelNotFound, ModelCorrupt) as exc:
        import logging

        logging.getLogger(__name__).warning("speaker encoder unavailable (%s); using MFCC and pitch only", exc)
        return classic
    return CombinedEmbedder([learned, classic])
