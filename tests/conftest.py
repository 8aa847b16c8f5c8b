"""Shared test fixtures: every test gets its own settings, data and log folders; models stay shared.

Skips: a test skips only when something it needs is missing here (espeak-ng, the PulseAudio test server, the
keyring, Xvfb, a default model). `make test` installs and starts all of those, so under CI (CI=true) any skip
means the setup is broken, and it is reported as a failure with its reason instead of passing as green.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ENABLE_HINT = "`make test` (scripts/setup.sh + scripts/run-tests.sh) installs and starts what this needs"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _skip_reason(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_skip_in_ci(report) -> None:
    """Turn a skip into a failure under CI, keeping the reason (`make test` installed whatever was missing)."""
    reason = _skip_reason(report.longrepr).removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = f"skipped under CI={os.environ.get('CI')}, where nothing may be missing: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    if _in_ci():
        _fail_skip_in_ci(report)
    elif isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        path, line, reason = report.longrepr
        report.longrepr = (path, line, f"{reason} [to run it: {ENABLE_HINT}]")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A whole module skipped at import (pytest.importorskip) is a failure under CI too."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _in_ci():
        _fail_skip_in_ci(report)


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
