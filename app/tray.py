"""The system tray icon: mute, show the window, quit."""

from __future__ import annotations

from PySide6.QtGui import QAction, QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app.main_window import MainWindow


def venus_icon(colour: str = "#6a1b9a") -> QIcon:
    """A plain round icon drawn at run time (no image files to ship)."""
    pixmap = QPixmap(64, 64)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(colour))
    painter.setPen(QColor(colour))
    painter.drawEllipse(4, 4, 56, 56)
    painter.end()
    return QIcon(pixmap)


class Tray(QSystemTrayIcon):
    """Tray icon whose menu mirrors the window's mute state and can show or quit it."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(venus_icon(), window)
        self.window = window
        self.setToolTip(window.settings.conversation.assistant_name)
        self.menu = QMenu()
        self.menu.setAccessibleName("Tray menu")
        self.mute_action = QAction("Mute microphone", self.menu, checkable=True)
        self.show_action = QAction("Show window", self.menu)
        self.quit_action = QAction("Quit", self.menu)
        for action in (self.mute_action, self.show_action, self.quit_action):
            self.menu.addAction(action)
        self.setContextMenu(self.menu)
        self.mute_action.toggled.connect(window.set_muted)
        window.mute_button.toggled.connect(self.mute_action.setChecked)
        self.show_action.triggered.connect(self.show_window)
        self.quit_action.triggered.connect(window.quit)
        self.activated.connect(self._on_activated)

    @property
    def available(self) -> bool:
        """Whether the desktop has a tray to put the icon in."""
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show_if_available(self) -> None:
        """Show the icon when the desktop has a tray."""
        if self.available:
            self.show()

    def show_window(self) -> None:
        """Bring the window back to the front."""
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.show_window()
