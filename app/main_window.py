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
from PySide6.QtGui import QAction, QCloseEvent, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.bridge import Bridge
from app.controller import Controller, ControllerFactory, TimelineController
from app.theme import SPACE, apply_theme
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
from engine.settings import Settings, save_settings
from engine.timeline import Event, Timeline
from engine.timeline.events import Kind, RuntimeStateName

log = logging.getLogger(__name__)

SHORTCUT_MUTE = "Ctrl+M"
SHORTCUT_STOP = "Esc"
SHORTCUT_PUSH_TO_TALK = Qt.Key.Key_F9  # held down while speaking
SHORTCUT_SETTINGS = "Ctrl+,"
SHORTCUT_QUIT = "Ctrl+Q"
SHORTCUT_FOCUS_TEXT = "Ctrl+L"
SHORTCUT_NEW_CHAT = "Ctrl+N"
SHORTCUT_SEARCH = "Ctrl+F"
SHORTCUT_RENAME = "F2"
SHORTCUT_EXPORT = "Ctrl+Shift+E"
SHORTCUT_CAMERA = "Ctrl+K"
SHORTCUT_HELP = "F1"
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
        self._build_layout()
        self._build_actions()
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

    def _build_layout(self) -> None:
        gap, pad = SPACE[2], SPACE[3]
        left = QFrame()
        left.setObjectName("sidePanel")
        left.setMinimumWidth(260)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(pad, pad, pad, pad)
        left_layout.setSpacing(gap)
        heading = QLabel("Conversations")
        heading.setObjectName("panelTitle")
        left_layout.addWidget(heading)
        left_layout.addWidget(self.conversations, 1)

        header = QHBoxLayout()
        header.setSpacing(gap)
        header.addWidget(self.title, 1)
        header.addWidget(self.state_indicator)
        meter = QVBoxLayout()
        meter.setSpacing(SPACE[0])
        self.mic_label = QLabel("Microphone")
        self.mic_label.setObjectName("mutedText")
        meter.addWidget(self.mic_label)
        meter.addWidget(self.level_meter)
        self.level_meter.setFixedWidth(140)
        header.addLayout(meter)
        entry = QHBoxLayout()
        entry.setSpacing(SPACE[1])
        entry.addWidget(self.text_box, 1)
        entry.addWidget(self.send_button)
        voice = QHBoxLayout()
        voice.setSpacing(SPACE[1])
        for button in (self.talk_button, self.mute_button, self.stop_button):
            voice.addWidget(button)
        voice.addStretch(1)
        middle = QWidget()
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(SPACE[1], 0, SPACE[1], 0)
        middle_layout.setSpacing(gap)
        middle_layout.addLayout(header)
        middle_layout.addWidget(self.conversation, 1)
        middle_layout.addWidget(self.captions)
        middle_layout.addLayout(entry)
        middle_layout.addLayout(voice)

        right = QFrame()
        right.setObjectName("rightPanel")
        right.setMinimumWidth(300)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(pad, pad, pad, pad)
        right_layout.setSpacing(gap)
        tasks_title = QLabel("Tasks")
        tasks_title.setObjectName("panelTitle")
        right_layout.addWidget(tasks_title)
        right_layout.addWidget(self.tasks, 1)
        right_layout.addWidget(self.camera)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setHandleWidth(SPACE[1])
        for widget in (left, middle, right):
            self.splitter.addWidget(widget)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 1)
        central = QWidget()
        central.setObjectName("central")
        layout = QVBoxLayout(central)
        layout.setContentsMargins(pad, pad, pad, SPACE[1])
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.statusBar().setAccessibleName("Status messages")
        self.resize(1240, 760)
        self.splitter.setSizes([270, 630, 340])
        # keyboard order: text box, send, voice controls, conversation, conversations, tasks, camera
        order = [self.text_box, self.send_button, self.talk_button, self.mute_button, self.stop_button,
                 self.conversation, self.conversations.new_button, self.conversations.search,
                 self.conversations.list, self.camera.switch]
        for first, second in zip(order, order[1:], strict=False):
            QWidget.setTabOrder(first, second)

    def _action(self, text: str, shortcut: str | None, slot, checkable: bool = False) -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setCheckable(checkable)
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work while the menu bar is hidden, too
        return action

    def _build_actions(self) -> None:
        bar = self.menuBar()
        venus = bar.addMenu("&Venus")
        self.new_chat_action = self._action("&New chat", SHORTCUT_NEW_CHAT, self.new_chat)
        self.search_action = self._action("&Search conversations", SHORTCUT_SEARCH, self.focus_search)
        self.rename_action = self._action("&Rename conversation", SHORTCUT_RENAME, self.conversations.rename_selected)
        self.export_action = self._action("&Export as Markdown…", SHORTCUT_EXPORT,
                                          lambda: self.export_conversation(self.conversations.selected_id(), "md"))
        self.export_json_action = self._action("Export as &JSON…", None,
                                               lambda: self.export_conversation(self.conversations.selected_id(), "json"))
        self.settings_action = self._action("&Settings…", SHORTCUT_SETTINGS, self.open_settings)
        self.quit_action = self._action("&Quit", SHORTCUT_QUIT, self.quit)
        for action in (self.new_chat_action, self.search_action, self.rename_action, self.export_action,
                       self.export_json_action, None, self.settings_action, None, self.quit_action):
            venus.addSeparator() if action is None else venus.addAction(action)
        talk = bar.addMenu("&Conversation")
        self.stop_action = self._action("&Stop talking", None, self.stop_talking)
        self.stop_action.setShortcuts([QKeySequence(SHORTCUT_STOP)])
        self.mute_action = self._action("&Mute microphone", None, lambda: self.mute_button.toggle())
        self.camera_action = self._action("&Camera on/off", SHORTCUT_CAMERA, lambda: self.camera.switch.toggle())
        self.focus_action = self._action("&Type a message", SHORTCUT_FOCUS_TEXT, self.text_box.setFocus)
        for action in (self.stop_action, self.mute_action, self.camera_action, self.focus_action):
            talk.addAction(action)
        help_menu = bar.addMenu("&Help")
        self.shortcuts_action = self._action("&Keyboard shortcuts", SHORTCUT_HELP, self.show_shortcuts)
        self.about_action = self._action(f"&About {self.settings.conversation.assistant_name}", None, self.show_about)
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(self.about_action)
        # Ctrl+M and Esc stay window-wide shortcuts even while a text field has focus
        self.mute_shortcut = QShortcut(QKeySequence(SHORTCUT_MUTE), self, self.mute_button.toggle)
        self.mute_action.setShortcut(QKeySequence())  # the QShortcut above owns Ctrl+M
        self.mute_action.setText(f"&Mute microphone\t{SHORTCUT_MUTE}")

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
        if said:  # words said before the list arrived name the conversation now
            self._auto_title(said[0])

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
        """Ask before deleting a conversation (tests replace this)."""
        answer = QMessageBox.question(self, "Delete conversation",
                                      f"Delete “{title}” and everything said in it? This cannot be undone.")
        return answer == QMessageBox.StandardButton.Yes

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete a stored conversation after asking."""
        if conversation_id and self.confirm_delete(self.conversations.title_of(conversation_id) or "this conversation"):
            self.bridge.delete_conversation(conversation_id)

    def ask_export_path(self, title: str, fmt: str) -> Path | None:
        """Where to export (tests replace this)."""
        suffix = ".json" if fmt == "json" else ".md"
        default = str(Path.home() / f"{''.join(c if c.isalnum() or c in ' -_' else '_' for c in title).strip()}{suffix}")
        name, _ = QFileDialog.getSaveFileName(self, "Export conversation", default,
                                              "JSON (*.json)" if fmt == "json" else "Markdown (*.md)")
        return Path(name) if name else None

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
    apply_theme(app, settings.ui.theme)
    if not settings.ui.first_run_done:
        wizard = FirstRunWizard(settings, settings_path=settings_path)
        if wizard.exec():
            settings = wizard.settings
        else:  # skipped: ask again next time, but do not block the app
            log.info("first-run wizard skipped")
    factory = controller_factory or TimelineController
    controller = factory(timeline, settings)
    window = MainWindow(settings, controller.timeline, controller, settings_path=settings_path)
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
