"""The first-run wizard: choose and test the microphone and speaker, the voice, the language, the model for this
machine and the camera, read what tools may do, then save the choices and open the app.

Every check runs on a worker thread; a failed check explains the fix and never blocks finishing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget, QWizard, QWizardPage

from app import wizard_choices
from app.device_checks import DeviceChecks, SystemDeviceChecks
from app.wizard_choices import LANGUAGES, Choice, Recommendation, tools_summary
from app.wizard_pages import (
    CameraPage,
    CheckPage,
    DevicePage,
    LanguagePage,
    ModelPage,
    SummaryPage,
    ToolsPage,
    VoicePage,
)
from engine.settings import LLMSettings, Settings, save_settings

__all__ = ["CheckPage", "FirstRunWizard", "WizardSources"]

PREVIEW_TEXT = "Hello, I'm {name}. This is how I will sound."


class WizardSources:
    """Where the wizard's lists come from; the defaults read this machine, a test may hand in others."""

    def __init__(self, *, inputs: Callable[[], list[Choice]] | None = None,
                 outputs: Callable[[], list[Choice]] | None = None, voices: Callable[[], list[Choice]] | None = None,
                 languages: Callable[[str], list[Choice]] | None = None,
                 recommend: Callable[[], Recommendation] | None = None,
                 tools: Callable[[Settings], list[dict]] | None = None) -> None:
        self.inputs = inputs or (lambda: wizard_choices.audio_devices("input"))
        self.outputs = outputs or (lambda: wizard_choices.audio_devices("output"))
        self.voices = voices or wizard_choices.voices
        self.languages = languages or wizard_choices.languages
        self.recommend = recommend or wizard_choices.recommend_model
        self.tools = tools or (lambda settings: wizard_choices.describe_tools(settings.harness))


def _voice_value(settings: Settings) -> str:
    tts = settings.tts
    if tts.engine == "piper":
        return f"piper:{tts.voice}"
    return f"espeak:{tts.espeak_voice if tts.voice.startswith('piper-') else tts.voice}"


class FirstRunWizard(QWizard):
    """Walks a new user through the choices and checks; Finish saves them and marks first run done."""

    def __init__(self, settings: Settings, checks: DeviceChecks | None = None, settings_path: Path | None = None,
                 parent: QWidget | None = None, sources: WizardSources | None = None) -> None:
        super().__init__(parent)
        name = settings.conversation.assistant_name
        self.setWindowTitle(f"Welcome to {name}")
        self.setAccessibleName("First-run setup")
        self.setWizardStyle(QWizard.WizardStyle.ModernStyle)
        self.setMinimumSize(QSize(640, 480))
        self.settings = settings
        self.settings_path = settings_path
        checks = checks or SystemDeviceChecks()
        sources = sources or WizardSources()
        audio, camera = settings.audio, settings.camera
        self.welcome = QWizardPage()
        self.welcome.setTitle(f"Welcome to {name}")
        intro = QLabel(f"{name} runs on this computer: your voice, camera and conversations stay here. Choose your "
                       "microphone, speaker, voice, language and model; each can be tested on its page, and every "
                       "choice can be changed later in Settings.")
        intro.setWordWrap(True)
        QVBoxLayout(self.welcome).addWidget(intro)
        self.microphone = DevicePage(
            "Microphone", "Choose a microphone, press the button and say something for a second: the bar shows what "
            "Venus hears.", "Test microphone", sources.inputs(), audio.input_device,
            lambda device, on_level=None: checks.check_microphone(device, on_level=on_level), live_level=True)
        self.speaker = DevicePage(
            "Speaker", "Choose a speaker and press the button: you should hear a short tone.", "Play test sound",
            sources.outputs(), audio.output_device, lambda device: checks.play_test_tone(device, audio.test_tone_hz))
        text = PREVIEW_TEXT.format(name=name)
        self.voice = VoicePage(sources.voices(), _voice_value(settings),
                               lambda voice, device: checks.preview_voice(voice, device, text), self.speaker.device)
        self.language = LanguagePage(sources.languages(settings.asr.model), settings.asr.language)
        default_model = LLMSettings.model_fields["model"].default
        self.models = ModelPage(sources.recommend, checks.check_models,
                                keep=settings.llm.model if settings.llm.model != default_model else None,
                                language=self.language.language)
        self.camera = CameraPage(camera.enabled, camera.device, checks.check_camera)
        self.tools = ToolsPage(lambda: sources.tools(self.settings), tools_summary)
        self.summary = SummaryPage(self.describe_choices)
        for page in (self.welcome, self.microphone, self.speaker, self.voice, self.language, self.models,
                     self.camera, self.tools, self.summary):
            self.addPage(page)

    def check_pages(self) -> list[CheckPage]:
        """The pages with checks, in order."""
        return [self.microphone, self.speaker, self.voice, self.models, self.camera]

    def chosen_settings(self) -> Settings:
        """The settings with every choice on the pages applied (first run not yet marked done)."""
        s = self.settings
        engine, _, voice = self.voice.voice().partition(":")
        tts = {"engine": engine, "voice": voice} if engine == "piper" else {"engine": "espeak", "voice": voice,
                                                                             "espeak_voice": voice}
        language = self.language.language()
        updates = {
            "audio": s.audio.model_copy(update={"input_device": self.microphone.device(),
                                                "output_device": self.speaker.device()}),
            "tts": s.tts.model_copy(update=tts),
            "asr": s.asr.model_copy(update={"language": language}),
            "conversation": s.conversation.model_copy(update={"language": language}),
            "camera": s.camera.model_copy(update={"enabled": self.camera.enabled_box.isChecked(),
                                                  "device": self.camera.device()}),
        }
        if self.models.model() is not None:
            updates["llm"] = s.llm.model_copy(update={"model": self.models.model()})
        # validated as a whole, so a bad choice fails here with the field named, not when the engine starts
        return Settings.model_validate({**s.model_dump(), **{k: v.model_dump() for k, v in updates.items()}})

    def describe_choices(self) -> list[str]:
        """The choices in words, for the last page."""
        s = self.chosen_settings()
        rows = self.tools.rows or []
        asking = [r["name"].replace("_", " ") for r in rows if r["level"] == "ask"]
        return [
            f"Microphone: {self.microphone.device_box.currentText()}",
            f"Speaker: {self.speaker.device_box.currentText()}",
            f"Voice: {self.voice.voice_box.currentText()}",
            f"Language: {LANGUAGES.get(s.asr.language, s.asr.language)}",
            f"Language model: {s.llm.model}",
            f"Camera: {'on, ' + repr(s.camera.device) if s.camera.enabled else 'off'}",
            "Tools: " + (f"{', '.join(asking)} ask first; " if asking else "") + "the shell is off",
        ]

    def done(self, result: int) -> None:
        """Finish or cancel stops a download still running on the model page (its partial file stays to resume)."""
        self.models.catalog.getter.cancel_all()
        super().done(result)

    def accept(self) -> None:
        """Save the choices with first run marked done, then close."""
        settings = self.chosen_settings()
        self.settings = settings.model_copy(update={"ui": settings.ui.model_copy(update={"first_run_done": True})})
        save_settings(self.settings, self.settings_path)
        super().accept()

