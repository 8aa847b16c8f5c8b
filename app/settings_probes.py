"""What the settings dialog asks of this machine: dropdowns filled from worker threads, and the device tests.

Devices, voices and installed models are looked up on worker threads and arrive as signals; the Audio devices,
Voice and Camera pages try the chosen device (a live level meter, a test sound, a microphone test, a voice
preview, a camera test) without blocking the UI thread. SettingsProbes is mixed into SettingsDialog, which owns
the signals and the forms these methods use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton

from app.device_checks import CheckResult, SystemDeviceChecks
from app.settings_audio import (
    Devices,
    LevelMonitor,
    device_choices,
    espeak_voices,
    list_devices,
    piper_voices,
    preview_voice,
    run_in_thread,
    voice_choices,
)
from app.settings_catalog import CatalogPanel
from app.settings_form import SectionEditors, fill_choices, select_value
from app.settings_models import model_choices
from app.settings_pages import describe_tools_offline
from app.widgets import LevelMeter
from engine.settings import Settings


def voice_key(engine: str, voice: str) -> str:
    """The voice dropdown's value: the engine and the voice in one string."""
    return f"{engine}:{voice}"


class SettingsProbes:
    """The settings dialog's lookups and device tests; the dialog supplies the attributes annotated below."""

    forms: dict[str, SectionEditors]
    original: Settings
    error: QLabel
    catalog: CatalogPanel
    devices_found: SignalInstance
    choices_found: SignalInstance
    check_finished: SignalInstance
    level_heard: SignalInstance
    tools_found: SignalInstance

    def _build_probes(self, settings: Settings) -> None:
        """The status lines, meter and test buttons, wired to the signals that bring worker-thread results back."""
        self.checks = SystemDeviceChecks()
        self.monitor = LevelMonitor(self.level_heard.emit, lambda text: self.check_finished.emit(
            "meter", CheckResult(False, text)))
        self.device_status = QLabel("Looking for audio devices…")
        self.device_status.setWordWrap(True)
        self.device_status.setAccessibleName("Audio device status")
        self.mic_level = LevelMeter(name="Live level of the chosen microphone")
        self.mic_button = QPushButton("Test microphone")
        self.mic_button.setAccessibleName("Record one second from the microphone and show its level")
        self.mic_button.clicked.connect(self.test_microphone)
        self.tone_button = QPushButton("Play test sound")
        self.tone_button.setAccessibleName("Play a test sound on the speaker")
        self.tone_button.clicked.connect(self.play_test_tone)
        self.preview_button = QPushButton("Preview voice")
        self.preview_button.setAccessibleName("Speak a sentence in the chosen voice")
        self.preview_button.clicked.connect(lambda: self.preview_voice())  # not `checked` as `play`
        self.voice_status = QLabel()
        self.voice_status.setWordWrap(True)
        self.voice_status.setAccessibleName("Voice preview result")
        self.camera_button = QPushButton("Test camera")
        self.camera_button.setAccessibleName("Open the camera and read one picture")
        self.camera_button.clicked.connect(self.test_camera)
        self.camera_status = QLabel()
        self.camera_status.setWordWrap(True)
        self.camera_status.setAccessibleName("Camera test result")
        self.devices_found.connect(self._fill_devices)
        self.choices_found.connect(self._fill_choices)
        self.check_finished.connect(self._show_check)
        self.level_heard.connect(self.mic_level.set_level)
        self.input_box.currentIndexChanged.connect(self._restart_meter)
        backend = self.forms["llm"].editors["backend"]
        backend.currentIndexChanged.connect(self._follow_backend)
        self._follow_backend()
        voice = self.forms["tts"].editors["voice"]
        fill_choices(voice, [(settings.tts.voice, voice_key(settings.tts.engine, settings.tts.voice))],
                     keep=voice_key(settings.tts.engine, settings.tts.voice))

    # ---- choices filled from the system ------------------------------------------------------------------------

    @property
    def input_box(self) -> QComboBox:
        """The microphone dropdown."""
        return self.forms["audio"].editors["input_device"]

    @property
    def model_field(self) -> QComboBox:
        """The llm.model dropdown."""
        return self.forms["llm"].editors["model"]

    def _start_lookups(self, settings: Settings, tools: list[dict[str, Any]] | None) -> None:
        run_in_thread("venus-audio-probe", list_devices, self.devices_found.emit)
        run_in_thread("venus-voice-list", lambda: voice_choices(piper_voices(), espeak_voices()),
                      lambda items: self.choices_found.emit("tts.voice", items, ""))
        for key, kind in (("llm.model", "llm"), ("asr.model", "asr"), ("camera.face_model", "vision")):
            run_in_thread(f"venus-{kind}-list", lambda kind=kind: model_choices(kind),
                          lambda found, key=key: self.choices_found.emit(key, *found))
        self.catalog.load(settings.conversation.language)
        if tools is None:
            def list_tools() -> tuple[list[dict[str, Any]], str]:
                try:
                    return describe_tools_offline(settings.harness), ""
                except Exception as exc:  # the list is a convenience: say why it is missing, keep the page usable
                    return [], f"The tools could not be listed: {exc}"
            run_in_thread("venus-tool-list", list_tools, lambda found: self.tools_found.emit(*found))

    def _fill_choices(self, key: str, items: list, problem: str) -> None:
        section, name = key.split(".", 1)
        box: QComboBox = self.forms[section].editors[name]
        fill_choices(box, items)
        if key == "tts.voice":
            espeak = [(label, value.split(":", 1)[1]) for label, value in items if value.startswith("espeak:")]
            fill_choices(self.forms["tts"].editors["espeak_voice"], espeak)
        if problem:
            self.error.setText(problem)

    def _follow_backend(self) -> None:
        """The server fields matter only when the model runs on a server, the device only with PyTorch."""
        backend = self.forms["llm"].editors["backend"].currentData()
        for name in ("remote_url", "remote_model", "remote_timeout_s"):
            self.forms["llm"].editors[name].setEnabled(backend == "remote")
        self.forms["llm"].editors["device"].setEnabled(backend == "torch")

    def _fill_devices(self, devices: Devices) -> None:
        fill_choices(self.input_box, device_choices(devices.inputs))
        fill_choices(self.forms["audio"].editors["output_device"], device_choices(devices.outputs))
        cameras = [("First camera (0)", 0), ("Second camera (1)", 1), ("Third camera (2)", 2)]
        fill_choices(self.forms["camera"].editors["device"], cameras)
        self.device_status.setText(devices.problem or f"{len(devices.inputs)} microphone(s) and {len(devices.outputs)} "
                                   "speaker(s) found.")
        self._restart_meter()

    def _model_added(self, model_id: str, kind: str = "llm") -> None:
        items, _ = model_choices(kind)
        fill_choices(self.forms[kind].editors["model"], items, keep=model_id)

    def _catalog_installed(self, model_id: str) -> None:
        """A model just got is offered in its dropdown too; the selection stays until the user picks it."""
        kind = self.catalog.rows[model_id].advice.entry.kind
        if kind in ("llm", "asr"):
            fill_choices(self.forms[kind].editors["model"], model_choices(kind)[0])

    # ---- trying things out -------------------------------------------------------------------------------------

    def _restart_meter(self) -> None:
        """The live meter listens while the Audio devices page is shown, on the microphone chosen there."""
        wanted = self.isVisible() and self.current_page() == "Audio devices"
        device = self.forms["audio"].values()["input_device"]
        if not wanted:
            self.monitor.stop()
        elif not self.monitor.running or self.monitor.device != device:
            self.monitor.start(device)

    def _run_check(self, which: str, check: Callable[[], CheckResult]) -> threading.Thread:
        return run_in_thread(f"venus-{which}-check", check, lambda result: self.check_finished.emit(which, result))

    def _show_check(self, which: str, result: CheckResult) -> None:
        label = {"camera": self.camera_status, "voice": self.voice_status}.get(which, self.device_status)
        label.setText(("✔ " if result.ok else "✘ ") + result.message)
        if result.level_dbfs is not None:
            self.mic_level.set_level(result.level_dbfs)
        if which == "voice":
            self.preview_button.setEnabled(True)

    def play_test_tone(self) -> threading.Thread:
        """Play the test sound on the chosen speaker, on a worker thread."""
        values = self.forms["audio"].values()
        return self._run_check("tone", lambda: self.checks.play_test_tone(values["output_device"], values["test_tone_hz"]))

    def test_microphone(self) -> threading.Thread:
        """Record a second from the chosen microphone and show its level, on a worker thread."""
        self.monitor.stop()  # one reader at a time: some devices open only once
        device = self.forms["audio"].values()["input_device"]

        def check() -> CheckResult:
            return self.checks.check_microphone(device)
        return self._run_check("microphone", check)

    def preview_voice(self, play: bool = True) -> threading.Thread:
        """Speak a sentence in the chosen voice, speed and volume on the chosen speaker, on a worker thread."""
        tts = self._tts_values()
        device = self.forms["audio"].values()["output_device"]
        self.preview_button.setEnabled(False)
        self.voice_status.setText("Speaking…")
        return self._run_check("voice", lambda: preview_voice(tts, device, play=play))

    def select_voice(self, engine: str, voice: str) -> None:
        """Choose a voice (as picking it in the dropdown would)."""
        select_value(self.forms["tts"].editors["voice"], voice_key(engine, voice))

    def _tts_values(self) -> dict[str, Any]:
        values = self.forms["tts"].values()
        engine, _, voice = str(values["voice"]).partition(":")
        return {**self.original.tts.model_dump(), **values, "engine": engine, "voice": voice}

    def test_camera(self) -> threading.Thread:
        """Open the chosen camera (index, file or URL) and read a frame, on a worker thread."""
        device = self.forms["camera"].values()["device"]
        device = Settings().camera.device if device is None else device
        return self._run_check("camera", lambda: self.checks.check_camera(device))
