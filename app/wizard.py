"""The first-run wizard: microphone, speaker, camera and model checks, then the app opens.

Every check runs on a worker thread; a failed check explains the fix and never blocks finishing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget, QWizard, QWizardPage

from app.device_checks import CheckResult, DeviceChecks, SystemDeviceChecks
from app.widgets import LevelMeter
from engine.settings import Settings, save_settings


class CheckPage(QWizardPage):
    """A wizard page with one check: a button that runs it off the UI thread and a line with its verdict."""

    finished = Signal(object)  # CheckResult, emitted from the worker thread

    def __init__(self, title: str, explanation: str, button_text: str, check: Callable[[], CheckResult],
                 auto_run: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTitle(title)
        self.check = check
        self.auto_run = auto_run
        self.result: CheckResult | None = None
        self.button = QPushButton(button_text)
        self.button.setAccessibleName(button_text)
        self.button.clicked.connect(self.run_check)
        self.verdict = QLabel("Not checked yet.")
        self.verdict.setWordWrap(True)
        self.verdict.setAccessibleName(f"{title} result")
        self.meter = LevelMeter(name=f"{title} level")
        self.meter.setVisible(False)
        layout = QVBoxLayout(self)
        text = QLabel(explanation)
        text.setWordWrap(True)
        layout.addWidget(text)
        layout.addWidget(self.button)
        layout.addWidget(self.meter)
        layout.addWidget(self.verdict)
        layout.addStretch(1)
        self.finished.connect(self._show)

    def initializePage(self) -> None:
        """Run at once when the page opens, for checks that need no action from the user."""
        if self.auto_run and self.result is None:
            self.run_check()

    def run_check(self) -> threading.Thread:
        """Start the check on a worker thread."""
        self.button.setEnabled(False)
        self.verdict.setText("Checking…")
        thread = threading.Thread(target=lambda: self.finished.emit(self.check()), name="venus-wizard-check", daemon=True)
        thread.start()
        return thread

    def _show(self, result: CheckResult) -> None:
        self.result = result
        self.button.setEnabled(True)
        self.verdict.setText(("✔ " if result.ok else "✘ ") + result.message)
        if result.level_dbfs is not None:
            self.meter.setVisible(True)
            self.meter.set_level(result.level_dbfs)


class FirstRunWizard(QWizard):
    """Walks a new user through the device and model checks; finishing marks first run done and saves."""

    def __init__(self, settings: Settings, checks: DeviceChecks | None = None, settings_path: Path | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Welcome to {settings.conversation.assistant_name}")
        self.setAccessibleName("First-run setup")
        self.settings = settings
        self.settings_path = settings_path
        checks = checks or SystemDeviceChecks()
        audio, camera = settings.audio, settings.camera
        welcome = QWizardPage()
        welcome.setTitle("Welcome")
        intro = QLabel(f"{settings.conversation.assistant_name} runs on this computer: your voice, camera and "
                       "conversations stay here. A few quick checks make sure it can hear, speak and see.")
        intro.setWordWrap(True)
        QVBoxLayout(welcome).addWidget(intro)
        self.microphone = CheckPage("Microphone", "Press the button and say something for a second.",
                                    "Test microphone", lambda: checks.check_microphone(audio.input_device))
        self.speaker = CheckPage("Speaker", "Press the button: you should hear a short tone.", "Play test tone",
                                 lambda: checks.play_test_tone(audio.output_device, audio.test_tone_hz))
        self.camera = CheckPage("Camera", "Optional: the camera stays off until you turn it on in the main window.",
                                "Test camera", lambda: checks.check_camera(camera.device))
        self.models = CheckPage("Models", "Checking that the speech and language models are installed.",
                                "Check again", checks.check_models, auto_run=True)
        for page in (welcome, self.microphone, self.speaker, self.camera, self.models):
            self.addPage(page)

    def check_pages(self) -> list[CheckPage]:
        """The pages with checks, in order."""
        return [self.microphone, self.speaker, self.camera, self.models]

    def accept(self) -> None:
        """Mark first run done, save, close."""
        ui = self.settings.ui.model_copy(update={"first_run_done": True})
        self.settings = self.settings.model_copy(update={"ui": ui})
        save_settings(self.settings, self.settings_path)
        super().accept()
