"""Which frames perception looks at: about 1 fps while the user speaks, 0.3 fps when quiet, and on scene changes.

The preview for the UI gets every frame; only the frames chosen here pay for face detection and OCR.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from engine.vision._cv import cv2


class SampleTrigger(StrEnum):
    """Why a frame was handed to perception."""

    SPEAKING = "speaking"
    QUIET = "quiet"
    SCENE_CHANGE = "scene_change"
    REQUEST = "request"


@dataclass(frozen=True)
class SamplingOptions:
    """Perception rates and the scene-change detector."""

    speaking_fps: float = 1.0  # samples per second while the user speaks
    quiet_fps: float = 0.3  # samples per second otherwise
    scene_change_threshold: float = 12.0  # mean absolute grey-level difference (0-255) that forces a sample
    min_scene_gap_s: float = 0.3  # scene-change samples never come closer than this (a waving hand)
    thumbnail_width: int = 64  # frames are compared at this width, which ignores sensor noise

    def __post_init__(self) -> None:
        if self.speaking_fps <= 0 or self.quiet_fps <= 0:
            raise ValueError(f"sample rates must be positive, got {self.speaking_fps} and {self.quiet_fps}")
        if not 0.0 < self.scene_change_threshold <= 255.0:
            raise ValueError(f"scene_change_threshold must be in (0, 255], got {self.scene_change_threshold}")
        if self.min_scene_gap_s < 0:
            raise ValueError(f"min_scene_gap_s must not be negative, got {self.min_scene_gap_s}")
        if self.thumbnail_width < 8:
            raise ValueError(f"thumbnail_width must be at least 8, got {self.thumbnail_width}")


def thumbnail(frame_bgr: np.ndarray, width: int) -> np.ndarray:
    """A small blurred grey copy of a frame, for cheap comparisons."""
    grey = frame_bgr if frame_bgr.ndim == 2 else cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY)
    height = max(1, round(grey.shape[0] * width / grey.shape[1]))
    small = cv2.resize(grey, (width, height), interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0).astype(np.int16)


class FrameSampler:
    """Decides, frame by frame, whether perception should look (not thread-safe: one capture thread calls it)."""

    def __init__(self, options: SamplingOptions | None = None) -> None:
        self.options = options or SamplingOptions()
        self._last_sample_s: float | None = None
        self._reference: np.ndarray | None = None  # thumbnail of the last sampled frame

    def scene_difference(self, frame_bgr: np.ndarray) -> float:
        """Mean grey-level difference between this frame and the last sampled one (255 when there is none)."""
        return self._difference(thumbnail(frame_bgr, self.options.thumbnail_width))

    def _difference(self, small: np.ndarray) -> float:
        if self._reference is None or small.shape != self._reference.shape:
            return 255.0
        return float(np.mean(np.abs(small - self._reference)))

    def consider(self, frame_bgr: np.ndarray, now_s: float, user_speaking: bool) -> SampleTrigger | None:
        """The reason to look at this frame now, or None to skip it."""
        small = thumbnail(frame_bgr, self.options.thumbnail_width)
        since = None if self._last_sample_s is None else now_s - self._last_sample_s
        trigger: SampleTrigger | None = None
        if since is None:
            trigger = SampleTrigger.SCENE_CHANGE  # the first frame is a new scene
        elif (
            since >= self.options.min_scene_gap_s
            and self._difference(small) >= self.options.scene_change_threshold
        ):
            trigger = SampleTrigger.SCENE_CHANGE
        elif user_speaking and since >= 1.0 / self.options.speaking_fps:
            trigger = SampleTrigger.SPEAKING
        elif not user_speaking and since >= 1.0 / self.options.quiet_fps:
            trigger = SampleTrigger.QUIET
        if trigger is not None:
            self._last_sample_s = now_s
            self._reference = small
        return trigger
