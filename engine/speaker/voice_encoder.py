"""A learned speaker embedding without torch: Resemblyzer's voice encoder, run in numpy.

The Resemblyzer wheel on PyPI (Apache-2.0) ships its trained weights (`pretrained.pt`: a 3-layer LSTM over 40
mel bands, 256-d output, trained for speaker verification). Loading them normally needs torch; this module
reads torch's legacy checkpoint format directly (a pickle whose tensors point into raw storages appended
after it) and runs the network with numpy, so `venus models install` fetches the wheel like every other model
and nothing downloads at run time.

An utterance is embedded as Resemblyzer does: mel power frames (25 ms window, 10 ms hop), 1.6 s windows at
50% overlap through the LSTM, the last hidden state through a linear layer and a ReLU, the windows averaged and
L2-normalised. Cosine similarity of two embeddings is then ~0.75-0.95 for the same voice, lower for others.
"""

from __future__ import annotations

import io
import pickle
import struct
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import ModelCorrupt

SAMPLE_RATE = 16000
_N_FFT = 400  # 25 ms
_HOP = 160  # 10 ms
_N_MELS = 40
_PARTIAL_FRAMES = 160  # 1.6 s, the window the encoder was trained on
_MIN_FRAMES = 30  # under 0.3 s of audio there is no embedding
_TARGET_DBFS = -30.0  # quiet input is raised to this level first (never lowered), as in training

_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
           "LongStorage": np.int64, "IntStorage": np.int32}
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


class _Storage:
    def __init__(self, key: str, dtype: type, size: int) -> None:
        self.key, self.dtype, self.size = key, dtype, size
        self.data: np.ndarray | None = None


class _TensorRef:
    def __init__(self, storage: _Storage, offset: int, shape: tuple[int, ...], stride: tuple[int, ...]) -> None:
        self.storage, self.offset, self.shape, self.stride = storage, offset, shape, stride

    def array(self) -> np.ndarray:
        data = self.storage.data
        assert data is not None
        item = data.itemsize
        view = np.lib.stride_tricks.as_strided(data[self.offset:], shape=self.shape,
                                               strides=tuple(s * item for s in self.stride))
        return np.array(view, dtype=np.float32)


class _StorageType:
    def __init__(self, name: str) -> None:
        self.name = name


def _rebuild_tensor(storage: _Storage, offset: int, shape: tuple[int, ...], stride: tuple[int, ...],
                    *_rest: Any) -> _TensorRef:
    return _TensorRef(storage, offset, tuple(shape), tuple(stride))


class _Unpickler(pickle.Unpickler):
    """Reads a torch legacy checkpoint's object graph, with tensors left as references into storages."""

    def __init__(self, stream: io.BufferedIOBase, storages: dict[str, _Storage]) -> None:
        super().__init__(stream)
        self._storages = storages

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return _rebuild_tensor
        if module == "torch" and name in _DTYPES:
            return _StorageType(name)
        if module == "collections" and name == "OrderedDict":
            return OrderedDict
        raise pickle.UnpicklingError(f"unexpected object {module}.{name} in a weights file")

    def persistent_load(self, pid: Any) -> _Storage:
        kind, storage_type, key, _location, size = pid[:5]
        if kind != "storage" or not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        if key not in self._storages:
            self._storages[key] = _Storage(key, _DTYPES[storage_type.name], int(size))
        return self._storages[key]


