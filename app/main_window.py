"""The main window: the live conversation, state and mic level, camera preview, text box and voice controls.

`run_app` is the entry point the `venus` command calls: it builds the timeline, the controller, the bridge,
the window and the tray, runs the first-run wizard when needed, and returns Qt's exit code.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.bridge import Bridge
from app.controller import Controller, ControllerFactory, TimelineController
from app.theme import apply_theme
from app.timeline_model import ConversationModel
from app.widgets import CameraPreview, ConversationView, LevelMeter, StateIndicator
from engine import paths
from engine.settings import Settings, save_settings
from engine.timeline import Event, Timeline
from engine.timeline.events import Kind

log = logging.getLogger(__name__)

SHORTCUT_MUTE = "Ctrl+M"
SHORTCUT_STOP = "Esc"
SHORTCUT_PUSH_TO_TALK = Qt.Key.Key_F9  # held down while speaking
SHORTCUT_SETTINGS = "Ctrl+,"
SHORTCUT_QUIT = "Ctrl+Q"
SHORTCUT_FOCUS_TEXT = "Ctrl+L"


def window_state_store() -> QSettings:
    """Where geometry and splitter positions are remembered (an INI file beside settings.json)."""
    return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)


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
        self.setWindowTitle(settings.conversation.assistant_name)
        self.setObjectName("mainWindow")
        self.setAccessibleName(f"{settings.conversation.assistant_name} main window")

        self.conversation = ConversationView(self.model, assistant_name=settings.conversation.assistant_name)
        self.state_indicator = StateIndicator()
        self.level_meter = LevelMeter()
        self.camera = CameraPreview()
        self.text_box = QLineEdit()
        self.text_box.setObjectName("textBox")
        self.text_box.setPlaceholderText("Type a message and press Enter…")
        self.text_box.setAccessibleName("Message to the assistant")
        self.send_button = self._button("Send", "Send the typed message")
        self.mute_button = self._button("Mute", f"Mute the microphone ({SHORTCUT_MUTE})", checkable=True)
        self.talk_button = self._button("Push to talk", "Hold to talk (or hold F9)")
        self.stop_button = self._button("Stop talking", f"Stop the assistant speaking ({SHORTCUT_STOP})")
        self._build_layout()
        self._build_actions()
        self._connect()
        self.model.apply_all(timeline.events())  # a reopened conversation shows its history
        self._restore_window_state()

    def _button(self, text: str, accessible: str, checkable: bool = False) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(accessible)
        button.setToolTip(accessible)
        button.setCheckable(checkable)
        return button

    def _build_layout(self) -> None:
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.addWidget(self.state_indicator)
        side_layout.addWidget(self.level_meter)
        side_layout.addWidget(self.camera, 1)
        controls = QHBoxLayout()
        for button in (self.mute_button, self.talk_button, self.stop_button):
            controls.addWidget(button)
        side_layout.addLayout(controls)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.conversation)
        self.splitter.addWidget(side)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        entry = QHBoxLayout()
        entry.addWidget(self.text_box, 1)
        entry.addWidget(self.send_button)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(entry)
        self.setCentralWidget(central)
        self.statusBar().setAccessibleName("Status messages")
        self.resize(980, 640)
        # keyboard order: text box, send, voice controls, camera, conversation
        order = [self.text_box, self.send_button, self.mute_button, self.talk_button, self.stop_button,
                 self.camera.switch, self.conversation]
        for first, second in zip(order, order[1:], strict=False):
            QWidget.setTabOrder(first, second)

    def _build_actions(self) -> None:
        menu = self.menuBar().addMenu("&Venus")
        self.settings_action = QAction("&Settings…", self, shortcut=QKeySequence(SHORTCUT_SETTINGS))
        self.settings_action.triggered.connect(self.open_settings)
        self.quit_action = QAction("&Quit", self, shortcut=QKeySequence(SHORTCUT_QUIT))
        self.quit_action.triggered.connect(self.quit)
        menu.addAction(self.settings_action)
        menu.addSeparator()
        menu.addAction(self.quit_action)
        self.mute_shortcut = QShortcut(QKeySequence(SHORTCUT_MUTE), self, self.mute_button.toggle)
        self.stop_shortcut = QShortcut(QKeySequence(SHORTCUT_STOP), self, self.stop_talking)
        self.focus_shortcut = QShortcut(QKeySequence(SHORTCUT_FOCUS_TEXT), self, self.text_box.setFocus)

    def _connect(self) -> None:
        self.bridge.event_received.connect(self.on_event)
        self.bridge.mic_level.connect(self.level_meter.set_level)
        self.bridge.frame_ready.connect(self.camera.show_frame)
        self.bridge.action_failed.connect(
            lambda name, message: self.statusBar().showMessage(f"{name} failed: {message}", 10000))
        self.text_box.returnPressed.connect(self.send_typed_text)
        self.send_button.clicked.connect(self.send_typed_text)
        self.mute_button.toggled.connect(self.set_muted)
        self.talk_button.pressed.connect(lambda: self.bridge.push_to_talk(True))
        self.talk_button.released.connect(lambda: self.bridge.push_to_talk(False))
        self.stop_button.clicked.connect(self.stop_talking)
        self.camera.toggled.connect(self.bridge.set_camera)
        self.conversation.cancel_requested.connect(self.bridge.cancel_task)
        self.conversation.confirmation_given.connect(self.bridge.answer_confirmation)
        QApplication.instance().installEventFilter(self)

    # ---- events from the engine (GUI thread) ----------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """Fold one timeline event into the view and indicators."""
        if event.kind == Kind.RUNTIME_STATE:
            self.state_indicator.set_state(event.state)
        elif event.kind == Kind.SYSTEM_NOTICE and event.level in ("warning", "error"):
            self.statusBar().showMessage(event.text, 10000)
        self.model.apply(event)

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

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Hold F9 anywhere in this window for push-to-talk (key repeats are ignored)."""
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and isinstance(event, QKeyEvent):
            if event.key() == SHORTCUT_PUSH_TO_TALK and not event.isAutoRepeat() and self.isActiveWindow():
                pressed = event.type() == QEvent.Type.KeyPress
                self.talk_button.setDown(pressed)
                self.bridge.push_to_talk(pressed)
                return True
        return super().eventFilter(watched, event)

    def open_settings(self) -> None:
        """Open the settings dialog; saved settings apply at once."""
        from app.settings_dialog import SettingsDialog  # the dialog is large; load it on first use

        dialog = SettingsDialog(self.settings, self, settings_path=self.settings_path)
        dialog.settings_saved.connect(self.apply_settings)
        dialog.open()
        self.settings_dialog = dialog

    def apply_settings(self, settings: Settings) -> None:
        """Use new settings now: theme, name and camera here; the rest goes to the engine."""
        self.settings = settings
        self.setWindowTitle(settings.conversation.assistant_name)
        self.conversation.assistant_name = settings.conversation.assistant_name
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


__all__ = ["MainWindow", "run_app", "save_and_apply", "window_state_store"]
