"""Shared test fixtures: every test gets its own settings, data and log folders; models stay shared."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point Venus's config/data/log/cache folders at a fresh temp folder (the models folder is left alone)."""
    root = tmp_path_factory.mktemp("venus-home")
    for name in ("CONFIG", "DATA", "LOG"):
        folder = root / name.lower()
        folder.mkdir()
        monkeypatch.setenv(f"VENUS_{name}_DIR", str(folder))
    return root


def synth_speech(text: str, path: Path, *, voice: str = "en-us", speed: int = 160, rate: int = 16000) -> np.ndarray:
    """Speak `text` with espeak-ng into a WAV at `rate` Hz mono; returns the float32 samples in [-1, 1]."""
    import soundfile as sf

    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    raw = path.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text], check=True)
    # sox resamples with a proper low-pass filter (espeak-ng speaks at 22050 Hz)
    subprocess.run(["sox", str(raw), "-r", str(rate), "-c", "1", "-b", "16", str(path)], check=True)
    raw.unlink()
    audio, _ = sf.read(path, dtype="float32")
    return audio


@pytest.fixture
def speech(tmp_path: Path):
    """Factory fixture: speech('hello there') -> (path, samples at 16 kHz)."""
    counter = iter(range(10_000))

    def make(text: str, **kwargs) -> tuple[Path, np.ndarray]:
        path = tmp_path / f"speech-{next(counter)}.wav"
        return path, synth_speech(text, path, **kwargs)

    return make


def _wait_until(predicate, timeout: float = 120.0, interval: float = 0.05) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


@pytest.fixture
def wait_until():
    """Poll `predicate()` until it is true or `timeout` seconds pass; returns whether it became true."""
    return _wait_until


@pytest.fixture(scope="module")
def small_llm():
    """The default GGUF in process (2048-token window, batch 64, one thread), shared by a module's tests."""
    from engine.llm.llama_backend import LlamaBackend, LlamaOptions
    from engine.models.registry import resolve

    backend = LlamaBackend(LlamaOptions(model_path=str(resolve("smollm2-135m-instruct-q4_1", kind="llm")),
                                        n_ctx=2048, n_batch=64, n_threads=1))
    yield backend
    backend.close()
