"""Imports OpenCV without letting it redirect Qt: a non-headless OpenCV wheel sets QT_QPA_* on import."""

from __future__ import annotations

import os

_QT_VARIABLES = ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR")
_before = {name: os.environ.get(name) for name in _QT_VARIABLES}

import cv2  # noqa: E402 - the environment must be captured before this import

# opencv-python (pulled in by rapidocr) points Qt at its own bundled Qt5 plugins; PySide6 must not see that.
for _name, _value in _before.items():
    if _value is None:
        os.environ.pop(_name, None)
    else:
        os.environ[_name] = _value

cv2.setNumThreads(1)  # the vision worker shares two cores with ASR, the LLM and TTS

__all__ = ["cv2"]
