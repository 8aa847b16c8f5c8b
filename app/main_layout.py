"""How the main window is laid out: its three panels, its menus and its keyboard shortcuts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from app.theme import SPACE

if TYPE_CHECKING:
    from app.main_window import MainWindow

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


def _side_panel(name: str, title: str, min_width: int, main: QWidget, *below: QWidget) -> QFrame:
    """A titled side panel: `main` takes the free height, `below` stay at their own."""
    panel = QFrame()
    panel.setObjectName(name)
    panel.setMinimumWidth(min_width)
    layout = QVBoxLayout(panel)
    pad = SPACE[3]
    layout.setContentsMargins(pad, pad, pad, pad)
    layout.setSpacing(SPACE[2])
    heading = QLabel(title)
    heading.setObjectName("panelTitle")
    layout.addWidget(heading)
    layout.addWidget(main, 1)
    for widget in below:
        layout.addWidget(widget)
    return panel


def build_panels(window: MainWindow) -> None:
    """Conversations on the left, the conversation and its controls in the middle, tasks and camera on the right."""
    gap = SPACE[2]
    left = _side_panel("sidePanel", "Conversations", 260, window.conversations)

    header = QHBoxLayout()
    header.setSpacing(gap)
    header.addWidget(window.title, 1)
    header.addWidget(window.state_indicator)
    meter = QVBoxLayout()
    meter.setSpacing(SPACE[0])
    window.mic_label = QLabel("Microphone")
    window.mic_label.setObjectName("mutedText")
    meter.addWidget(window.mic_label)
    meter.addWidget(window.level_meter)
    window.level_meter.setFixedWidth(140)
    header.addLayout(meter)
    entry = QHBoxLayout()
    entry.setSpacing(SPACE[1])
    entry.addWidget(window.text_box, 1)
    entry.addWidget(window.send_button)
    voice = QHBoxLayout()
    voice.setSpacing(SPACE[1])
    for button in (window.talk_button, window.mute_button, window.stop_button):
        voice.addWidget(button)
    voice.addStretch(1)
    middle = QWidget()
    middle_layout = QVBoxLayout(middle)
    middle_layout.setContentsMargins(SPACE[1], 0, SPACE[1], 0)
    middle_layout.setSpacing(gap)
    middle_layout.addLayout(header)
    middle_layout.addWidget(window.conversation, 1)
    middle_layout.addWidget(window.captions)
    middle_layout.addLayout(entry)
    middle_layout.addLayout(voice)

    right = _side_panel("rightPanel", "Tasks", 300, window.tasks, window.camera)

    window.splitter = QSplitter(Qt.Orientation.Horizontal)
    window.splitter.setObjectName("mainSplitter")
    window.splitter.setHandleWidth(SPACE[1])
    for widget in (left, middle, right):
        window.splitter.addWidget(widget)
    window.splitter.setStretchFactor(0, 0)
    window.splitter.setStretchFactor(1, 3)
    window.splitter.setStretchFactor(2, 1)
    central = QWidget()
    central.setObjectName("central")
    layout = QVBoxLayout(central)
    layout.setContentsMargins(SPACE[3], SPACE[3], SPACE[3], SPACE[1])
    layout.addWidget(window.splitter, 1)
    window.setCentralWidget(central)
    window.statusBar().setAccessibleName("Status messages")
    window.resize(1240, 760)
    window.splitter.setSizes([270, 630, 340])
    # keyboard order: text box, send, voice controls, conversation, conversations, tasks, camera
    order = [window.text_box, window.send_button, window.talk_button, window.mute_button, window.stop_button,
             window.conversation, window.conversations.new_button, window.conversations.search,
             window.conversations.list, window.camera.switch]
    for first, second in zip(order, order[1:], strict=False):
        QWidget.setTabOrder(first, second)


def _action(window: MainWindow, text: str, shortcut: str | None, slot, checkable: bool = False) -> QAction:
    action = QAction(text, window)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    action.setCheckable(checkable)
    action.triggered.connect(slot)
    window.addAction(action)  # shortcuts work while the menu bar is hidden, too
    return action


def build_menus(window: MainWindow) -> None:
    """The menu bar and the window-wide shortcuts."""
    bar = window.menuBar()
    venus = bar.addMenu("&Venus")
    window.new_chat_action = _action(window, "&New chat", SHORTCUT_NEW_CHAT, window.new_chat)
    window.search_action = _action(window, "&Search conversations", SHORTCUT_SEARCH, window.focus_search)
    window.rename_action = _action(window, "&Rename conversation", SHORTCUT_RENAME, window.conversations.rename_selected)
    window.export_action = _action(window, "&Export as Markdown…", SHORTCUT_EXPORT,
                                   lambda: window.export_conversation(window.conversations.selected_id(), "md"))
    window.export_json_action = _action(window, "Export as &JSON…", None,
                                        lambda: window.export_conversation(window.conversations.selected_id(), "json"))
    window.settings_action = _action(window, "&Settings…", SHORTCUT_SETTINGS, window.open_settings)
    window.quit_action = _action(window, "&Quit", SHORTCUT_QUIT, window.quit)
    for action in (window.new_chat_action, window.search_action, window.rename_action, window.export_action,
                   window.export_json_action, None, window.settings_action, None, window.quit_action):
        venus.addSeparator() if action is None else venus.addAction(action)
    talk = bar.addMenu("&Conversation")
    window.stop_action = _action(window, "&Stop talking", None, window.stop_talking)
    window.stop_action.setShortcuts([QKeySequence(SHORTCUT_STOP)])
    window.mute_action = _action(window, "&Mute microphone", None, lambda: window.mute_button.toggle())
    window.camera_action = _action(window, "&Camera on/off", SHORTCUT_CAMERA, lambda: window.camera.switch.toggle())
    window.focus_action = _action(window, "&Type a message", SHORTCUT_FOCUS_TEXT, window.text_box.setFocus)
    for action in (window.stop_action, window.mute_action, window.camera_action, window.focus_action):
        talk.addAction(action)
    help_menu = bar.addMenu("&Help")
    window.shortcuts_action = _action(window, "&Keyboard shortcuts", SHORTCUT_HELP, window.show_shortcuts)
    window.about_action = _action(window, f"&About {window.settings.conversation.assistant_name}", None,
                                  window.show_about)
    help_menu.addAction(window.shortcuts_action)
    help_menu.addAction(window.about_action)
    # Ctrl+M and Esc stay window-wide shortcuts even while a text field has focus
    window.mute_shortcut = QShortcut(QKeySequence(SHORTCUT_MUTE), window, window.mute_button.toggle)
    window.mute_action.setShortcut(QKeySequence())  # the QShortcut above owns Ctrl+M
    window.mute_action.setText(f"&Mute microphone\t{SHORTCUT_MUTE}")
