"""The webcam preview: an on/off switch, and only while on, the latest frame and an unmistakable mark."""

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
        self.off_label = QLabel("Camera off")
        self.off_label.setObjectName("mutedText")
        self.on_mark = QLabel("<span style='color:#d64545'>●</span> Camera on")
        self.on_mark.setObjectName("cameraOnMark")
        self.on_mark.setAccessibleName("Camera is on")
        self.switch = QPushButton("Turn camera on")
        self.switch.setCheckable(True)
        self.switch.setAccessibleName("Camera on or off")
        self.switch.toggled.connect(self._on_switch)
        top = QHBoxLayout()
        top.addWidget(self.on_mark)
        top.addWidget(self.off_label)
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
        self.off_label.setVisible(not on)
        self.image.setVisible(on)
        if on:
            self.image.setText("Waiting for the camera…")
        else:
            self._show_off()
        self.toggled.emit(on)

    def _show_off(self) -> None:
        # the preview takes no room while the camera is off
        self.on_mark.setVisible(False)
        self.off_label.setVisible(True)
        self.image.clear()
        self.image.setVisible(False)

    def show_frame(self, image: QImage) -> None:
        """Show a frame (ignored while the switch is off, so a late frame never reappears)."""
        if not self.is_on:
            return
        pixmap = QPixmap.fromImage(image).scaled(
            self.image.size(), Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation
        )
        self.image.setPixmap(pixmap)
        self.frames_shown += 1
