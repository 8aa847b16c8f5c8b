"""Small live indicators: what the foreground loop is doing, and how loud the microphone is."""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from engine.timeline.events import RuntimeStateName

STATE_LABELS: dict[RuntimeStateName, tuple[str, str]] = {
    RuntimeStateName.LISTENING: ("Listening", "#2e7d32"),
    RuntimeStateName.USER_SPEAKING: ("You are speaking", "#1565c0"),
    RuntimeStateName.THINKING: ("Thinking", "#ef6c00"),
    RuntimeStateName.SPEAKING: ("Speaking", "#6a1b9a"),
    RuntimeStateName.YIELDING: ("Stopping to listen", "#c62828"),
}

METER_FLOOR_DB = -60.0  # the meter's empty point; quieter input shows as silence


class StateIndicator(QLabel):
    """A coloured dot and a word for the runtime state; also says 'Muted' while the mic is muted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stateIndicator")
        self.state = RuntimeStateName.LISTENING
        self.muted = False
        self._render()

    def set_state(self, state: RuntimeStateName | str) -> None:
        """Show a new runtime state."""
        self.state = RuntimeStateName(state)
        self._render()

    def set_muted(self, muted: bool) -> None:
        """Show or clear the muted mark."""
        self.muted = muted
        self._render()

    def text_for_state(self) -> str:
        """The plain words currently shown."""
        words = STATE_LABELS[self.state][0]
        return f"{words} (muted)" if self.muted else words

    def _render(self) -> None:
        colour = "#757575" if self.muted else STATE_LABELS[self.state][1]
        self.setText(f"<span style='color:{colour}; font-size:16pt'>●</span> {self.text_for_state()}")
        self.setAccessibleName(f"Assistant state: {self.text_for_state()}")


def dbfs_to_percent(dbfs: float) -> int:
    """Map a level in dBFS onto 0-100 for the meter (floor at METER_FLOOR_DB)."""
    if math.isnan(dbfs) or dbfs <= METER_FLOOR_DB:
        return 0
    return round(100 * (min(dbfs, 0.0) - METER_FLOOR_DB) / -METER_FLOOR_DB)


class LevelMeter(QWidget):
    """The live microphone level as a painted bar; repaints are queued, so 100 levels a second cost little."""

    def __init__(self, parent: QWidget | None = None, name: str = "Microphone level") -> None:
        super().__init__(parent)
        self.setObjectName("micLevel")
        self.setAccessibleName(name)
        self.setMinimumHeight(10)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.last_dbfs = float("-inf")
        self._percent = 0

    def sizeHint(self) -> QSize:
        """A thin bar."""
        return QSize(160, 12)

    def value(self) -> int:
        """The level shown, 0-100."""
        return self._percent

    def set_level(self, dbfs: float) -> None:
        """Show a level in dBFS."""
        self.last_dbfs = dbfs
        percent = dbfs_to_percent(dbfs)
        if percent != self._percent:
            self._percent = percent
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        """Groove, then the filled part (amber near clipping)."""
        painter = QPainter(self)
        rect = self.rect().adjusted(0, 1, -1, -1)
        painter.setPen(self.palette().color(QPalette.ColorRole.Mid))
        painter.setBrush(self.palette().color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(rect, 3, 3)
        if self._percent:
            filled = rect.adjusted(1, 1, 0, 0)
            filled.setWidth(int((rect.width() - 1) * self._percent / 100))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor("#ef6c00") if self._percent > 90 else self.palette().color(QPalette.ColorRole.Highlight))
            painter.drawRoundedRect(filled, 2, 2)
        painter.end()
