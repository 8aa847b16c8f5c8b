"""Frame sources: a webcam through OpenCV, or a video file played at its own frame rate (tests, `--video`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.errors import CameraError
from engine.vision._cv import cv2


class FrameSource(Protocol):
    """Something that yields BGR frames; `read` returns None when the source is lost or has ended."""

    name: str  # shown in notices: the device index, or the file path
    ended: bool  # True once a file has played to its end (a normal stop, unlike a lost camera)

    def open(self) -> None:
        """Start delivering frames; raises CameraError naming the device and the fix."""
        ...

    def read(self) -> np.ndarray | None:
        """The next frame (blocking at the source's rate), or None when lost or ended."""
        ...

    def close(self) -> None:
        """Release the device; safe to call twice."""
        ...


class OpenCVCamera:
    """A webcam (index) or stream URL that OpenCV can open."""

    def __init__(self, device: int | str = 0, width: int = 640, height: int = 480) -> None:
        self.device = device
        self.name = f"camera {device}"
        self.ended = False
        self._size = (width, height)
        self._capture: cv2.VideoCapture | None = None

    def open(self) -> None:
        """Open the device at the requested size."""
        capture = cv2.VideoCapture(self.device)
        if not capture.isOpened():
            capture.release()
            raise CameraError(
                f"{self.name} could not be opened",
                fix="check that it is connected and not used by another program, or pick another camera in settings",
            )
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, self._size[0])
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self._size[1])
        self._capture = capture

    def read(self) -> np.ndarray | None:
        """The next frame, or None when the camera stopped delivering."""
        if self._capture is None:
            return None
        ok, frame = self._capture.read()
        return frame if ok and frame is not None else None

    def close(self) -> None:
        """Release the device."""
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class VideoFileCamera:
    """A video file played like a camera: frames come at the file's frame rate (times `speed`)."""

    def __init__(self, path: str | Path, *, speed: float = 1.0, loop: bool = False) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self.path = Path(path)
        self.name = str(self.path)
        self.ended = False
        self.fps = 0.0
        self._speed = speed
        self._loop = loop
        self._capture: cv2.VideoCapture | None = None
        self._start_s = 0.0
        self._index = 0

    def open(self) -> None:
        """Open the file; raises CameraError when it is missing or not a video OpenCV can decode."""
        if not self.path.is_file():
            raise CameraError(
                f"video file {self.path} does not exist", fix="check the path given to --video or in settings"
            )
        capture = cv2.VideoCapture(str(self.path))
        if not capture.isOpened():
            capture.release()
            raise CameraError(
                f"{self.path} is not a video OpenCV can decode", fix="convert it to MP4 (H.264) or MJPG AVI"
            )
        fps = capture.get(cv2.CAP_PROP_FPS)
        self.fps = fps if fps and fps > 0 else 25.0
        self._capture = capture
        self._start_s = time.monotonic()
        self._index = 0
        self.ended = False

    def read(self) -> np.ndarray | None:
        """The next frame, no earlier than its time in the file; None at the end."""
        if self._capture is None:
            return None
        ok, frame = self._capture.read()
        if not ok and self._loop:
            self._capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, frame = self._capture.read()
        if not ok or frame is None:
            self.ended = True
            return None
        due = self._start_s + self._index / (self.fps * self._speed)
        self._index += 1
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        return frame

    def close(self) -> None:
        """Release the file."""
        if self._capture is not None:
            self._capture.release()
            self._capture = None


def source_for_device(device: int | str) -> FrameSource:
    """A file-backed camera for a path to an existing file, otherwise a live camera (index or URL)."""
    if isinstance(device, str):
        if device.isdigit():
            return OpenCVCamera(int(device))
        if Path(device).expanduser().is_file():
            return VideoFileCamera(Path(device).expanduser())
    return OpenCVCamera(device)
