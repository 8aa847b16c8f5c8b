"""End of turn from the voice alone: pipecat's Smart Turn v3.2 (BSD-2-Clause), an int8 ONNX classifier on a
whisper-tiny encoder that hears whether the last 8 seconds of the user's speech sound finished.

It reads prosody, not words: a falling pitch and a lengthened last syllable say "done", a held or rising
one says "more to come". That holds for sentences, names and accents no word list has seen, which is why it is
one of the end-of-turn signals (issue #22); it is not a decision by itself.

The model takes whisper's log-mel features of exactly 8 s of 16 kHz audio, left-padded with silence, the
waveform first scaled to zero mean and unit variance. The features are computed here (numpy, one batched FFT);
only the mel filterbank comes from faster-whisper, which Venus already ships.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from engine.errors import ModelCorrupt
from engine.threads import default_threads

SAMPLE_RATE = 16000
WINDOW_S = 8
WINDOW_SAMPLES = WINDOW_S * SAMPLE_RATE
N_FFT = 400
HOP = 160
N_MELS = 80
FRAMES = WINDOW_SAMPLES // HOP  # 800
_INPUT = "input_features"


def _mel_filters() -> np.ndarray:
    from faster_whisper.feature_extractor import FeatureExtractor

    return np.asarray(FeatureExtractor.get_mel_filters(SAMPLE_RATE, N_FFT, N_MELS), dtype=np.float64)  # (80, 201)


_FILTERS: np.ndarray | None = None
_FILTERS_LOCK = threading.Lock()
_WINDOW = np.hanning(N_FFT + 1)[:-1]  # periodic Hann


def fit_window(audio: np.ndarray) -> np.ndarray:
    """The last 8 s of `audio`, with silence in front when it is shorter (the end of the turn stays at the end)."""
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if audio.size >= WINDOW_SAMPLES:
        return audio[-WINDOW_SAMPLES:]
    return np.concatenate([np.zeros(WINDOW_SAMPLES - audio.size, dtype=np.float32), audio])


def log_mel_features(window: np.ndarray) -> np.ndarray:
    """Whisper log-mel features (80 x 800, float32) of one 8 s window at 16 kHz, as Smart Turn was trained on."""
    global _FILTERS
    if window.shape != (WINDOW_SAMPLES,):
        raise ValueError(f"Smart Turn takes {WINDOW_SAMPLES} samples (8 s at 16 kHz), got {window.shape}")
    with _FILTERS_LOCK:
        if _FILTERS is None:
            _FILTERS = _mel_filters()
    x = window.astype(np.float32)
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    padded = np.pad(x.astype(np.float64), N_FFT // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:FRAMES]
    power = np.abs(np.fft.rfft(frames * _WINDOW, axis=-1)) ** 2  # (800, 201)
    mel = np.log10(np.maximum(_FILTERS @ power.T, 1e-10))  # (80, 800)
    mel = np.maximum(mel, mel.max() - 8.0)
    return ((mel + 4.0) / 4.0).astype(np.float32)


class SmartTurn:
    """Probability that the user's speech so far sounds like a finished turn; ~15-40 ms a call on one core."""

    def __init__(self, model_path: Path, *, threads: int | None = None) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or default_threads("onnx")
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 4
        try:
            self._session = ort.InferenceSession(str(model_path), sess_options=opts,
                                                 providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types for unreadable files
            raise ModelCorrupt(f"the end-of-turn model {model_path} could not be loaded ({exc})",
                               fix="run `venus models install` to restore it") from exc
        inputs = self._session.get_inputs()
        if len(inputs) != 1 or inputs[0].name != _INPUT or list(inputs[0].shape[1:]) != [N_MELS, FRAMES]:
            got = [(i.name, i.shape) for i in inputs]
            raise ModelCorrupt(f"{model_path} is not a Smart Turn v3 model (inputs {got})",
                               fix="set the end-of-turn model back to smart-turn-v3.2")
        self._lock = threading.Lock()

    def probability_complete(self, audio: np.ndarray) -> float:
        """0 = sounds cut off, 1 = sounds finished; `audio` is the user's turn so far, 16 kHz mono float32."""
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        if audio.size == 0 or not np.any(audio):
            return 0.0
        features = log_mel_features(fit_window(audio))[np.newaxis]
        with self._lock:  # one onnxruntime session, callers on several threads
            out = self._session.run(None, {_INPUT: features})[0]
        return float(np.clip(np.asarray(out).reshape(-1)[0], 0.0, 1.0))
