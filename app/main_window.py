"""The main window: conversations on the left, the live conversation in the middle, tasks and camera on the right.

`run_app` is the entry point the `venus` command calls: it builds the timeline, the controller, the bridge,
the window and the tray, runs the first-run wizard when needed, and returns Qt's exit code.
"""

from __future__ import annotations

import gc
import logging
import sys
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QWidget,
)

from app.bridge import Bridge
from app.controller import Controller, ControllerFactory, TimelineController
from app.main_layout import SHORTCUT_MUTE, SHORTCUT_PUSH_TO_TALK, SHORTCUT_STOP, build_menus, build_panels
from app.single_instance import SingleInstance, instance_key
from app.theme import apply_theme
from app.timeline_model import ConversationModel, RowKind, conversation_markdown
from app.widgets import (
    CameraPreview,
    ConversationList,
    ConversationView,
    LevelMeter,
    StateIndicator,
    TasksPanel,
)
from app.widgets.help import about_html, shortcuts_html
from app.widgets.indicators import Captions, ElidedLabel
from app.widgets.push_to_talk import PushToTalkButton
from engine import paths
from engine.runtime.cues import nothing_wanted_reply, social_formula
from engine.settings import Settings, save_settings
from engine.timeline import Event, Timeline
from engine.timeline.events import Kind, RuntimeStateName

log = logging.getLogger(__name__)

AUTO_TITLE_WORDS = 6  # an untitled conversation is named after the first words said in it


def freeze_startup_objects() -> None:
    """Move everything alive after start-up (modules, models' wrappers, widgets) out of the garbage collector's
    reach: a full collection then scans only newer objects. With SQLAlchemy, alembic and the engine loaded, a
    full collection otherwise stalls the GUI thread for ~40 ms (bench/bench_app.py)."""
    gc.collect()
    gc.freeze()


def window_state_store() -> QSettings:
    """Where geometry and splitter positions are remembered (an INI file beside settings.json)."""
    return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)


def _version() -> str:
    try:
        return metadata.version("venus")
    except metadata.PackageNotFoundError:
        return ""


