"""Speech synthesis: Piper neural voices (default) and espeak-ng (light fallback) behind one protocol."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.errors import ConfigError, ModelCorrupt
from engine.threads import default_threads
from engine.tts.normalize import speakable


@dataclass(frozen=True)
class TimedWord:
    """A word of a synthesized clause and the samples it occupies in that clause's audio."""

    text: str
    start_sample: int
    end_sample: int


@dataclass(frozen=True)
class SynthesizedClause:
    """Audio for one clause (mono float32 in [-1, 1]) with word timing.

    `text` is what the voice said: the clause after `speakable` ("12 × 14" -> "twelve times fourteen"), and
    `words` are its words, so the heard words reported for the clause are the words the user heard.
    """

    text: str
    audio: np.ndarray
    sample_rate: int
    words: tuple[TimedWord, ...]


class Synthesizer(Protocol):
    """Anything that speaks a clause of text; an empty `text` in the result means nothing was speakable."""

    sample_rate: int

    def synthesize(self, text: str) -> SynthesizedClause: ...


@dataclass(frozen=True)
class VoiceOptions:
    """How a voice speaks."""

    rate: float = 1.0  # 1.0 = the voice's natural speed; 2.0 = twice as fast
    volume: float = 1.0  # linear gain applied to the synthesized audio, 0..1
    threads: int = field(default_factory=lambda: default_threads("onnx"))  # CPU threads for the voice model
    # Piper draws random noise for a natural variation of pitch and timing (the voice's own noise scales); off,
    # a clause comes out the same every time (tests that compare runs)
    variation: bool = True

    def __post_init__(self) -> None:
        if not 0.5 <= self.rate <= 2.0:
            raise ValueError(f"rate must be within 0.5..2.0, got {self.rate}")
        if not 0.0 <= self.volume <= 1.0:
            raise ValueError(f"volume must be within 0..1, got {self.volume}")
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {self.threads}")


def proportional_words(text: str, n_samples: int, lead: int = 0, tail: int = 0) -> tuple[TimedWord, ...]:
    """Spread the words of `text` over the voiced samples in proportion to their length (spaces count too)."""
    tokens = text.split()
    if not tokens:
        return ()
    voiced = max(1, n_samples - lead - tail)
    weights = np.array([len(t) + 1 for t in tokens], dtype=np.float64)
    edges = lead + np.concatenate([[0.0], np.cumsum(weights)]) / weights.sum() * voiced
    return tuple(TimedWord(t, int(edges[i]), int(edges[i + 1])) for i, t in enumerate(tokens))


def _voiced_bounds(audio: np.ndarray, floor: float = 0.02) -> tuple[int, int]:
    loud = np.flatnonzero(np.abs(audio) > floor)
    if len(loud) == 0:
        return 0, 0
    return int(loud[0]), int(len(audio) - 1 - loud[-1])


class PiperSynthesizer:
    """A Piper ONNX voice, run with onnxruntime on the CPU at a fixed thread count."""

    def __init__(self, model_path: Path, options: VoiceOptions = VoiceOptions()) -> None:
        import onnxruntime as ort
        from piper import PiperVoice
        from piper.config import PiperConfig, SynthesisConfig

        config_path = Path(f"{model_path}.json")
        if not Path(model_path).exists() or not config_path.exists():
            raise ModelCorrupt(f"the Piper voice needs {model_path} and {config_path}",
                               fix="run `venus models install` or add both files of the voice")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = options.threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 4
        try:
            session = ort.InferenceSession(str(model_path), sess_options=opts, providers=["CPUExecutionProvider"])
            config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
        except Exception as exc:  # a broken voice file: say which one
            raise ModelCorrupt(f"the Piper voice {model_path} could not be loaded ({exc})",
                               fix="remove the voice or install it again") from exc
        self._voice = PiperVoice(session=session, config=config)
        steady = {} if options.variation else {"noise_scale": 0.0, "noise_w_scale": 0.0}
        self._config = SynthesisConfig(length_scale=1.0 / options.rate, volume=1.0, **steady)
        self._volume = options.volume
        self.sample_rate = config.sample_rate
        self.language = config.espeak_voice or "en"  # the voice's language, for `speakable`: "en-us"

    def synthesize(self, text: str) -> SynthesizedClause:
        """Speak one clause, read through `speakable`; Piper may split it into sentences, joined back together."""
        text = speakable(text, self.language)
        if not text:
            return SynthesizedClause("", np.zeros(0, np.float32), self.sample_rate, ())
        parts = [chunk.audio_float_array for chunk in self._voice.synthesize(text, self._config)]
        audio = (np.concatenate(parts) if parts else np.zeros(0, np.float32)).astype(np.float32) * self._volume
        lead, tail = _voiced_bounds(audio)
        return SynthesizedClause(text, audio, self.sample_rate, proportional_words(text, len(audio), lead, tail))


class EspeakSynthesizer:
    """The espeak-ng command-line synthesizer: robotic but tiny and instant."""

    sample_rate = 22050

    def __init__(self, voice: str = "en-us", options: VoiceOptions = VoiceOptions()) -> None:
        self._binary = shutil.which("espeak-ng")
        if self._binary is None:
            raise ConfigError("espeak-ng is not installed", fix="install espeak-ng or set tts.engine to piper")
        if not re.fullmatch(r"[A-Za-z0-9_+\-]+", voice):
            raise ConfigError(f"tts.voice {voice!r} is not an espeak-ng voice name", fix="use e.g. en-us")
        self._voice = voice
        self._wpm = int(175 * options.rate)
        self._volume = options.volume
        self.language = voice  # espeak voice names start with the language: "en-us", "de"

    def synthesize(self, text: str) -> SynthesizedClause:
        """Run espeak-ng once for the clause, read through `speakable`, and read its WAV from stdout."""
        import soundfile as sf

        text = speakable(text, self.language)
        if not text:
            return SynthesizedClause("", np.zeros(0, np.float32), self.sample_rate, ())
        done = subprocess.run([self._binary, "-v", self._voice, "-s", str(self._wpm), "--stdout", text],
                              capture_output=True, timeout=30, check=False)
        if done.returncode != 0 or not done.stdout:
            raise ConfigError(f"espeak-ng failed for voice {self._voice!r}: {done.stderr.decode(errors='replace')}",
                              fix="check tts.voice against `espeak-ng --voices`")
        audio, rate = sf.read(io.BytesIO(done.stdout), dtype="float32")
        audio = audio.reshape(-1) * self._volume
        self.sample_rate = rate
        lead, tail = _voiced_bounds(audio)
        return SynthesizedClause(text, audio, rate, proportional_words(text, len(audio), lead, tail))
