"""Imports OpenCV without letting it redirect Qt: a non-headless OpenCV wheel sets QT_QPA_* on import."""

from __future__ import annotations

import os

import cv2

# A non-headless opencv-python (if some other package pulls it in) points Qt at its own bundled Qt5 plugins; PySide6 must not see that.
# Whoever imported cv2 first, drop the variables when they point inside OpenCV's package folder.
_CV2_DIR = os.path.dirname(os.path.abspath(cv2.__file__))
for _name in ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR"):
    if os.environ.get(_name, "").startswith(_CV2_DIR):
        del os.environ[_name]

cv2.setNumThreads(1)  # the vision worker shares two cores with ASR, the LLM and TTS

__all__ = ["cv2"]
