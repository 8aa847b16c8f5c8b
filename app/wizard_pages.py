"""The pages of the first-run wizard: each shows one choice (or check), and runs anything slow off the UI thread.

A page reads its widgets on the UI thread, hands plain values to a worker thread, and gets the result back
through a queued signal; a failed check names the fix and never blocks finishing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.device_checks import CheckResult
from app.settings_catalog import CatalogPanel
from app.widgets import LevelMeter
from app.wizard_choices import Choice, Recommendation


class Background(QObject):
    """Runs a function on a daemon thread and emits its result (or the exception) on the UI thread."""

    done = Signal(object)

    def run(self, work: Callable[[], Any]) -> threading.Thread:
        """Start `work` on a worker thread; `done` carries what it returned or raised."""

        def call() -> None:
            try:
                result = work()
            except Exception as exc:  # shown on the page, never lost on a worker thread
                result = exc
            try:
                self.done.emit(result)
            except RuntimeError:  # the page was closed while the work ran: nobody is waiting for it
                pass

        thread = threading.Thread(target=call, name="venus-wizard-check", daemon=True)
        thread.start()
        return thread


def _label(text: str = "", name: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if name:
        label.setAccessibleName(name)
    return label


def choice_box(choices: list[Choice], current: Any, name: str) -> QComboBox:
    """A combo box of `choices` (value in the item data); an unavailable one is shown greyed with its reason."""
    box = QComboBox()
    box.setAccessibleName(name)
    model = box.model()
    for choice in choices:
        box.addItem(choice.label + (f" — {choice.unavailable}" if choice.unavailable else ""), choice.value)
        if choice.unavailable and isinstance(model, QStandardItemModel):
            model.item(box.count() - 1).setEnabled(False)
    index = next((i for i, c in enumerate(choices) if c.value == current and not c.unavailable), None)
    if index is None:
        index = next((i for i, c in enumerate(choices) if not c.unavailable), 0)
    box.setCurrentIndex(index)
    return box


class CheckPage(QWizardPage):
    """A page with a check: a button that runs it on a worker thread and a line with its verdict (✔ or ✘ + fix)."""

    finished = Signal(object)  # CheckResult, on the UI thread

    def __init__(self, title: str, explanation: str, button_text: str, check: Callable[[], CheckResult],
                 auto_run: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTitle(title)
        self.check = check
        self.auto_run = auto_run
        self.result: CheckResult | None = None
        self._background = Background(self)
        self._background.done.connect(self._show)
        self.button = QPushButton(button_text)
        self.button.setAccessibleName(button_text)
        self.button.clicked.connect(self.run_check)
        self.verdict = _label("Not checked yet.", f"{title} result")
        self.meter = LevelMeter(name=f"{title} level")
        self.meter.setVisible(False)
        self.body = QVBoxLayout(self)
        self.body.addWidget(_label(explanation))
        self.controls = QVBoxLayout()  # subclasses put their choices here, above the button
        self.body.addLayout(self.controls)
        self.body.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        self.body.addWidget(self.meter)
        self.body.addWidget(self.verdict)
        self.body.addStretch(1)

    def initializePage(self) -> None:
        """Run at once when the page opens, for checks that need no action from the user."""
        if self.auto_run and self.result is None:
            self.run_check()

    def job(self) -> Callable[[], CheckResult]:
        """What the worker runs; read the page's widgets here (UI thread), not in the returned function."""
        return self.check

    def run_check(self) -> threading.Thread:
        """Start the check on a worker thread."""
        self.button.setEnabled(False)
        self.result = None
        self.verdict.setText("Checking…")
        return self._background.run(self.job())

    def _show(self, result: CheckResult | Exception) -> None:
        if isinstance(result, Exception):
            result = CheckResult(False, f"The check failed: {result}")
        self.result = result
        self.button.setEnabled(True)
        self.verdict.setText(("✔ " if result.ok else "✘ ") + result.message)
        if result.level_dbfs is not None:
            self.meter.setVisible(True)
            self.meter.set_level(result.level_dbfs)
        self.finished.emit(result)


class DevicePage(CheckPage):
    """Pick a microphone or speaker and test it; the microphone's level moves live while it records."""

    level = Signal(float)  # dBFS from the recording thread, shown by the meter on the UI thread

    def __init__(self, title: str, explanation: str, button_text: str, devices: list[Choice], current: Any,
                 test: Callable[..., CheckResult], live_level: bool = False) -> None:
        super().__init__(title, explanation, button_text, lambda: CheckResult(False, "no device chosen"))
        self.test = test
        self.live_level = live_level
        self.device_box = choice_box(devices, current, f"{title} device")
        self.controls.addWidget(self.device_box)
        if live_level:
            self.meter.setVisible(True)
            self.level.connect(self.meter.set_level)

    def device(self) -> Any:
        """The chosen device (None = the system default)."""
        return self.device_box.currentData()

    def job(self) -> Callable[[], CheckResult]:
        """Test the chosen device; the microphone reports its level as it goes."""
        device = self.device()
        if self.live_level:
            return lambda: self.test(device, on_level=self.level.emit)
        return lambda: self.test(device)