def load_legacy_checkpoint(path: Path) -> dict[str, Any]:
    """The object saved by torch.save (legacy, non-zip format) with tensors as float32 numpy arrays."""
    try:
        with open(path, "rb") as f:
            if pickle.load(f) != _LEGACY_MAGIC:  # noqa: S301 - a fixed, sha256-verified model file
                raise ModelCorrupt(f"{path} is not a torch legacy checkpoint", fix="run `venus models install`")
            pickle.load(f)  # protocol version  # noqa: S301
            pickle.load(f)  # system info  # noqa: S301
            storages: dict[str, _Storage] = {}
            obj = _Unpickler(f, storages).load()
            keys = pickle.load(f)  # noqa: S301
            for key in keys:
                storage = storages[key]
                (count,) = struct.unpack("<q", f.read(8))
                raw = f.read(count * np.dtype(storage.dtype).itemsize)
                if len(raw) != count * np.dtype(storage.dtype).itemsize:
                    raise ModelCorrupt(f"{path} is truncated", fix="run `venus models install` again")
                storage.data = np.frombuffer(raw, dtype=storage.dtype)
    except ModelCorrupt:
        raise
    except Exception as exc:  # a damaged pickle fails in many ways; all of them mean "fetch the file again"
        raise ModelCorrupt(f"{path} could not be read as voice-encoder weights ({exc})",
                           fix="run `venus models install` to fetch it again") from exc
    return _materialize(obj)


def _materialize(obj: Any) -> Any:
    if isinstance(obj, _TensorRef):
        return obj.array()
    if isinstance(obj, dict):
        return type(obj)((k, _materialize(v)) for k, v in obj.items())
    if isinstance(obj, list | tuple):
        return type(obj)(_materialize(v) for v in obj)
    return obj


def _mel_filters() -> np.ndarray:
    """40 Slaney-style mel filters for a 400-point FFT at 16 kHz, area-normalised (librosa's defaults)."""
    def hz_to_mel(hz: np.ndarray) -> np.ndarray:
        hz = np.asarray(hz, dtype=np.float64)
        mel = hz / (200.0 / 3)
        log_region = hz >= 1000.0
        return np.where(log_region, 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0) / (np.log(6.4) / 27.0), mel)

    def mel_to_hz(mel: np.ndarray) -> np.ndarray:
        hz = mel * (200.0 / 3)
        return np.where(mel >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (mel - 15.0)), hz)

    fft_freqs = np.linspace(0, SAMPLE_RATE / 2, _N_FFT // 2 + 1)
    mel_points = mel_to_hz(np.linspace(hz_to_mel(np.array(0.0)), hz_to_mel(np.array(SAMPLE_RATE / 2)), _N_MELS + 2))
    widths = np.diff(mel_points)
    ramps = mel_points[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_points[2:] - mel_points[:-2]))[:, None]
    return weights.astype(np.float32)


def mel_frames(audio: np.ndarray) -> np.ndarray:
    """Mel power spectrogram, frames x 40 (centered frames, zero padding, periodic Hann window)."""
    audio = np.asarray(audio, dtype=np.float32)
    padded = np.pad(audio, _N_FFT // 2)
    count = 1 + (len(padded) - _N_FFT) // _HOP
    if count < 1:
        return np.zeros((0, _N_MELS), np.float32)
    frames = np.lib.stride_tricks.as_strided(padded, shape=(count, _N_FFT),
                                             strides=(padded.strides[0] * _HOP, padded.strides[0]))
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(_N_FFT) / _N_FFT)).astype(np.float32)
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2
    return (power @ _MEL.T).astype(np.float32)


_MEL = _mel_filters()


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # the logistic function, without overflow


