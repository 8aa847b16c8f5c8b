"""The settings dialog: every section of engine.settings.Settings, validated by pydantic before saving.

Secrets (API keys, MCP secret env values) go to the OS keyring; the file gets only `keyring:` references.
Secrets found written in clear are named at the bottom, and "Move to keyring" moves them and rewrites the file.
Device probing and test tones run on worker threads, never on the UI thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.device_checks import CheckResult, SystemDeviceChecks
from app.secrets import PlaintextSecret, api_key_name, delete_secret, set_secret
from app.settings_form import SectionForm
from app.settings_models import ModelsPanel
from app.settings_pages import ApiKeysPage, McpPage, ToolsPage
from app.widgets import LevelMeter
from engine.errors import SecretError
from engine.secrets import plaintext_warning, with_keyring_refs
from engine.settings import Settings, save_settings

_FORM_SECTIONS = {  # settings section -> tab title
    "llm": "Models", "audio": "Audio", "vad": "Voice activity", "asr": "Speech recognition", "tts": "Voice",
    "camera": "Camera", "conversation": "Conversation", "harness": "Tools", "ui": "Interface",
}


def vision_mode(camera: Any) -> str:
    """What Venus can do with the camera under these settings (shown on the Camera page)."""
    if camera.multimodal_model:
        return (f"a multimodal model ({Path(camera.multimodal_model).name}) answers questions about what it sees, "
                "plus presence and text reading")
    if getattr(camera, "ocr_enabled", True):
        return "presence, facing the screen and text reading (OCR); no multimodal model, so no object recognition"
    return "presence and facing the screen only"


def describe_validation(err: ValidationError) -> list[str]:
    """One 'section.field: message' line per pydantic error."""
    return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()]


class SettingsDialog(QDialog):
    """Edits a copy of the settings; `settings_saved` fires after a successful save."""

    settings_saved = Signal(object)  # the saved Settings
    devices_found = Signal(list, str)  # (device names, problem) from the probe thread
    check_finished = Signal(str, object)  # (which check, CheckResult) from a worker thread

    def __init__(self, settings: Settings, parent: QWidget | None = None, settings_path: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setAccessibleName("Settings")
        self.original = settings
        self.settings_path = settings_path
        self.saved: Settings | None = None
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Settings sections")
        self.forms: dict[str, SectionForm] = {}
        pages: dict[str, QVBoxLayout] = {}
        for section, title in _FORM_SECTIONS.items():
            page = QWidget()
            layout = QVBoxLayout(page)
            form = SectionForm(getattr(settings, section), title)
            layout.addWidget(form)
            self.forms[section] = form
            pages[section] = layout
            self.tabs.addTab(page, title)
        self._build_models_extras(pages["llm"])
        self.checks = SystemDeviceChecks()
        self._build_audio_extras(pages["audio"])
        self._build_camera_extras(pages["camera"])
        self.tools = ToolsPage(dict(settings.harness.permissions), list(settings.harness.allowed_folders))
        pages["harness"].addWidget(self.tools, 1)
        self.mcp = McpPage(dict(settings.harness.mcp_servers))
        self.mcp.secrets_moved.connect(self._save_moved_secrets)
        self.tabs.addTab(self.mcp, "MCP servers")
        self.api_keys = ApiKeysPage()
        self.tabs.addTab(self.api_keys, "API keys")
        self.error = QLabel()
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c62828")
        self.error.setAccessibleName("Settings problems")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.resize(720, 560)
        if found := self.mcp.plaintext_secrets():
            self.error.setText(f"⚠ {plaintext_warning(found)}: MCP servers → Move to keyring.")

    # ---- models ----------------------------------------------------------------------------------------------

    def _build_models_extras(self, layout: QVBoxLayout) -> None:
        self.models = ModelsPanel()
        self.models.model_chosen.connect(self.model_field.setText)
        layout.insertWidget(0, self.models)
        layout.addStretch(1)

    @property
    def model_field(self) -> QLineEdit:
        """The llm.model editor."""
        return self.forms["llm"].editors["model"]

    # ---- audio -----------------------------------------------------------------------------------------------

    def _build_audio_extras(self, layout: QVBoxLayout) -> None:
        self.device_status = QLabel("Looking for audio devices…")
        self.device_status.setAccessibleName("Audio device status")
        self.tone_button = QPushButton("Play test tone")
        self.tone_button.setAccessibleName("Play a test tone on the output device")
        self.tone_button.clicked.connect(self.play_test_tone)
        self.mic_button = QPushButton("Test microphone")
        self.mic_button.setAccessibleName("Record one second from the input device and show its level")
        self.mic_button.clicked.connect(self.test_microphone)
        self.mic_level = LevelMeter(name="Input level of the microphone test")
        self.devices_found.connect(self._fill_devices)
        self.check_finished.connect(self._show_check)
        row = QHBoxLayout()
        row.addWidget(self.tone_button)
        row.addWidget(self.mic_button)
        row.addWidget(self.mic_level, 1)
        layout.addLayout(row)
        layout.addWidget(self.device_status)
        layout.addStretch(1)
        threading.Thread(target=self._probe_devices, name="venus-audio-probe", daemon=True).start()

    def _probe_devices(self) -> None:
        try:
            import sounddevice

            names = [d["name"] for d in sounddevice.query_devices()]
            self.devices_found.emit(names, "" if names else "no audio devices found")
        except Exception as exc:  # PortAudio missing or broken: say so, keep the dialog usable
            self.devices_found.emit([], f"audio devices unavailable: {exc}")

    def _fill_devices(self, names: list[str], problem: str) -> None:
        for field in ("input_device", "output_device"):
            box: QComboBox = self.forms["audio"].editors[field]
            current = box.currentText()
            box.clear()
            box.addItems(["", *names])
            box.setCurrentText(current)
        self.device_status.setText(problem or f"{len(names)} audio devices found")

    def _run_check(self, which: str, check: Callable[[], CheckResult]) -> threading.Thread:
        thread = threading.Thread(target=lambda: self.check_finished.emit(which, check()), name=f"venus-{which}-check",
                                  daemon=True)
        thread.start()
        return thread

    def _show_check(self, which: str, result: CheckResult) -> None:
        label = self.camera_status if which == "camera" else self.device_status
        label.setText(("✔ " if result.ok else "✘ ") + result.message)
        if result.level_dbfs is not None:
            self.mic_level.set_level(result.level_dbfs)

    def play_test_tone(self) -> threading.Thread:
        """Play the test tone on the chosen output device, on a worker thread."""
        values = self.forms["audio"].values()
        return self._run_check("tone", lambda: self.checks.play_test_tone(values["output_device"], values["test_tone_hz"]))

    def test_microphone(self) -> threading.Thread:
        """Record a second from the chosen input device and show its level, on a worker thread."""
        device = self.forms["audio"].values()["input_device"]
        return self._run_check("microphone", lambda: self.checks.check_microphone(device))

    # ---- camera ----------------------------------------------------------------------------------------------

    def _build_camera_extras(self, layout: QVBoxLayout) -> None:
        self.camera_button = QPushButton("Test camera")
        self.camera_button.setAccessibleName("Open the camera and read one picture")
        self.camera_button.clicked.connect(self.test_camera)
        self.camera_status = QLabel()
        self.camera_status.setWordWrap(True)
        self.camera_status.setAccessibleName("Camera test result")
        row = QHBoxLayout()
        row.addWidget(self.camera_button)
        row.addWidget(self.camera_status, 1)
        layout.addLayout(row)
        self.vision_mode = QLabel(f"Vision in use: {vision_mode(self.original.camera)}")
        self.vision_mode.setWordWrap(True)
        self.vision_mode.setAccessibleName("Which kind of vision is active")
        layout.addWidget(self.vision_mode)
        layout.addStretch(1)

    def test_camera(self) -> threading.Thread:
        """Open the chosen camera (index, file or URL) and read a frame, on a worker thread."""
        device = self.forms["camera"].values()["device"]
        device = Settings().camera.device if device is None else device
        return self._run_check("camera", lambda: self.checks.check_camera(device))

    # ---- save ------------------------------------------------------------------------------------------------

    def collect(self) -> tuple[dict[str, Any], list[str]]:
        """The edited settings as raw data, plus problems found before pydantic sees them."""
        raw = self.original.model_dump()
        for section, form in self.forms.items():
            raw[section].update(form.values())
        permissions, folders, problems = self.tools.values()
        raw["harness"]["permissions"] = permissions
        raw["harness"]["allowed_folders"] = folders
        try:
            raw["harness"]["mcp_servers"] = self.mcp.parsed()
        except ValueError as exc:
            problems.append(str(exc))
        return raw, problems

    def validated(self) -> Settings | None:
        """The edited settings if valid; otherwise None, with every problem shown and its tab selected."""
        raw, problems = self.collect()
        settings = None
        try:
            settings = Settings.model_validate(raw)
        except ValidationError as err:
            problems = describe_validation(err) + problems
        if problems:
            self.error.setText("Not saved: " + "; ".join(problems))
            section = problems[0].split(".", 1)[0].split(":")[0]
            titles = {**_FORM_SECTIONS, "harness": "MCP servers" if "mcp_servers" in problems[0] else "Tools"}
            for i in range(self.tabs.count()):
                if self.tabs.tabText(i) == titles.get(section):
                    self.tabs.setCurrentIndex(i)
            return None
        return settings

    def save(self) -> bool:
        """Validate, store secrets in the keyring, then write the file; nothing is written if any step fails."""
        settings = self.validated()
        if settings is None:
            return False
        try:
            for provider, key in self.api_keys.entered().items():
                set_secret(api_key_name(provider), key)
            for provider in self.api_keys.forget - set(self.api_keys.entered()):
                delete_secret(api_key_name(provider))
            for name, value in self.mcp.pending_secrets.items():
                set_secret(name, value)
        except (SecretError, ValueError) as exc:
            self.error.setText(f"Not saved: {exc}")
            return False
        self.mcp.pending_secrets.clear()
        save_settings(settings, self.settings_path)
        self.saved = settings
        self.error.clear()
        self.settings_saved.emit(settings)
        self.accept()
        return True

    def _save_moved_secrets(self, moved: list[PlaintextSecret]) -> None:
        """Write the file at once with the moved secrets as references; every other edit stays unsaved."""
        on_disk = self.original.model_copy(deep=True)
        on_disk.harness.mcp_servers = with_keyring_refs(on_disk.harness.mcp_servers, moved)
        save_settings(on_disk, self.settings_path)
        self.original = on_disk
        self.error.clear()
        self.settings_saved.emit(on_disk)  # the window must not keep (and later save) the secrets in clear
