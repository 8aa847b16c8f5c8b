"""The push-to-talk button: hold it (or F9) to talk, or click it once to talk until the next click."""

from __future__ import annotations

import time

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton, QWidget

CLICK_S = 0.35  # a press shorter than this is a click: it keeps listening until the next click
IDLE_TEXT = "Push to talk"


class PushToTalkButton(QPushButton):
    """Emits `talking(True)` when the user starts talking and `talking(False)` when they are done; shows which."""

    talking = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(IDLE_TEXT, parent)
        name = "Push to talk: hold, or click to talk until the next click (F9)"
        self.setAccessibleName(name)
        self.setToolTip(name)
        self.on = False
        self.latched = False  # started by a click: the next click ends it
        self._down_at = 0.0
        self.pressed.connect(self._pressed)
        self.released.connect(self._released)

    def set_talking(self, on: bool, *, latched: bool = False) -> None:
        """Start or end talking from code (the F9 key); the button shows it."""
        self.latched = latched and on
        if on == self.on:
            self._show()
            return
        self.on = on
        self._show()
        self.talking.emit(on)

    def _show(self) -> None:
        self.setDown(self.on)
        self.setText("Talking… (click to finish)" if self.on and self.latched
                     else "Talking… release to finish" if self.on else IDLE_TEXT)

    def _pressed(self) -> None:
        self._down_at = time.monotonic()
        if not self.latched:
            self.set_talking(True)

    def _released(self) -> None:
        if self.latched:  # the second click ends a clicked push-to-talk
            self.set_talking(False)
        elif time.monotonic() - self._down_at < CLICK_S:  # a click: keep listening until the next
            self.set_talking(True, latched=True)
        else:
            self.set_talking(False)