class VoicePage(CheckPage):
    """Pick a voice and hear it on the speaker chosen before."""

    def __init__(self, voices: list[Choice], current: str, preview: Callable[[str, Any], CheckResult],
                 output: Callable[[], Any]) -> None:
        super().__init__("Voice", "Choose how Venus sounds, then press Preview to hear it on your speaker.",
                         "Preview voice", lambda: CheckResult(False, "no voice chosen"))
        self.preview = preview
        self.output = output  # the speaker chosen on the page before
        self.voice_box = choice_box(voices, current, "Voice")
        self.controls.addWidget(self.voice_box)

    def voice(self) -> str:
        """The chosen voice: "piper:<model id>" or "espeak:<voice name>"."""
        return self.voice_box.currentData()

    def job(self) -> Callable[[], CheckResult]:
        """Preview the chosen voice on the chosen speaker."""
        voice, device = self.voice(), self.output()
        return lambda: self.preview(voice, device)


class LanguagePage(QWizardPage):
    """Pick the language Venus listens and answers in; languages no installed model hears are greyed with why."""

    def __init__(self, languages: list[Choice], current: str) -> None:
        super().__init__()
        self.setTitle("Language")
        self.language_box = choice_box(languages, current, "Language")
        layout = QVBoxLayout(self)
        layout.addWidget(_label("The language you speak to Venus, for speech recognition and answers."))
        layout.addWidget(self.language_box)
        missing = [c.label for c in languages if c.unavailable]
        if missing:
            layout.addWidget(_label(
                f"{', '.join(missing)}: the speech recognition model in use does not hear them; a multilingual "
                "one can be set in Settings → Speech recognition. Venus's everyday requests (timers, notes…) are "
                "written in English for now.",
                "Language note"))
        layout.addStretch(1)

    def language(self) -> str:
        """The chosen language code ("en")."""
        return self.language_box.currentData()


class ModelPage(CheckPage):
    """The language model: the installed ones (the best for this machine chosen), the catalog's recommendation for
    this machine with an optional Get (licence, progress, Cancel), and the default models check. Skipping the Get
    keeps an installed model."""

    def __init__(self, recommend: Callable[[], Recommendation], check_models: Callable[[], CheckResult],
                 keep: str | None = None, language: Callable[[], str] = lambda: "en") -> None:
        super().__init__("Language model", "The model that writes Venus's answers. A bigger one answers better "
                         "but needs more memory and cores.", "Check the models again", check_models, auto_run=True)
        self.recommend = recommend
        self.language = language  # the language chosen on the page before: the recommendation follows it
        self.keep = keep  # a model the user chose before, preselected over the recommendation
        self.recommendation: Recommendation | None = None
        self.model_box = QComboBox()
        self.model_box.setAccessibleName("Language model")
        self.model_box.setEnabled(False)
        self.reason = _label("Looking at this machine and the installed models…", "Recommendation")
        self.catalog_note = _label("Reading the model catalog…", "Catalog recommendation")
        self.catalog = CatalogPanel(kinds=(("llm", "Language model"),), only_recommended=True)
        self.catalog.summary.hide()  # the note above says it in the wizard's words
        self.catalog.installed.connect(self._got)
        self.catalog.use_requested.connect(lambda advice: self._select(advice.entry.id))
        self.catalog.loaded.connect(self._show_catalog)
        for widget in (self.model_box, self.reason, self.catalog_note, self.catalog):
            self.controls.addWidget(widget)
        self._recommending = False
        self._recommender = Background(self)
        self._recommender.done.connect(self._show_recommendation)

    def initializePage(self) -> None:
        """Recommend, read the catalog and check at once: none needs an action from the user."""
        if self.recommendation is None and not self._recommending:
            self._recommending = True
            self._recommender.run(self.recommend)
        language = self.language()
        if self.catalog.advice is None or self.catalog.language != language:
            self.catalog.load(language)
        super().initializePage()

    def _show_recommendation(self, found: Recommendation | Exception) -> None:
        if isinstance(found, Exception):
            self.reason.setText(f"Could not look at the installed models: {found}")
            return
        self.recommendation = found
        self.model_box.clear()
        for option in found.options:
            notes = [f"{option.size_bytes / 1e6:.0f} MB", "chat" if option.chat else "base model"]
            if not option.fits:
                notes.append("too big for this machine")
            if option.id == found.model_id:
                notes.append("recommended")
            self.model_box.addItem(f"{option.title} ({', '.join(notes)})", option.id)
        self.model_box.setEnabled(bool(found.options))
        ids = [o.id for o in found.options]
        if self.keep is not None and self.keep not in ids:  # a model file set by path: still offered, as is
            self.model_box.addItem(f"{self.keep} (your current setting)", self.keep)
            ids.append(self.keep)
        pick = self.keep if self.keep in ids else found.model_id
        if pick in ids:
            self.model_box.setCurrentIndex(ids.index(pick))
        self.reason.setText("Among the installed models: " + found.reason)
        self._show_catalog()

    def _show_catalog(self) -> None:
        """Say what the catalog recommends here; an installed recommendation is chosen unless the user chose before."""
        advice = self.catalog.advice
        if advice is None:
            return
        if advice.problem:
            self.catalog_note.setText(advice.problem)
            return
        best = advice.recommended("llm")
        if best is None:
            self.catalog_note.setText(f"No model of the catalog fits this machine ({advice.machine.describe()}); "
                                      "Venus keeps an installed one.")
            return
        if best.installed:
            self.catalog_note.setText(f"The catalog's recommendation for this machine, {best.entry.title}, is "
                                      "installed.")
            if self.keep is None and self.recommendation is not None:
                self._select(best.entry.id)
            return
        self.catalog_note.setText(f"The catalog recommends {best.entry.title} for this machine. Getting it is "
                                  "optional: Venus works with an installed model meanwhile; Settings → Models lists "
                                  "the others.")

    def _got(self, model_id: str) -> None:
        """A model got from the catalog becomes the choice."""
        self._select(model_id)

    def _select(self, model_id: str) -> None:
        index = self.model_box.findData(model_id)
        if index < 0:
            row = self.catalog.rows.get(model_id)
            title = row.advice.entry.title if row is not None else model_id
            self.model_box.addItem(f"{title} (from the catalog)", model_id)
            index = self.model_box.count() - 1
        self.model_box.setEnabled(True)
        self.model_box.setCurrentIndex(index)

    def model(self) -> str | None:
        """The chosen model id, or None while the installed models are still being read (or there are none)."""
        return self.model_box.currentData()


