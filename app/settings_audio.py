"""What the Voice and Audio pages offer to choose from, and how they try a choice out.

Devices come from PortAudio, voices from the model registry (Piper) and `espeak-ng --voices`; the live
level meter reads the chosen microphone on PortAudio's thread, and a voice preview synthesizes a sentence
and plays it on the chosen speaker. Everything that blocks runs on worker threads, never the UI thread.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.device_checks import SAMPLE_RATE, CheckResult, rms_dbfs

PREVIEW_SENTENCE = "Hello! This is how I sound. Shall we get started?"
METER_BLOCK_S = 0.05  # the live meter updates twenty times a second
SYSTEM_DEFAULT = "System default"


@dataclass(frozen=True)
class Devices:
    """Input and output device names found by PortAudio, or why none could be listed."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    problem: str = ""


def list_devices() -> Devices:
    """The sound cards PortAudio lists (not re-scanned: that would cut the running session's streams)."""
    try:
        import sounddevice

        devices = sounddevice.query_devices()
    except Exception as exc:  # PortAudio missing or broken: say so, keep the dialog usable
        return Devices((), (), f"Audio devices unavailable: {exc}. Install PortAudio (libportaudio2).")
    inputs = tuple(dict.fromkeys(d["name"] for d in devices if d["max_input_channels"] > 0))
    outputs = tuple(dict.fromkeys(d["name"] for d in devices if d["max_output_channels"] > 0))
    problem = "" if inputs or outputs else "No audio devices found. Connect a microphone and speakers, or check PulseAudio."
    return Devices(inputs, outputs, problem)


def device_choices(names: tuple[str, ...]) -> list[tuple[str, Any]]:
    """A device dropdown's items: the system default first (stored as None), then each device by name."""
    return [(SYSTEM_DEFAULT, None), *((name, name) for name in names)]


class LevelMonitor:
    """Reads a microphone and reports its level (dBFS) about twenty times a second until stopped."""

    def __init__(self, on_level: Callable[[float], None], on_problem: Callable[[str], None]) -> None:
        self._on_level, self._on_problem = on_level, on_problem
        self._stream: Any = None
        self.device: str | int | None = None

    @property
    def running(self) -> bool:
        """True while the microphone is open."""
        return self._stream is not None

    def start(self, device: str | int | None) -> None:
        """Open `device` (None = system default); a device that cannot open is reported, not raised."""
        self.stop()
        self.device = device
        try:
            import sounddevice

            stream = sounddevice.InputStream(samplerate=SAMPLE_RATE, channels=1, dtype="float32", device=device,
                                             blocksize=int(SAMPLE_RATE * METER_BLOCK_S), callback=self._block)
            stream.start()
        except Exception as exc:
            name = SYSTEM_DEFAULT.lower() if device is None else device
            self._on_problem(f"Could not open the microphone {name}: {exc}. Pick another one.")
            return
        self._stream = stream

    def _block(self, data: np.ndarray, frames: int, time: Any, status: Any) -> None:
        self._on_level(rms_dbfs(data[:, 0]))

    def stop(self) -> None:
        """Close the microphone."""
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception:  # a device unplugged meanwhile: nothing left to close
                pass


def piper_voices() -> list[tuple[str, str, bool]]:
    """Piper voices the registry knows, as (id, title, installed)."""
    from engine.models import all_entries, verify

    return [(e.id, e.title, not verify(e, full=False)) for e in all_entries() if e.kind == "tts"]


def espeak_voices() -> list[tuple[str, str]]:
    """espeak-ng voices as (voice name to pass, "Language name"), or [] when espeak-ng is missing."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        return []
    try:
        listing = subprocess.run([binary, "--voices"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    voices = []
    for line in listing.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 4:
            voices.append((parts[1], parts[3].replace("_", " ")))
    return voices


def voice_choices(piper: list[tuple[str, str, bool]], espeak: list[tuple[str, str]]) -> list[tuple[str, Any]]:
    """The Voice dropdown: Piper voices first, then espeak-ng's; each item stores "engine:voice"."""
    items: list[tuple[str, Any]] = []
    for voice_id, title, installed in piper:
        items.append((f"{title} · Piper{'' if installed else ' · not installed'}", f"piper:{voice_id}"))
    items.extend((f"{language} ({name}) · espeak-ng", f"espeak:{name}") for name, language in espeak)
    return items


def preview_voice(tts: dict[str, Any], output_device: str | int | None, play: bool = True) -> CheckResult:
    """Synthesize a sentence with these voice settings and play it on `output_device` (None = default)."""
    from engine.audio.pipeline import make_synthesizer
    from engine.errors import VenusError
    from engine.settings import Settings

    try:
        settings = Settings.model_validate({"tts": tts})
        clip = make_synthesizer(settings).synthesize(PREVIEW_SENTENCE)
    except (VenusError, ValueError, OSError) as exc:
        return CheckResult(False, f"The voice could not speak: {exc}")
    seconds = len(clip.audio) / clip.sample_rate
    if not play:
        return CheckResult(True, f"Synthesized {seconds:.1f} s of speech.")
    name = SYSTEM_DEFAULT.lower() if output_device is None else output_device
    try:
        import sounddevice

        with sounddevice.OutputStream(samplerate=clip.sample_rate, channels=1, dtype="float32", device=output_device) as out:
            out.write(clip.audio.astype(np.float32).reshape(-1, 1))
    except Exception as exc:
        return CheckResult(False, f"Synthesized {seconds:.1f} s of speech but could not play it on {name}: {exc}")
    return CheckResult(True, f"Played {seconds:.1f} s of speech on {name}.")


def run_in_thread(name: str, work: Callable[[], Any], done: Callable[[Any], None]) -> threading.Thread:
    """Run `work` on a daemon thread and hand its result to `done` (which should emit a signal)."""

    def run() -> None:
        result = work()
        try:
            done(result)
        except RuntimeError:  # the dialog was closed (and its signals deleted) while the work ran
            pass

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
