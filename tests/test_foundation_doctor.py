"""`venus doctor` on this machine: real devices (or none), verified models, a meaningful exit code."""

from __future__ import annotations

import os
import subprocess
import sys

import sounddevice as sd


def _doctor(env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "doctor"], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})})


def test_doctor_reports_this_machine_and_verified_models() -> None:
    proc = _doctor()
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "Venus is ready." in out
    for model in ("smollm2-135m-instruct-q4_1", "whisper-tiny-en", "silero-vad-v6", "piper-en-us-joe-medium"):
        line = next((line for line in out.splitlines() if f"[ ok ] model {model}:" in line), "")
        assert "verified" in line, out
    assert f"[ ok ] python: {sys.version.split()[0]}" in out
    # the audio lines list exactly the devices PortAudio sees here (none on a bare CI machine)
    inputs = [d["name"] for d in sd.query_devices() if d["max_input_channels"] > 0]
    line = next(line for line in out.splitlines() if "audio input:" in line)
    assert line.endswith(", ".join(inputs) or "none")
    assert "keyring:" in out and "database:" in out and "cpu:" in out
    # this test's config folder is empty: no settings file is not "ok", and it is no problem either
    assert "[info] settings: " in out and "not created yet: defaults in use" in out, out


def test_doctor_fails_with_the_fix_when_a_default_model_is_missing(tmp_path) -> None:
    proc = _doctor({"VENUS_MODELS_DIR": str(tmp_path / "no-models")})
    assert proc.returncode == 1
    assert "[FAIL] model smollm2-135m-instruct-q4_1" in proc.stdout
    assert "fix: run `venus models install`" in proc.stdout


def test_no_display_prints_one_line_pointing_to_chat() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    proc = subprocess.run([sys.executable, "-m", "app.cli"], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "venus chat" in proc.stderr
