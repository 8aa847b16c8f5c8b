"""Venus desktop app and command line: the only package that imports Qt.

The public names below load on first use, so `venus chat` and other headless commands never import Qt.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Bridge": "app.bridge",
    "Controller": "app.controller",
    "ControllerFactory": "app.controller",
    "ConversationModel": "app.timeline_model",
    "FirstRunWizard": "app.wizard",
    "MainWindow": "app.main_window",
    "SessionController": "app.session_controller",
    "SettingsDialog": "app.settings_dialog",
    "TimelineController": "app.controller",
    "Tray": "app.tray",
    "apply_theme": "app.theme",
    "run_app": "app.main_window",
    "session_controller_factory": "app.session_controller",
    "wav_microphone_factory": "app.session_controller",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'app' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
