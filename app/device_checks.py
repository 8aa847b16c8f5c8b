"""The first-run checks: can Venus hear, speak, see, and load its models? Each returns a plain verdict.

They block (recording, playing, opening a camera, reading model files), so the UI runs them on worker threads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from engine.models import all_entries, verify

SAMPLE_RATE = 48000  # what PulseAudio's null sink and most devices run natively
HEARD_DBFS = -50.0  # a recording louder than this counts as "the microphone hears something"

LevelCallback = Callable[[float], None]  # a level in dBFS, called from the recording thread


@dataclass(frozen=True)
class CheckResult:
    """A check's verdict and a sentence for the user (with the fix when it failed)."""

    ok: bool
    message: str
    level_dbfs: float | None = None  # microphone checks only


def _capital(name: str | int) -> str:
    text = str(name)
    return text[:1].upper() + text[1:]


def rms_dbfs(samples: np.ndarray) -> float:
    """RMS level of float samples in dBFS (-inf for silence)."""
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if samples.size else 0.0
    return 20 * math.log10(rms) if rms > 0 else float("-inf")


class DeviceChecks(Protocol):
    """What the wizard asks; the system implementation is below, others can stand in for other platforms."""

    def check_microphone(self, device: str | int | None, seconds: float = 1.0,
                         on_level: LevelCallback | None = None) -> CheckResult:
        """Record briefly and report the level (and each tenth of a second's level to `on_level` meanwhile)."""

    def preview_voice(self, voice: str, device: str | int | None, text: str) -> CheckResult:
        """Say `text` in `voice` ("piper:<model id>" or "espeak:<voice name>") on the output `device`."""

    def play_test_tone(self, device: str | int | None, hz: float = 440.0, seconds: float = 0.6) -> CheckResult:
        """Play a short tone."""

    def check_camera(self, device: str | int) -> CheckResult:
        """Open the camera and read one frame."""

    def check_models(self) -> CheckResult:
        """Check that the default models are installed and complete."""


class SystemDeviceChecks:
    """Checks against the real devices through PortAudio, OpenCV and the model registry."""

    def check_microphone(self, device: str | int | None, seconds: float = 1.0,
                         on_level: LevelCallback | None = None) -> CheckResult:
        """Record `seconds` from `device` (None = default) and report its RMS level, live to `on_level` too."""
        name = device if device is not None else "the default input"
        try:
            import sounddevice

            wanted, blocks = int(seconds * SAMPLE_RATE), []
            # an explicit stream, not sounddevice.rec(): its one global stream would stop a tone playing meanwhile
            with sounddevice.InputStream(samplerate=SAMPLE_RATE, channels=1, dtype="float32", device=device) as stream:
                while sum(len(b) for b in blocks) < wanted:
                    data, _overflowed = stream.read(min(SAMPLE_RATE // 10, wanted - sum(len(b) for b in blocks)))
                    blocks.append(data.copy())
                    if on_level is not None:
                        on_level(rms_dbfs(data))
            audio = np.concatenate(blocks)
        except Exception as exc:
            return CheckResult(False, f"Could not record from {name}: {exc}. Pick another input in Settings → Audio.")
        level = rms_dbfs(audio)
        if level < HEARD_DBFS:
            return CheckResult(False, f"{_capital(name)} records only silence ({level:.0f} dBFS). Check that it is not "
                               "muted.", level)
        return CheckResult(True, f"{_capital(name)} hears you ({level:.0f} dBFS).", level)

    def play_test_tone(self, device: str | int | None, hz: float = 440.0, seconds: float = 0.6) -> CheckResult:
        """Play a quiet sine tone on `device` (None = default)."""
        name = device if device is not None else "the default output"
        try:
            import sounddevice

            t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
            tone = (0.2 * np.sin(2 * np.pi * hz * t)).astype(np.float32)
            with sounddevice.OutputStream(samplerate=SAMPLE_RATE, channels=1, dtype="float32", device=device) as stream:
                stream.write(tone.reshape(-1, 1))
        except Exception as exc:
            return CheckResult(False, f"Could not play on {name}: {exc}. Pick another output in Settings → Audio.")
        return CheckResult(True, f"Played a {hz:.0f} Hz tone on {name}. Did you hear it?")

    def preview_voice(self, voice: str, device: str | int | None, text: str) -> CheckResult:
        """Synthesize `text` with the voice and play it; the failure names the voice or the device and the fix."""
        engine, _, name = voice.partition(":")
        try:
            from engine.tts.synth import EspeakSynthesizer, PiperSynthesizer

            if engine == "piper":
                from engine.models import resolve

                clause = PiperSynthesizer(resolve(name, "tts")).synthesize(text)
            else:
                clause = EspeakSynthesizer(name).synthesize(text)
        except Exception as exc:
            return CheckResult(False, f"The voice {name} could not speak: {exc}. Choose another voice.")
        where = device if device is not None else "the default output"
        try:
            import sounddevice

            with sounddevice.OutputStream(samplerate=clause.sample_rate, channels=1, dtype="float32",
                                          device=device) as stream:
                stream.write(clause.audio.astype(np.float32).reshape(-1, 1))
        except Exception as exc:
            return CheckResult(False, f"Could not play on {where}: {exc}. Pick another output on the Speaker page.")
        return CheckResult(True, f"{name} said: “{clause.text}” on {where}.")

    def check_camera(self, device: str | int) -> CheckResult:
        """Open `device` (index, file or URL) with OpenCV and read one frame."""
        from engine.vision._cv import cv2

        capture = cv2.VideoCapture(device)
        try:
            if not capture.isOpened():
                return CheckResult(False, f"Camera {device!r} could not be opened. Connect one or choose another in Settings → Camera.")
            ok, frame = capture.read()
            if not ok or frame is None:
                return CheckResult(False, f"Camera {device!r} opened but gave no picture. Is another app using it?")
            height, width = frame.shape[:2]
            return CheckResult(True, f"Camera {device!r} works ({width}×{height}).")
        finally:
            capture.release()

    def check_models(self) -> CheckResult:
        """Presence and size of every default model's files (no hashing, so it is quick)."""
        problems, ready = [], []
        for entry in all_entries():
            if not entry.default:
                continue
            issues = verify(entry, full=False)
            (problems.extend(issues) if issues else ready.append(entry.id))
        if problems:
            return CheckResult(False, "Missing models: " + "; ".join(problems) + ". Run `venus models install`.")
        return CheckResult(True, "Models ready: " + ", ".join(ready) + ".")