class VoiceEncoder:
    """Resemblyzer's speaker encoder in numpy: `embed(audio)` -> 256-d unit vector, or None if too short."""

    def __init__(self, weights_path: Path) -> None:
        checkpoint = load_legacy_checkpoint(Path(weights_path))
        state = checkpoint.get("model_state") if isinstance(checkpoint, dict) else None
        if not isinstance(state, dict):
            raise ModelCorrupt(f"{weights_path} holds no model_state", fix="run `venus models install` again")
        try:
            self._layers = [
                (state[f"lstm.weight_ih_l{k}"].T.copy(), state[f"lstm.weight_hh_l{k}"].T.copy(),
                 state[f"lstm.bias_ih_l{k}"] + state[f"lstm.bias_hh_l{k}"])
                for k in range(3)
            ]
            self._linear_w, self._linear_b = state["linear.weight"].T.copy(), state["linear.bias"]
        except KeyError as exc:
            raise ModelCorrupt(f"{weights_path} lacks the tensor {exc}", fix="run `venus models install` again") from exc
        if self._layers[0][0].shape != (_N_MELS, 1024):
            raise ModelCorrupt(f"{weights_path} has an unexpected input layer {self._layers[0][0].shape}",
                               fix="run `venus models install` again")

    def _forward(self, mels: np.ndarray) -> np.ndarray:
        """Embeddings of a batch of mel windows (batch x frames x 40), before averaging."""
        x = mels
        hidden = None
        for w_ih, w_hh, bias in self._layers:
            batch, steps, _ = x.shape
            size = w_hh.shape[0]
            inputs = x @ w_ih + bias  # every step's input projection at once
            h = np.zeros((batch, size), np.float32)
            c = np.zeros((batch, size), np.float32)
            out = np.empty((batch, steps, size), np.float32)
            for t in range(steps):
                gates = inputs[:, t] + h @ w_hh
                i, f, g, o = (gates[:, :size], gates[:, size:2 * size], gates[:, 2 * size:3 * size],
                              gates[:, 3 * size:])
                c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
                h = _sigmoid(o) * np.tanh(c)
                out[:, t] = h
            x, hidden = out, h
        assert hidden is not None
        raw = np.maximum(0.0, hidden @ self._linear_w + self._linear_b)
        return raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-9)

    def embed(self, audio: np.ndarray) -> np.ndarray | None:
        """The utterance's embedding (unit length), or None for less than 0.3 s of audio."""
        audio = np.asarray(audio, dtype=np.float32)
        rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))) if len(audio) else 0.0
        if rms <= 0.0:
            return None
        gain_db = _TARGET_DBFS - 20 * np.log10(rms)
        if gain_db > 0:
            audio = audio * np.float32(10 ** (gain_db / 20))
        mels = mel_frames(audio)
        if len(mels) < _MIN_FRAMES:
            return None
        if len(mels) <= _PARTIAL_FRAMES:
            windows = mels[None]
        else:
            step = _PARTIAL_FRAMES // 2
            starts = list(range(0, len(mels) - _PARTIAL_FRAMES + 1, step))
            windows = np.stack([mels[s:s + _PARTIAL_FRAMES] for s in starts])
        mean = self._forward(windows).mean(axis=0)
        return (mean / max(float(np.linalg.norm(mean)), 1e-9)).astype(np.float32)

    @staticmethod
    def similarity(a: np.ndarray, b: np.ndarray) -> float:
        """Cosine similarity of two embeddings, clipped to 0..1 (they are non-negative, so it rarely clips)."""
        return float(np.clip(np.dot(a, b) / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-9), 0.0, 1.0))


class VoiceEncoderEmbedder:
    """The voice encoder as a SpeakerEmbedder, with its cosine calibrated to a 0..1 "same voice" score.

    Measured on espeak-ng voices: the same voice over different sentences scores a cosine of 0.78-0.89, a
    female variant of the male voice 0.49-0.60, and neighbouring male voices 0.72-0.84 (synthetic voices
    that share one formant model). The logistic below puts 0.5 at a cosine of 0.72.
    """

    MIDPOINT = 0.72
    SCALE = 0.04

    def __init__(self, encoder: VoiceEncoder) -> None:
        self.encoder = encoder

    def embed(self, audio: np.ndarray) -> np.ndarray | None:
        """The unit embedding, or None for less than 0.3 s of audio."""
        return self.encoder.embed(audio)

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        """0..1, 1 = the same voice."""
        cosine = VoiceEncoder.similarity(a, b)
        return float(1.0 / (1.0 + np.exp(-(cosine - self.MIDPOINT) / self.SCALE)))
