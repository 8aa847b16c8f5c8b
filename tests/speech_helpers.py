"""Real speech for the speech tests: espeak-ng voices, the Piper voice, and a sox room with delay and reverb."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.audio.resample import resample_clip

RATE = 16000


def have_tools() -> bool:
    """espeak-ng and sox are installed."""
    return shutil.which("espeak-ng") is not None and shutil.which("sox") is not None


def espeak(text: str, voice: str = "en-us", wpm: int = 160) -> np.ndarray:
    """Speak `text` with espeak-ng; 16 kHz float32."""
    wav = subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "--stdout", text],
                         capture_output=True, check=True).stdout
    with tempfile.NamedTemporaryFile(suffix=".wav") as fh:
        fh.write(wav)
        fh.flush()
        audio, rate = sf.read(fh.name, dtype="float32")
    return resample_clip(audio.reshape(-1), rate, RATE)


@functools.lru_cache(maxsize=1)
def piper_voice():
    """The default Piper voice, loaded once per test session."""
    from engine.models.registry import resolve
    from engine.tts import PiperSynthesizer, VoiceOptions

    return PiperSynthesizer(resolve("piper-en-us-joe-medium"), VoiceOptions(threads=1))


@functools.cache
def steady_piper_voice():
    """The default Piper voice without its random variation: the same audio for the same text on every run."""
    from engine.models.registry import resolve
    from engine.tts import PiperSynthesizer, VoiceOptions

    return PiperSynthesizer(resolve("piper-en-us-joe-medium"), VoiceOptions(threads=1, variation=False))


def piper(text: str) -> np.ndarray:
    """Speak `text` with Venus's default voice, the same audio every run; 16 kHz float32."""
    clause = steady_piper_voice().synthesize(text)
    return resample_clip(clause.audio, clause.sample_rate, RATE)


def room(audio: np.ndarray, *, delay_ms: int, gain_db: float, reverberance: int) -> np.ndarray:
    """What a mic hears of `audio` played in a room: sox reverb, then a delay and a level change."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.wav", Path(tmp) / "out.wav"
        sf.write(src, audio, RATE, subtype="FLOAT")
        subprocess.run(["sox", "-V1", str(src), str(dst), "reverb", str(reverberance), "50", "60"], check=True)
        wet, _ = sf.read(dst, dtype="float32")
    wet = wet.reshape(-1)[: len(audio)]
    delayed = np.concatenate([np.zeros(delay_ms * RATE // 1000, np.float32), wet])[: len(audio)]
    return (delayed * 10 ** (gain_db / 20)).astype(np.float32)


def pad(audio: np.ndarray, before_s: float, after_s: float) -> np.ndarray:
    """Silence around a clip."""
    return np.concatenate([np.zeros(int(before_s * RATE), np.float32), audio,
                           np.zeros(int(after_s * RATE), np.float32)]).astype(np.float32)


def write_wav(path: Path, audio: np.ndarray, rate: int = RATE) -> Path:
    """Save float32 audio as 16-bit PCM."""
    sf.write(path, audio, rate, subtype="PCM_16")
    return path


class RecordingTranscriber:
    """The real whisper, noting the audio length and hint of every quick decode, and every decode's beam and hint."""

    def __init__(self, inner):
        self.inner, self.calls, self.beams, self.hints = inner, [], [], []

    def transcribe(self, audio, *, word_timestamps, beam_size=None, hint=""):
        self.beams.append(("final", beam_size))
        self.hints.append(("final", hint))
        return self.inner.transcribe(audio, word_timestamps=word_timestamps, beam_size=beam_size, hint=hint)

    def transcribe_quick(self, audio, *, word_timestamps, hint="", beam_size=None):
        self.calls.append((len(audio), hint))
        self.beams.append(("prefinal" if word_timestamps else "partial", beam_size))
        self.hints.append(("prefinal" if word_timestamps else "partial", hint))
        return self.inner.transcribe_quick(audio, word_timestamps=word_timestamps, hint=hint, beam_size=beam_size)
