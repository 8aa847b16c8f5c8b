"""Sample-rate conversion: a streaming converter for live input and a whole-clip one for synthesized speech."""

from __future__ import annotations

import numpy as np


def _lowpass_taps(cutoff: float, taps: int) -> np.ndarray:
    # windowed-sinc low-pass; `cutoff` is a fraction of the input Nyquist frequency
    n = np.arange(taps) - (taps - 1) / 2
    kernel = cutoff * np.sinc(cutoff * n) * np.blackman(taps)
    return (kernel / kernel.sum()).astype(np.float32)


class StreamResampler:
    """Converts a mono float32 stream block by block, keeping filter and phase state between blocks."""

    def __init__(self, rate_in: int, rate_out: int, taps: int = 63) -> None:
        if rate_in <= 0 or rate_out <= 0:
            raise ValueError(f"sample rates must be positive, got {rate_in} -> {rate_out}")
        self.rate_in = rate_in
        self.rate_out = rate_out
        self._step = rate_in / rate_out  # input samples per output sample
        self._taps = _lowpass_taps(min(1.0, rate_out / rate_in) * 0.95, taps) if rate_out < rate_in else None
        self._filter_tail = np.zeros(taps - 1, dtype=np.float32)
        self._carry = np.zeros(0, dtype=np.float32)  # filtered input not yet consumed (for interpolation)
        self._pos = 0.0  # position of the next output sample, relative to the start of `_carry`

    def process(self, block: np.ndarray) -> np.ndarray:
        """Resample one block; returns however many output samples it completes (may be zero)."""
        block = np.asarray(block, dtype=np.float32).reshape(-1)
        if self.rate_in == self.rate_out:
            return block.copy()
        if self._taps is not None:
            padded = np.concatenate([self._filter_tail, block])
            self._filter_tail = padded[len(padded) - len(self._filter_tail):].copy()
            block = np.convolve(padded, self._taps, mode="valid").astype(np.float32)
        data = np.concatenate([self._carry, block])
        if len(data) < 2:
            self._carry = data
            return np.zeros(0, dtype=np.float32)
        last = len(data) - 1  # interpolation needs the sample after each position
        count = int(np.floor((last - 1e-9 - self._pos) / self._step)) + 1 if self._pos < last else 0
        positions = self._pos + self._step * np.arange(count)
        left = positions.astype(np.int64)
        frac = (positions - left).astype(np.float32)
        out = data[left] * (1.0 - frac) + data[left + 1] * frac
        next_pos = self._pos + self._step * count
        drop = int(next_pos)
        self._carry = data[drop:].copy()
        self._pos = next_pos - drop
        return out.astype(np.float32)


    def process_silence(self, count: int) -> np.ndarray:
        """Resample `count` silent input samples without building them: once the filter has emptied, only the
        phase moves. Returns a read-only view of zeros (or the real output while a past sound still rings)."""
        if self.rate_in == self.rate_out:
            return _zeros(count)
        if self._filter_tail.any() or self._carry.any():
            return self.process(np.zeros(count, np.float32))
        last = len(self._carry) + count - 1
        made = int(np.floor((last - 1e-9 - self._pos) / self._step)) + 1 if self._pos < last else 0
        next_pos = self._pos + self._step * made
        drop = int(next_pos)
        self._carry = _zeros(last + 1 - drop)
        self._pos = next_pos - drop
        return _zeros(made)


_ZEROS = np.zeros(48000, np.float32)
_ZEROS.flags.writeable = False


def _zeros(count: int) -> np.ndarray:
    return _ZEROS[:count] if count <= len(_ZEROS) else np.zeros(count, np.float32)


def resample_clip(audio: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """Resample a whole clip through the FFT (high quality; for synthesized clauses, not live audio)."""
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if rate_in == rate_out or len(audio) == 0:
        return audio.copy()
    n_out = int(round(len(audio) * rate_out / rate_in))
    spectrum = np.fft.rfft(audio)
    bins = n_out // 2 + 1
    if bins <= len(spectrum):
        spectrum = spectrum[:bins]
    else:
        spectrum = np.concatenate([spectrum, np.zeros(bins - len(spectrum), dtype=spectrum.dtype)])
    return (np.fft.irfft(spectrum, n_out) * (n_out / len(audio))).astype(np.float32)
