"""A short speed probe run after a model is downloaded; its result is kept beside the model as a small JSON.

LLM: decode tokens per second (llama-cpp-python, greedy, after a short prompt). Speech recognition and voices: the
real-time factor (seconds of compute per second of audio; below 1 is faster than real time). The result says
what this machine does with the model, so the catalog can show a measured speed class instead of a guess.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

import numpy as np

from engine.models.registry import ModelEntry

PROBE_PROMPT = "Here is a short story about a lighthouse keeper and a storm at sea. Once upon a time,"
PROBE_TOKENS = 32  # decode steps timed (after the first, which includes the prompt)
PROBE_SENTENCE = "Remind me in ten minutes to check the oven, and tell me tomorrow's weather please."

# Speed classes. A spoken answer needs about 10 tokens a second to keep ahead of the voice; ASR decodes each
# utterance several times (partials, pre-final, final), so its real-time factor must be well below 1.
LLM_FAST_TOKENS_PER_S = 20.0
LLM_OK_TOKENS_PER_S = 8.0
ASR_FAST_RTF = 0.15
ASR_OK_RTF = 0.5
TTS_FAST_RTF = 0.2
TTS_OK_RTF = 0.6


class SpeedClass(StrEnum):
    """How a model runs here, in words a user can act on."""

    FAST = "fast"  # comfortably ahead of conversation
    OK = "ok"  # keeps up with conversation
    SLOW = "slow"  # falls behind: answers lag, or speech is recognised late


@dataclass(frozen=True)
class ProbeResult:
    """What the probe measured for one model on this machine."""

    model_id: str
    metric: str  # "tokens_per_s" (LLM) or "real_time_factor" (ASR, TTS)
    value: float
    speed: SpeedClass
    threads: int
    measured_at: str  # ISO time, UTC

    def describe(self) -> str:
        """"14.2 tokens/s (ok)" or "RTF 0.21 (ok)"."""
        shown = f"{self.value:.1f} tokens/s" if self.metric == "tokens_per_s" else f"RTF {self.value:.2f}"
        return f"{shown} ({self.speed})"


def speed_class(kind: str, value: float) -> SpeedClass:
    """The class of a measured value: tokens/s for an LLM, real-time factor for asr and tts."""
    if kind == "llm":
        return SpeedClass.FAST if value >= LLM_FAST_TOKENS_PER_S else SpeedClass.OK if value >= LLM_OK_TOKENS_PER_S \
            else SpeedClass.SLOW
    fast, ok = (ASR_FAST_RTF, ASR_OK_RTF) if kind == "asr" else (TTS_FAST_RTF, TTS_OK_RTF)
    return SpeedClass.FAST if value <= fast else SpeedClass.OK if value <= ok else SpeedClass.SLOW


def probe_file(entry: ModelEntry) -> Path:
    """Where the probe result of a model is kept: beside its file (or inside its folder)."""
    primary = entry.primary
    return primary / ".probe.json" if primary.is_dir() else primary.with_name(f".{primary.name}.probe.json")


def read_probe(entry: ModelEntry) -> ProbeResult | None:
    """The stored probe result, or None when the model was never probed (or the file is unreadable)."""
    try:
        raw = json.loads(probe_file(entry).read_text(encoding="utf-8"))
        return ProbeResult(**{**raw, "speed": SpeedClass(raw["speed"])})
    except (OSError, ValueError, TypeError, KeyError):
        return None


def can_probe(kind: str) -> bool:
    """Whether the probe measures models of this kind."""
    return kind in ("llm", "asr", "tts")


def run_probe(entry: ModelEntry, *, threads: int | None = None) -> ProbeResult:
    """Measure the model on this machine (a few seconds) and store the result beside it."""
    if entry.kind == "llm":
        from engine.llm.llama_options import choose_threads

        threads = threads or choose_threads(0)
        metric, value = "tokens_per_s", _llm_tokens_per_s(entry.primary, threads)
    elif entry.kind in ("asr", "tts"):
        from engine.threads import default_threads

        threads = threads or default_threads("ct2" if entry.kind == "asr" else "onnx")
        value = _asr_rtf(entry.primary, threads) if entry.kind == "asr" else _tts_rtf(entry.primary, threads)
        metric = "real_time_factor"
    else:
        raise ValueError(f"no speed probe for {entry.kind} models ({entry.id})")
    result = ProbeResult(entry.id, metric, round(value, 4), speed_class(entry.kind, value), threads,
                         datetime.now(UTC).isoformat(timespec="seconds"))
    probe_file(entry).write_text(json.dumps(asdict(result), indent=1), encoding="utf-8")
    return result


def _llm_tokens_per_s(path: Path, threads: int) -> float:
    from llama_cpp import Llama

    llm = Llama(model_path=str(path), n_ctx=256, n_threads=threads, n_batch=64, verbose=False)
    try:
        tokens = llm.tokenize(PROBE_PROMPT.encode())
        started, count = 0.0, 0
        for _token in llm.generate(tokens, temp=0.0, top_k=1):  # the first step includes the prompt: not timed
            count += 1
            if count == 1:
                started = time.perf_counter()
            if count > PROBE_TOKENS:
                break
        return PROBE_TOKENS / (time.perf_counter() - started)
    finally:
        llm.close()


def _speech(sample_rate: int = 16000) -> np.ndarray:
    """A spoken sentence from espeak-ng (installed by setup); a voiced buzz when espeak-ng is missing."""
    espeak = shutil.which("espeak-ng")
    if espeak:
        with tempfile.TemporaryDirectory() as tmp:
            wav = Path(tmp) / "probe.wav"
            subprocess.run([espeak, "-w", str(wav), PROBE_SENTENCE], check=True, capture_output=True, timeout=30)
            import soundfile

            audio, rate = soundfile.read(wav, dtype="float32")
        from engine.audio.resample import resample_clip

        return resample_clip(audio, rate, sample_rate)
    t = np.arange(int(4.0 * sample_rate)) / sample_rate
    return (0.2 * np.sign(np.sin(2 * np.pi * 140 * t)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


def _asr_rtf(folder: Path, threads: int) -> float:
    from engine.asr.whisper import WhisperOptions, WhisperTranscriber

    audio = _speech()
    transcriber = WhisperTranscriber(WhisperOptions(folder, language="en", threads=threads))
    transcriber.warm_up()
    started = time.perf_counter()
    transcriber.transcribe(audio, word_timestamps=False)
    return (time.perf_counter() - started) / (len(audio) / 16000)


def _tts_rtf(model: Path, threads: int) -> float:
    from engine.tts.synth import PiperSynthesizer, VoiceOptions

    voice = PiperSynthesizer(model, VoiceOptions(threads=threads))
    voice.synthesize("Hello.")  # the first call sets onnxruntime up
    started = time.perf_counter()
    clause = voice.synthesize(PROBE_SENTENCE)
    return (time.perf_counter() - started) / max(len(clause.audio) / clause.sample_rate, 1e-3)
