"""The settings dialog: pages for people (app.settings_fields), validated by pydantic before saving.

A list of pages on the left, one page at a time on the right. Every value that can be a choice is a
populated dropdown: devices (with a live level meter and a test sound), voices (with a preview), languages,
models (installed, size, whether they fit in memory). The Models page also lists the catalog of models to get,
judged for this machine, with Get and "Use this model", which saves at once (app/settings_catalog.py). The Tools
page lists every tool with a permission dropdown; MCP servers are a form with JSON import and export. Secrets (API keys, MCP secret env values) go to
the OS keyring; the file gets only `keyring:` references, and "Move to keyring" moves secrets found in clear.
Saved changes a running Venus cannot take live (the model, devices) offer one "Restart Venus" action.
Device probing, previews and tool listing run on worker threads, never on the UI thread (app/settings_probes.py).
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.secrets import PlaintextSecret, api_key_name, delete_secret, set_secret
from app.settings_catalog import CatalogPanel
from app.settings_fields import PAGES, needs_restart, page_of
from app.settings_form import FormGroup, SectionEditors, help_label
from app.settings_mcp import McpPage
from app.settings_models import ModelsPanel
from app.settings_pages import ApiKeysPage, ToolsPage
from app.settings_probes import SettingsProbes, voice_key
from app.widgets import LevelMeter
from engine.errors import SecretError
from engine.secrets import plaintext_warning, with_keyring_refs
from engine.settings import Settings, save_settings


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


def restart_venus() -> None:
    """Quit the app and start it again the same way, once everything is shut down (exec at interpreter exit)."""
    argv = [sys.executable, *sys.orig_argv[1:]]

    def again() -> None:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.execv(sys.executable, argv)

    atexit.register(again)
    app = QApplication.instance()
    if app is not None:
        app.quit()


class SettingsDialog(SettingsProbes, QDialog):
    """Edits a copy of the settings; `settings_saved` fires after a successful save.

    `tools` is the running session's `Harness.describe_tools()`; without it the list comes from a throwaway
    harness on a worker thread. `reloads_live` says the controller reopens the engine itself when a saved change
    needs it, as SessionController.apply_settings (what `venus` runs) does; with False such a change offers
    "Restart Venus", which calls `restart` (by default: quit and start the app again; tests pass their own).
    """

    settings_saved = Signal(object)  # the saved Settings
    devices_found = Signal(object)  # Devices, from the probe thread
    choices_found = Signal(str, list, str)  # (field key, [(label, value)], problem) from a worker thread
    check_finished = Signal(str, object)  # (which check, CheckResult) from a worker thread
    tools_found = Signal(list, str)  # (describe_tools rows, problem) from a worker thread
    level_heard = Signal(float)  # the live microphone level in dBFS, from PortAudio's thread

    def __init__(self, settings: Settings, parent: QWidget | None = None, settings_path: Path | None = None,
                 tools: list[dict[str, Any]] | None = None, restart: Callable[[], None] | None = None,
                 reloads_live: bool = True) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setAccessibleName("Settings")
        self.original = settings
        self.settings_path = settings_path
        self.saved: Settings | None = None
        self.restart = restart or restart_venus
        self.reloads_live = reloads_live
        self.restart_reasons: list[str] = []
        specs: dict[str, list] = {}
        for _, groups in PAGES:
            for _, fields in groups:
                for spec in fields:
                    specs.setdefault(spec.section, []).append(spec)
        self.forms = {section: SectionEditors(getattr(settings, section), fields) for section, fields in specs.items()}
        self._build_widgets(settings, tools)
        self.nav = QListWidget()
        self.nav.setAccessibleName("Settings pages")
        self.nav.setFixedWidth(150)
        self.nav.setSpacing(3)
        self.stack = QStackedWidget()
        self.page_titles: list[str] = []
        for title, groups in PAGES:
            self.nav.addItem(title)
            self.page_titles.append(title)
            self.stack.addWidget(self._page(title, groups))
        self.nav.currentRowChanged.connect(self._show_row)
        self.error = QLabel()
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c62828")
        self.error.setAccessibleName("Settings problems")
        self.restart_note = QLabel()
        self.restart_note.setWordWrap(True)
        self.restart_note.setAccessibleName("What needs a restart")
        self.restart_button = QPushButton("Restart Venus")
        self.restart_button.setAccessibleName("Restart Venus to use the new settings")
        self.restart_button.clicked.connect(self._restart_now)
        self.restart_bar = QFrame()
        bar = QHBoxLayout(self.restart_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.restart_note, 1)
        bar.addWidget(self.restart_button)
        self.restart_bar.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        body = QHBoxLayout()
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.restart_bar)
        layout.addWidget(self.buttons)
        self.resize(900, 650)
        self.nav.setCurrentRow(0)
        if found := self.mcp.plaintext_secrets():
            self.error.setText(f"⚠ {plaintext_warning(found)}: MCP servers → Move to keyring.")
        self._start_lookups(settings, tools)

    # ---- pages -----------------------------------------------------------------------------------------------

    def _build_widgets(self, settings: Settings, tools: list[dict[str, Any]] | None) -> None:
        """The parts of pages that are more than fields: meters, test buttons, the model manager, tables."""
        self._build_probes(settings)
        self.models = ModelsPanel()
        self.models.model_chosen.connect(self._model_added)
        self.catalog = CatalogPanel()
        self.catalog.use_requested.connect(self.use_model)
        self.catalog.installed.connect(self._catalog_installed)
        answers_in = self.forms["conversation"].editors["language"]  # the recommendation follows the language
        answers_in.currentIndexChanged.connect(lambda: self.catalog.load(answers_in.currentData()))
        self.catalog.set_in_use(self._models_in_use(settings))
        self.vision_mode = QLabel(f"Vision in use: {vision_mode(settings.camera)}")
        self.vision_mode.setWordWrap(True)
        self.vision_mode.setAccessibleName("Which kind of vision is active")
        self.tools = ToolsPage(dict(settings.harness.permissions), list(settings.harness.allowed_folders), tools)
        self.mcp = McpPage(dict(settings.harness.mcp_servers))
        self.mcp.secrets_moved.connect(self._save_moved_secrets)
        self.api_keys = ApiKeysPage()
        self._extras = {  # shown under a field, above its help line
            "audio.input_device": self._row(self.mic_level, self.mic_button),
            "audio.output_device": self._row(self.tone_button),
            "tts.voice": self._row(self.preview_button, self.voice_status),
        }
        models = FormGroup("Add a model")
        models.form.addRow(self.models)
        catalog = FormGroup("Models to get")
        catalog.form.addRow(self.catalog)
        self._above = {  # a page's own widgets above its fields; a table or list that fills it has no scrolling
            "Models": [catalog],
            "Tools": [self.tools],
            "MCP servers": [help_label("Servers give Venus more tools. Their tools ask before each use unless you "
                                       "allow them; secret values live in the OS keyring."), self.mcp],
        }
        self._below = {
            "Audio devices": [self.device_status], "Models": [models], "API keys": [self.api_keys],
            "Camera": [self._row(self.camera_button, self.camera_status), self.vision_mode],
        }
        self.tools_found.connect(self.tools.show_tools)

    def _row(self, *widgets: QWidget) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            row.addWidget(widget, 1 if isinstance(widget, LevelMeter | QLabel) else 0)
        if not any(isinstance(widget, LevelMeter | QLabel) for widget in widgets):
            row.addStretch(1)
        return box

    def _page(self, title: str, groups: list) -> QWidget:
        """One page: its own widgets above (a table or list that fills the page) or below its groups of fields."""
        content = QWidget()
        layout = QVBoxLayout(content)
        fills = any(isinstance(widget, ToolsPage | McpPage) for widget in self._above.get(title, []))
        for widget in self._above.get(title, []):
            layout.addWidget(widget, 1 if isinstance(widget, ToolsPage | McpPage) else 0)
        built: list[FormGroup] = []
        for group_title, fields in groups:
            group = FormGroup(group_title)
            for spec in fields:
                group.add_field(spec, self.forms[spec.section].editors[spec.name], self._extras.get(spec.key))
            layout.addWidget(group)
            built.append(group)
        widest = max((group.label_width() for group in built), default=0)
        for group in built:  # one column of fields down the page, not one per group
            group.align_labels(widest)
        for widget in self._below.get(title, []):
            layout.addWidget(widget)
        if fills:
            return content
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        return scroll

    def show_page(self, title: str) -> None:
        """Bring a page to the front, as a click on its name would."""
        self.nav.setCurrentRow(self.page_titles.index(title))

    def current_page(self) -> str:
        """The title of the page shown."""
        return self.page_titles[self.stack.currentIndex()]

    def _show_row(self, row: int) -> None:
        self.stack.setCurrentIndex(row)
        self._restart_meter()

    # ---- models ------------------------------------------------------------------------------------------------

    @staticmethod
    def _models_in_use(settings: Settings) -> set[str]:
        voice = {settings.tts.voice} if settings.tts.engine == "piper" else set()
        return {settings.llm.model, settings.asr.model, settings.camera.multimodal_model, *voice}

    def use_model(self, advice: Any) -> bool:
        """Switch to an installed catalog model (a catalog Advice row) and save as the Save button does, so a
        running Venus reloads it in place: a language model, speech model or voice, or the camera's vision model
        with its projector."""
        entry = advice.entry
        if entry.kind == "llm" and entry.projector:
            self.forms["camera"].editors["multimodal_model"].setText(entry.id)
            self.forms["camera"].editors["multimodal_projector"].setText(entry.projector)
        elif entry.kind in ("llm", "asr"):
            self._model_added(entry.id, entry.kind)
        elif entry.kind == "tts":
            voice = self.forms["tts"].editors["voice"]
            if voice.findData(voice_key("piper", entry.id)) < 0:
                voice.addItem(f"{entry.title} · Piper", voice_key("piper", entry.id))
            self.select_voice("piper", entry.id)
        saved = self.save()
        if saved:
            self.catalog.set_in_use(self._models_in_use(self.original))
        return saved

    # ---- the meter follows the dialog --------------------------------------------------------------------------

    def showEvent(self, event: Any) -> None:
        """Start the meter if the dialog opens on the Audio page."""
        super().showEvent(event)
        self._restart_meter()

    def done(self, result: int) -> None:
        """Close the microphone with the dialog, and stop downloads (their partial files stay to resume)."""
        self.monitor.stop()
        self.catalog.getter.cancel_all()
        super().done(result)

    def hideEvent(self, event: Any) -> None:
        """A hidden dialog does not listen."""
        self.monitor.stop()
        super().hideEvent(event)

    # ---- save ------------------------------------------------------------------------------------------------

    def collect(self) -> tuple[dict[str, Any], list[str]]:
        """The edited settings as raw data, plus problems found before pydantic sees them."""
        raw = self.original.model_dump()
        for section, form in self.forms.items():
            raw[section].update(form.values())
        raw["tts"] = self._tts_values()
        permissions, folders, problems = self.tools.values()
        speech_model, language = str(raw["asr"]["model"]), raw["asr"]["language"]
        if language != "en" and speech_model.endswith(("-en", ".en")):
            problems.append(f"asr.language: the speech model {speech_model} understands English only; "
                            "choose English or a multilingual speech model on the Models page")
        raw["harness"]["permissions"] = permissions
        raw["harness"]["allowed_folders"] = folders
        try:
            raw["harness"]["mcp_servers"] = self.mcp.parsed()
        except ValueError as exc:
            problems.append(str(exc))
        problems.extend(self.mcp.unfinished())
        return raw, problems

    def validated(self) -> Settings | None:
        """The edited settings if valid; otherwise None, with every problem shown and its page selected."""
        raw, problems = self.collect()
        settings = None
        try:
            settings = Settings.model_validate(raw)
        except ValidationError as err:
            problems = describe_validation(err) + problems
        if problems:
            self.error.setText("Not saved: " + "; ".join(problems))
            self.show_page(page_of(problems[0].split(":", 1)[0]))
            return None
        return settings

    def save(self) -> bool:
        """Validate, store secrets in the keyring, then write the file; nothing is written if any step fails.

        The dialog closes, unless a change needs a restart: then it stays open with the "Restart Venus" action.
        """
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
        self.restart_reasons = [] if self.reloads_live else needs_restart(self.original, settings)
        self.original = self.saved = settings
        self.error.clear()
        self.settings_saved.emit(settings)
        if self.restart_reasons:
            self.restart_note.setText(f"Saved. Venus uses the new settings for {', '.join(self.restart_reasons)} "
                                      "after a restart; everything else applies now.")
            self.restart_bar.show()
            self.restart_button.setFocus(Qt.FocusReason.OtherFocusReason)
            return True
        self.accept()
        return True

    def _restart_now(self) -> None:
        self.accept()
        self.restart()

    def _save_moved_secrets(self, moved: list[PlaintextSecret]) -> None:
        """Write the file at once with the moved secrets as references; every other edit stays unsaved."""
        on_disk = self.original.model_copy(deep=True)
        on_disk.harness.mcp_servers = with_keyring_refs(on_disk.harness.mcp_servers, moved)
        save_settings(on_disk, self.settings_path)
        self.original = on_disk
        self.error.clear()
        self.settings_saved.emit(on_disk)  # the window must not keep (and later save) the secrets in clear