class CameraPage(CheckPage):
    """Opt in to the camera (off by default) and test it."""

    def __init__(self, enabled: bool, device: str | int, test: Callable[[str | int], CheckResult]) -> None:
        super().__init__("Camera", "Optional. With the camera on, Venus sees whether you are there and looking at it, "
                         "and reads text you hold up. Frames are analysed on this computer and not stored.",
                         "Test camera", lambda: CheckResult(False, "no camera chosen"))
        self.test = test
        self.enabled_box = QCheckBox("Turn the camera on when Venus starts")
        self.enabled_box.setAccessibleName("Use the camera")
        self.enabled_box.setChecked(enabled)
        self.device_edit = QLineEdit(str(device))
        self.device_edit.setAccessibleName("Camera device")
        self.device_edit.setPlaceholderText("0 for the first camera, or a video file or URL")
        self.controls.addWidget(self.enabled_box)
        self.controls.addWidget(self.device_edit)

    def device(self) -> str | int:
        """The camera: an index when a number was typed, else the path or URL."""
        text = self.device_edit.text().strip() or "0"
        return int(text) if text.isdigit() else text

    def job(self) -> Callable[[], CheckResult]:
        """Open the chosen camera and read one frame."""
        device = self.device()
        return lambda: self.test(device)


class ToolsPage(QWizardPage):
    """What the tools may do: which run by themselves, which ask first, which are off."""

    def __init__(self, list_tools: Callable[[], list[dict]], summarize: Callable[[list[dict]], list[str]]) -> None:
        super().__init__()
        self.setTitle("What Venus may do")
        self.rows: list[dict] | None = None
        self.summarize = summarize
        layout = QVBoxLayout(self)
        layout.addWidget(_label("Venus can act on this computer with tools, in the background while you talk."))
        self.summary = _label("Reading the tools…", "Tools summary")
        layout.addWidget(self.summary)
        layout.addWidget(_label("A spoken yes counts only for a question Venus asked aloud, in your voice. Change "
                                "any level later in Settings → Tools; `venus tools` lists them."))
        layout.addStretch(1)
        self._background = Background(self)
        self._background.done.connect(self._show)
        self._list_tools = list_tools
        self._listing = False

    def initializePage(self) -> None:
        """List the tools once, off the UI thread."""
        if self.rows is None and not self._listing:
            self._listing = True
            self._background.run(self._list_tools)

    def _show(self, rows: list[dict] | Exception) -> None:
        if isinstance(rows, Exception):
            self.summary.setText(f"Could not list the tools: {rows}")
            return
        self.rows = rows
        self.summary.setText("\n\n".join(self.summarize(rows)))


class SummaryPage(QWizardPage):
    """The choices about to be saved, in words, shown before Finish."""

    def __init__(self, describe: Callable[[], list[str]]) -> None:
        super().__init__()
        self.setTitle("Ready")
        self.describe = describe
        layout = QVBoxLayout(self)
        self.text = _label("", "Choices")
        layout.addWidget(self.text)
        layout.addWidget(_label("Finish saves these settings; everything can be changed later in Settings."))
        layout.addStretch(1)

    def initializePage(self) -> None:
        """Show the current choices."""
        self.text.setText("\n".join(f"• {line}" for line in self.describe()))