class MainWindow(QMainWindow):
    """The conversation window; every user action leaves through the bridge, never on the UI thread."""

    closed = Signal()  # the window really closed (not hidden to the tray)

    def __init__(self, settings: Settings, timeline: Timeline, controller: Controller,
                 settings_path: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.settings_path = settings_path
        self.timeline = timeline
        self.bridge = Bridge(timeline, controller, self)
        self.model = ConversationModel(self)
        self.quit_on_close = True  # False while a tray icon can bring the window back
        self._applied_upto = 0  # events of this timeline with a lower seq are already on the view
        self._titled: set[str] = set()
        name = settings.conversation.assistant_name
        self.setWindowTitle(name)
        self.setObjectName("mainWindow")
        self.setAccessibleName(f"{name} main window")

        self.conversations = ConversationList()
        self.conversation = ConversationView(self.model, assistant_name=name)
        self.tasks = TasksPanel(self.model)
        self.state_indicator = StateIndicator()
        self.level_meter = LevelMeter()
        self.camera = CameraPreview()
        self.title = ElidedLabel("Conversation")
        self.title.setObjectName("conversationTitle")
        self.captions = Captions()
        self.text_box = QLineEdit()
        self.text_box.setObjectName("textBox")
        self.text_box.setPlaceholderText("Type a message and press Enter…")
        self.text_box.setAccessibleName("Message to the assistant")
        self.send_button = self._button("Send", "Send the typed message")
        self.send_button.setObjectName("primaryButton")
        self.mute_button = self._button("Mute", f"Mute the microphone ({SHORTCUT_MUTE})", checkable=True)
        self.talk_button = PushToTalkButton()
        self.stop_button = self._button("Stop talking", f"Stop the assistant speaking ({SHORTCUT_STOP})")
        build_panels(self)
        build_menus(self)
        self._connect()
        self._show_timeline(timeline)  # a reopened conversation shows its history
        self._show_microphone(self.bridge.microphone_available())
        self._restore_window_state()
        self.bridge.list_conversations()

    def _button(self, text: str, accessible: str, checkable: bool = False) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(accessible)
        button.setToolTip(accessible)
        button.setCheckable(checkable)
        return button

    def _connect(self) -> None:
        bridge = self.bridge
        bridge.event_received.connect(self.on_event)
        bridge.conversation_switched.connect(self._on_switched)
        bridge.conversations_listed.connect(self._on_conversations_listed)
        bridge.mic_level.connect(self.level_meter.set_level)
        bridge.frame_ready.connect(self.camera.show_frame)
        bridge.action_failed.connect(lambda name, message: self.statusBar().showMessage(f"{name} failed: {message}", 10000))
        bridge.exported.connect(lambda path: self.statusBar().showMessage(f"Exported to {path}", 10000))
        self.text_box.returnPressed.connect(self.send_typed_text)
        self.send_button.clicked.connect(self.send_typed_text)
        self.mute_button.toggled.connect(self.set_muted)
        self.talk_button.talking.connect(self._on_talking)
        self.stop_button.clicked.connect(self.stop_talking)
        self.camera.toggled.connect(bridge.set_camera)
        self.tasks.cancel_requested.connect(bridge.cancel_task)
        self.tasks.confirmation_given.connect(bridge.answer_confirmation)
        self.conversation.copied.connect(lambda _text: self.statusBar().showMessage("Message copied", 3000))
        self.conversations.new_requested.connect(self.new_chat)
        self.conversations.open_requested.connect(self.open_conversation)
        self.conversations.rename_requested.connect(bridge.rename_conversation)
        self.conversations.delete_requested.connect(self.delete_conversation)
        self.conversations.export_requested.connect(self.export_conversation)
        self.conversations.search_requested.connect(bridge.search_conversations)
        bridge.search_found.connect(self.conversations.show_search_matches)
        QApplication.instance().installEventFilter(self)

    # ---- events from the engine (GUI thread) ----------------------------------------------------------------

    def _show_timeline(self, timeline: Timeline) -> None:
        """Show `timeline` from its first event (at start, and after switching conversations)."""
        self.timeline = timeline
        events = timeline.events()
        self.model.reset(events)
        self._applied_upto = len(events)
        states = [e.state for e in events if e.kind == Kind.RUNTIME_STATE]
        self.state_indicator.set_state(states[-1] if states else RuntimeStateName.LISTENING)
        self.captions.clear_words()
        self._update_title()

    def _show_microphone(self, available: bool | None) -> None:
        """Say so when the session hears no microphone, instead of a meter that never moves."""
        missing = available is False
        self.mic_label.setText("No microphone: type to Venus" if missing else "Microphone")
        self.level_meter.setEnabled(not missing)
        self.level_meter.setToolTip("No sound card with a microphone was found; see `venus doctor`" if missing else "")
        for button in (self.talk_button, self.mute_button):
            button.setEnabled(not missing)

    def _on_switched(self, timeline: Timeline) -> None:
        self._show_timeline(timeline)
        if self.mute_button.isChecked():  # a reopened session starts unmuted and with the camera off
            self.bridge.set_muted(True)
        if self.camera.is_on:
            self.bridge.set_camera(True)

    def on_event(self, event: Event) -> None:
        """Fold one timeline event into the view, the indicators and the captions."""
        if event.seq < self._applied_upto:
            return  # already shown from the snapshot taken when this timeline was opened
        kind = event.kind
        if kind == Kind.RUNTIME_STATE:
            self.state_indicator.set_state(event.state)
        elif kind == Kind.SYSTEM_NOTICE and event.level in ("warning", "error"):
            self.statusBar().showMessage(event.text, 10000)
        elif kind == Kind.USER_SPEECH_START:
            self._caption("…")
        elif kind == Kind.ASR_PARTIAL:
            self._caption(event.text)
        elif kind in (Kind.ASR_FINAL, Kind.USER_TEXT):
            self.captions.clear_words()
            self._auto_title(event.text)
        self.model.apply(event)

    def _caption(self, words: str) -> None:
        self.captions.show_words(words)

    def _auto_title(self, text: str) -> None:
        conversation_id = self.timeline.conversation_id
        if conversation_id in self._titled or not text.strip() or conversation_id not in self.conversations.ids():
            return
        name = self.settings.conversation.assistant_name
        if social_formula(text, name) or nothing_wanted_reply(text, name) is not None:
            return  # "Hi", "Thanks" or "Never mind" name nothing: the first words that say more name the conversation
        self._titled.add(conversation_id)
        if not self.conversations.title_of(conversation_id).startswith("New chat"):
            return
        words = text.strip().split()
        title = " ".join(words[:AUTO_TITLE_WORDS]) + ("…" if len(words) > AUTO_TITLE_WORDS else "")
        self.bridge.rename_conversation(conversation_id, title)

    def _on_conversations_listed(self, conversations: list, current_id: str) -> None:
        self.conversations.set_conversations(conversations, current_id)
        self._titled.update(c.id for c in conversations if c.title.strip())
        self._update_title()
        said = [r.text for r in self.model.rows() if r.kind == RowKind.USER and not r.streaming]
        for text in said:  # words said before the list arrived name the conversation now
            self._auto_title(text)

    def _update_title(self) -> None:
        title = self.conversations.title_of(self.timeline.conversation_id) or "Conversation"
        self.title.setText(title)
        self.setWindowTitle(f"{title} — {self.settings.conversation.assistant_name}")

    # ---- user actions (leave through the bridge) --------------------------------------------------------------

    def send_typed_text(self) -> None:
        """Send the text box's content, if any, and clear it."""
        text = self.text_box.text().strip()
        if text:
            self.bridge.send_text(text)
            self.text_box.clear()

    def stop_talking(self) -> None:
        """Stop the assistant's current answer."""
        self.bridge.stop_talking()

    def set_muted(self, muted: bool) -> None:
        """Mute or unmute; keeps the button, indicator and tray in step."""
        if self.mute_button.isChecked() != muted:
            self.mute_button.setChecked(muted)  # re-enters through toggled
            return
        self.mute_button.setText("Unmute" if muted else "Mute")
        self.state_indicator.set_muted(muted)
        self.bridge.set_muted(muted)

    def set_push_to_talk(self, on: bool) -> None:
        """Start or end push-to-talk as if the button were held (the F9 key)."""
        self.talk_button.set_talking(on)

    def _on_talking(self, on: bool) -> None:
        # shown at once, before the runtime's own state arrives
        if on:
            self.state_indicator.set_state(RuntimeStateName.USER_SPEAKING)
            self._caption("…")
        else:
            self.captions.clear_words()
        self.bridge.push_to_talk(on)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Hold F9 anywhere in this window for push-to-talk (key repeats are ignored)."""
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and isinstance(event, QKeyEvent):
            if event.key() == SHORTCUT_PUSH_TO_TALK and not event.isAutoRepeat() and self.isActiveWindow():
                self.set_push_to_talk(event.type() == QEvent.Type.KeyPress)
                return True
        return super().eventFilter(watched, event)

    def bring_to_front(self) -> None:
        """Show the window (from the tray, or minimized) and raise it: a second start of Venus asked for it."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def new_chat(self) -> None:
        """Start a new conversation (the current one stays in the list)."""
        self.bridge.switch_conversation(None)

    def open_conversation(self, conversation_id: str) -> None:
        """Go on in a stored conversation."""
        if conversation_id and conversation_id != self.timeline.conversation_id:
            self.bridge.switch_conversation(conversation_id)

    def focus_search(self) -> None:
        """Put the cursor in the conversation search."""
        self.conversations.search.setFocus()
        self.conversations.search.selectAll()

    def confirm_delete(self, title: str) -> bool:
        """Ask before deleting a conversation; No is the default button."""
        box = QMessageBox(QMessageBox.Icon.Question, "Delete conversation",
                          f"Delete “{title}” and everything said in it? This cannot be undone.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setObjectName("confirmDelete")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete a stored conversation after asking."""
        if conversation_id and self.confirm_delete(self.conversations.title_of(conversation_id) or "this conversation"):
            self.bridge.delete_conversation(conversation_id)

    def ask_export_path(self, title: str, fmt: str) -> Path | None:
        """Where to export: a save dialog named after the conversation; None when cancelled."""
        suffix = ".json" if fmt == "json" else ".md"
        default = str(Path.home() / f"{''.join(c if c.isalnum() or c in ' -_' else '_' for c in title).strip()}{suffix}")
        dialog = QFileDialog(self, "Export conversation", default,
                             "JSON (*.json)" if fmt == "json" else "Markdown (*.md)")
        dialog.setObjectName("exportDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix(suffix[1:])
        dialog.selectFile(default)
        if not dialog.exec() or not dialog.selectedFiles():
            return None
        return Path(dialog.selectedFiles()[0])

    def export_conversation(self, conversation_id: str, fmt: str) -> None:
        """Export a conversation as Markdown ("md") or JSON ("json")."""
        conversation_id = conversation_id or self.timeline.conversation_id
        title = self.conversations.title_of(conversation_id) or "Conversation"
        path = self.ask_export_path(title, fmt)
        if path is None:
            return
        if fmt == "json" and path.suffix.lower() != ".json":
            path = path.with_suffix(".json")
        name = self.settings.conversation.assistant_name
        self.bridge.export_conversation(conversation_id, path,
                                        lambda events: conversation_markdown(events, title, name))

    def show_shortcuts(self) -> None:
        """Show the keyboard shortcuts."""
        self._show_help("Keyboard shortcuts", shortcuts_html())

    def show_about(self) -> None:
        """Show what Venus is and its version."""
        self._show_help(f"About {self.settings.conversation.assistant_name}",
                        about_html(self.settings.conversation.assistant_name, _version()))

    def _show_help(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.NoIcon, title, text, QMessageBox.StandardButton.Close, self)
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.help_box = box

    def open_settings(self) -> None:
        """Open the settings dialog; saved settings apply at once."""
        from app.settings_dialog import SettingsDialog  # the dialog is large; load it on first use

        # the running harness's tools: a dialog without them would start the MCP servers a second time
        dialog = SettingsDialog(self.settings, self, settings_path=self.settings_path,
                                tools=self.bridge.describe_tools())
        dialog.settings_saved.connect(self.apply_settings)
        dialog.open()
        self.settings_dialog = dialog

    def apply_settings(self, settings: Settings) -> None:
        """Use new settings now: theme, name and camera here; the rest goes to the engine."""
        self.settings = settings
        self.conversation.assistant_name = settings.conversation.assistant_name
        self._update_title()
        self.conversation.viewport().update()
        apply_theme(QApplication.instance(), settings.ui.theme)
        self.bridge.apply_settings(settings)

    # ---- window state ---------------------------------------------------------------------------------------

    def _restore_window_state(self) -> None:
        store = window_state_store()
        geometry, splitter = store.value("geometry"), store.value("splitter")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(splitter, QByteArray):
            self.splitter.restoreState(splitter)

    def save_window_state(self) -> None:
        """Remember geometry and the splitter position for next time."""
        store = window_state_store()
        store.setValue("geometry", self.saveGeometry())
        store.setValue("splitter", self.splitter.saveState())
        store.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Save window state; hide to the tray when there is one, else quit."""
        self.save_window_state()
        if not self.quit_on_close:
            event.ignore()
            self.hide()
            return
        super().closeEvent(event)
        self.shutdown()
        self.closed.emit()

    def quit(self) -> None:
        """Save state, close the controller and leave the event loop."""
        self.save_window_state()
        self.shutdown()
        QApplication.instance().quit()

    def shutdown(self) -> None:
        """Stop the bridge (idempotent)."""
        if getattr(self, "_shut_down", False):
            return
        self._shut_down = True
        QApplication.instance().removeEventFilter(self)
        self.bridge.close()


def run_app(settings: Settings, controller_factory: ControllerFactory | None = None,
            timeline: Timeline | None = None, settings_path: Path | None = None) -> int:
    """Show the desktop app until the user quits; returns the exit code for `venus`."""
    from app.tray import Tray
    from app.wizard import FirstRunWizard

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Venus")
    instance = SingleInstance(instance_key(paths.config_dir()))
    if instance.ask_running_to_show():
        print("Venus is already running: its window was brought to the front.")
        return 0
    instance.listen()
    apply_theme(app, settings.ui.theme)
    if not settings.ui.first_run_done:
        wizard = FirstRunWizard(settings, settings_path=settings_path)
        instance.activated.connect(wizard.raise_)  # a second start during the first run finds the wizard
        accepted = wizard.exec()
        instance.activated.disconnect(wizard.raise_)
        if accepted:
            settings = wizard.settings
        else:  # skipped: ask again next time, but do not block the app
            log.info("first-run wizard skipped")
    factory = controller_factory or TimelineController
    controller = factory(timeline, settings)
    window = MainWindow(settings, controller.timeline, controller, settings_path=settings_path)
    instance.activated.connect(window.bring_to_front)
    tray = Tray(window)
    window.quit_on_close = not tray.available
    tray.show_if_available()
    # Quit when this window closes (or Quit is chosen), not whenever Qt counts no visible windows: a stray
    # late quit would leave Qt's "quit now" flag set and end every later event loop at once.
    quit_on_last = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)
    window.closed.connect(app.quit)
    window.show()
    freeze_startup_objects()
    try:
        code = app.exec()
    finally:
        instance.close()
        window.shutdown()
        tray.hide()
        window.hide()
        app.setQuitOnLastWindowClosed(quit_on_last)
    return code


def save_and_apply(window: MainWindow, settings: Settings) -> None:
    """Save settings to disk and apply them to a running window."""
    save_settings(settings, window.settings_path)
    window.apply_settings(settings)


__all__ = ["MainWindow", "freeze_startup_objects", "run_app", "save_and_apply", "window_state_store"]
