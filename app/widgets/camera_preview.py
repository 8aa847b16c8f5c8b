"""The webcam preview: the latest frame, an on/off switch and an unmistakable 'camera on' mark."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class CameraPreview(QWidget):
    """Shows frames while on; `toggled(bool)` asks the controller to switch the camera."""

    toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cameraPreview")
        self.frames_shown = 0
        self.image = QLabel("Camera off")
        self.image.setObjectName("cameraImage")
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image.setMinimumSize(240, 180)
        self.image.setAccessibleName("Camera preview")
        self.on_mark = QLabel("<span style='color:#d32f2f'>●</span> Camera on")
        self.on_mark.setObjectName("cameraOnMark")
        self.on_mark.setAccessibleName("Camera is on")
        self.switch = QPushButton("Turn camera on")
        self.switch.setCheckable(True)
        self.switch.setAccessibleName("Camera on or off")
        self.switch.toggled.connect(self._on_switch)
        top = QHBoxLayout()
        top.addWidget(self.on_mark)
        top.addStretch(1)
        top.addWidget(self.switch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.image, 1)
        self._show_off()

    @property
    def is_on(self) -> bool:
        """Whether the camera is switched on."""
        return self.switch.isChecked()

    def set_on(self, on: bool) -> None:
        """Switch from code (e.g. settings); emits `toggled` like a click does."""
        self.switch.setChecked(on)

    def _on_switch(self, on: bool) -> None:
        self.switch.setText("Turn camera off" if on else "Turn camera on")
        self.on_mark.setVisible(on)
        if not on:
            self._show_off()
        self.toggled.emit(on)

    def _show_off(self) -> None:
        self.on_mark.setVisible(False)
        self.image.clear()
        self.image.setText("Camera off")

    def show_frame(self, image: QImage) -> None:
        """Show a frame (ignored while the switch is off, so a late frame never reappears)."""
        if not self.is_on:
            return
        pixmap = QPixmap.fromImage(image).scaled(
            self.image.size(), Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation
        )
        self.image.setPixmap(pixmap)
        self.frames_shown += 1
