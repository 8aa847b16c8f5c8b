"""Small live indicators: what the foreground loop is doing, and how loud the microphone is."""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QStyle, QStyleOption, QWidget

from engine.timeline.events import RuntimeStateName

STATE_LABELS: dict[RuntimeStateName, tuple[str, str]] = {
    RuntimeStateName.LISTENING: ("Listening", "#2e9d5b"),
    RuntimeStateName.USER_SPEAKING: ("Hearing you", "#2f6fdb"),
    RuntimeStateName.THINKING: ("Thinking", "#e08a00"),
    RuntimeStateName.SPEAKING: ("Speaking", "#8e44c9"),
    RuntimeStateName.YIELDING: ("Stopping to listen", "#d64545"),
}
PAUSED = ("Paused", "#8a8a8a")  # the microphone is muted

METER_FLOOR_DB = -60.0  # the meter's empty point; quieter input shows as silence
METER_FALL_DB_PER_S = 30.0  # how fast the bar falls back when levels stop (a level every 50 ms keeps it up)


class StateIndicator(QLabel):
    """A coloured pill for the runtime state: listening, hearing you, thinking, speaking, or paused (muted)."""

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
        if not self.muted:
            return words
        if self.state in (RuntimeStateName.LISTENING, RuntimeStateName.USER_SPEAKING):
            return PAUSED[0]
        return f"{words} · mic paused"

    def colour(self) -> str:
        """The pill's colour now."""
        paused = self.muted and self.state in (RuntimeStateName.LISTENING, RuntimeStateName.USER_SPEAKING)
        return PAUSED[1] if paused else STATE_LABELS[self.state][1]

    def _render(self) -> None:
        # painted here, not by a per-state style sheet: re-polishing on every state change cost ~80 ms
        self.setText(f"●\u2009{self.text_for_state()}")
        self.setAccessibleName(f"Assistant state: {self.text_for_state()}")
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        """A rounded pill tinted with the state's colour, its dot and words."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        colour = QColor(self.colour())
        fill = QColor(colour)
        fill.setAlpha(36)
        rect = self.rect().adjusted(1, 1, -1, -1)
        painter.setPen(colour)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        inner = self.contentsRect()
        dot = self.fontMetrics().horizontalAdvance("●\u2009")
        painter.drawText(inner, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), "●")
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        painter.drawText(inner.adjusted(dot, 0, 0, 0), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
                         self.text_for_state())
        painter.end()


def dbfs_to_percent(dbfs: float) -> int:
    """Map a level in dBFS onto 0-100 for the meter (floor at METER_FLOOR_DB)."""
    if math.isnan(dbfs) or dbfs <= METER_FLOOR_DB:
        return 0
    return round(100 * (min(dbfs, 0.0) - METER_FLOOR_DB) / -METER_FLOOR_DB)


class LevelMeter(QWidget):
    """The live microphone level as a painted bar that falls back smoothly; repaints are queued."""

    def __init__(self, parent: QWidget | None = None, name: str = "Microphone level") -> None:
        super().__init__(parent)
        self.setObjectName("micLevel")
        self.setAccessibleName(name)
        self.setMinimumHeight(8)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.last_dbfs = float("-inf")
        self.levels_shown = 0  # levels received so far (tests and diagnostics)
        self._percent = 0
        self._shown_db = METER_FLOOR_DB
        self._last_at = self._level_at = time.monotonic()  # last repaint step; last level received
        self._fall = QTimer(self)
        self._fall.setInterval(50)
        self._fall.timeout.connect(self._falling)

    def sizeHint(self) -> QSize:
        """A slim bar."""
        return QSize(160, 10)

    def value(self) -> int:
        """The level shown, 0-100."""
        return self._percent

    def set_level(self, dbfs: float) -> None:
        """Show a level in dBFS: a louder one at once, a quieter one by falling towards it."""
        self.last_dbfs = dbfs
        self.levels_shown += 1
        now = time.monotonic()
        fallen = self._shown_db - METER_FALL_DB_PER_S * (now - self._last_at)
        self._last_at = self._level_at = now
        target = METER_FLOOR_DB if math.isnan(dbfs) else max(METER_FLOOR_DB, min(0.0, dbfs))
        self._show(max(target, fallen))
        if self._shown_db > METER_FLOOR_DB and not self._fall.isActive():
            self._fall.start()

    def _falling(self) -> None:
        # no level for a while (muted, device gone): let the bar settle instead of freezing at the last one
        now = time.monotonic()
        if now - self._level_at < 0.1:
            return  # levels are still arriving
        self._show(self._shown_db - METER_FALL_DB_PER_S * (now - self._last_at))
        self._last_at = now
        if self._shown_db <= METER_FLOOR_DB:
            self._fall.stop()

    def _show(self, db: float) -> None:
        self._shown_db = max(METER_FLOOR_DB, db)
        percent = dbfs_to_percent(self._shown_db)
        if percent != self._percent:
            self._percent = percent
            self.setAccessibleDescription(f"{percent} percent")
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        """Groove, then the filled part (amber near clipping)."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = self.rect().adjusted(0, 1, -1, -1)
        radius = rect.height() / 2
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.palette().color(QPalette.ColorRole.Midlight))
        painter.drawRoundedRect(rect, radius, radius)
        if self._percent:
            filled = rect.adjusted(0, 0, 0, 0)
            filled.setWidth(max(rect.height(), int(rect.width() * self._percent / 100)))
            painter.setBrush(QColor("#e08a00") if self._percent > 90 else QColor("#2e9d5b"))
            painter.drawRoundedRect(filled, radius, radius)
        painter.end()


class ElidedLabel(QLabel):
    """A one-line label that shortens a text too long for it with '…' instead of clipping it."""

    def __init__(self, text: str = "", parent: QWidget | None = None,
                 elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(text, parent)
        self.elide = elide
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(120)

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw the style sheet's background, then the text elided."""
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_Widget, option, painter, self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), self.elide, rect.width())
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text)
        painter.end()


CAPTIONS_IDLE = "Live captions of what Venus hears appear here while you speak"


class Captions(ElidedLabel):
    """What Venus hears while the user speaks, newest words always in view; it keeps its place in the layout
    when idle, so a caption never re-lays out the conversation above it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(CAPTIONS_IDLE, parent, elide=Qt.TextElideMode.ElideLeft)
        self.setObjectName("captions")
        self.setAccessibleName("Live captions of what you are saying")
        self.live = False

    def show_words(self, words: str) -> None:
        """Show the words heard so far."""
        self.live = True
        self.setText(f"Hearing: “{words.strip() or '…'}”")
        self.setAccessibleDescription(self.text())

    def clear_words(self) -> None:
        """Back to the idle hint."""
        self.live = False
        self.setText(CAPTIONS_IDLE)
        self.setAccessibleDescription("")
