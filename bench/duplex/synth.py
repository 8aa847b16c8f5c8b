"""Speech for the benchmark and tests: espeak-ng voices (or the Piper voice, pitch-shifted) rendered to 16 kHz mono,
cached on disk by content."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

SAMPLE_RATE = 16000


PIPER = "piper"  # Voice.name of the Piper voice Venus ships (piper-en-us-joe-medium), a natural recorded speaker
PIPER_MODEL = "piper-en-us-joe-medium"
PIPER_NATURAL_WPM = 165  # about joe-medium's own speed; a Voice's words_per_minute is relative to it
PIPER_CENTS_PER_PITCH = 20  # a Piper Voice's pitch 50 is the voice's own; each step away shifts it 20 cents (sox)


@dataclass(frozen=True)
class Voice:
    """An espeak-ng voice with its speaking rate and pitch; or, named PIPER, the Piper voice at a rate and pitch
    shift (pitch 50: its own; 25: 500 cents lower)."""

    name: str  # espeak-ng voice, e.g. "en-us" or "en-us+f3", or PIPER
    words_per_minute: int = 165  # espeak-ng -s
    pitch: int = 50  # espeak-ng -p, 0..99

    def __post_init__(self) -> None:
        if not 80 <= self.words_per_minute <= 400:
            raise ValueError(f"words_per_minute must be 80-400, got {self.words_per_minute}")
        if not 0 <= self.pitch <= 99:
            raise ValueError(f"pitch must be 0-99, got {self.pitch}")


def require_tools() -> None:
    """Raise a clear error when espeak-ng or sox is missing."""
    for tool in ("espeak-ng", "sox"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not installed; install it with `apt-get install espeak-ng sox`")


class SpeechCache:
    """Renders text with espeak-ng (or Piper) once per (text, voice); later calls read the cached 16 kHz WAV."""

    def __init__(self, folder: Path | None = None) -> None:
        require_tools()
        self.folder = Path(folder) if folder else Path(tempfile.gettempdir()) / "venus-bench-speech"
        self.folder.mkdir(parents=True, exist_ok=True)
        self._piper: dict[float, object] = {}  # PiperSynthesizer by rate, loaded on first use

    def render(self, text: str, voice: Voice, effects: tuple[str, ...] = ()) -> np.ndarray:
        """16 kHz mono float32 speech of `text` through optional sox `effects`, edge silence trimmed."""
        spec = f"{voice.name}|{voice.words_per_minute}|{voice.pitch}|{' '.join(effects)}|{text}"
        key = hashlib.sha1(spec.encode()).hexdigest()[:20]
        path = self.folder / f"{key}.wav"
        if not path.exists() and voice.name == PIPER:
            self._render_piper(text, voice, effects, path)
        elif not path.exists():
            tmp = path.with_suffix(".tmp.wav")
            espeak = subprocess.run(
                ["espeak-ng", "-v", voice.name, "-s", str(voice.words_per_minute), "-p", str(voice.pitch),
                 "--stdout", text], capture_output=True, check=True)
            subprocess.run(["sox", "-t", "wav", "-", "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", str(tmp), *effects],
                           input=espeak.stdout, capture_output=True, check=True)
            tmp.replace(path)
        audio, rate = sf.read(path, dtype="float32")
        if rate != SAMPLE_RATE:
            raise RuntimeError(f"{path} has {rate} Hz, expected {SAMPLE_RATE}; delete the cache folder {self.folder}")
        return trim_silence(audio)

    def _render_piper(self, text: str, voice: Voice, effects: tuple[str, ...], path: Path) -> None:
        """Piper's speech at the voice's rate (no random variation: the same text renders the same), then sox:
        16 kHz, the pitch shift, the effects."""
        from engine.models.registry import resolve
        from engine.tts.synth import PiperSynthesizer, VoiceOptions

        rate = round(min(2.0, max(0.5, voice.words_per_minute / PIPER_NATURAL_WPM)), 3)
        if rate not in self._piper:  # one loaded voice per rate (a rate is the voice's length scale)
            self._piper[rate] = PiperSynthesizer(resolve(PIPER_MODEL, "tts"),
                                                 VoiceOptions(rate=rate, threads=1, variation=False))
        clause = self._piper[rate].synthesize(text)
        if clause.audio.size == 0:
            raise ValueError(f"Piper said nothing for {text!r}")
        raw, tmp = path.with_suffix(".piper.wav"), path.with_suffix(".tmp.wav")
        cents = (voice.pitch - 50) * PIPER_CENTS_PER_PITCH
        shift = ("pitch", str(cents)) if cents else ()
        try:  # no half-written file stays in the cache when sox fails
            sf.write(raw, clause.audio, clause.sample_rate, subtype="PCM_16")
            subprocess.run(["sox", str(raw), "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", str(tmp), *shift,
                            *effects], capture_output=True, check=True)
            tmp.replace(path)
        finally:
            raw.unlink(missing_ok=True)
            tmp.unlink(missing_ok=True)


def trim_silence(audio: np.ndarray, threshold: float = 1e-3) -> np.ndarray:
    """Drop leading and trailing samples quieter than `threshold`, so event times are exact speech times."""
    loud = np.flatnonzero(np.abs(audio) > threshold)
    if loud.size == 0:
        return audio[:0]
    return audio[loud[0] : loud[-1] + 1]


def place(track: np.ndarray, clip: np.ndarray, start_s: float, gain: float = 1.0) -> tuple[float, float]:
    """Mix `clip` into `track` at `start_s` (in place); returns the clip's (start_s, end_s)."""
    start = int(round(start_s * SAMPLE_RATE))
    end = min(track.size, start + clip.size)
    track[start:end] += gain * clip[: end - start]
    return start / SAMPLE_RATE, end / SAMPLE_RATE
