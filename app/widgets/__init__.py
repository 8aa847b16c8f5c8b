"""Widgets of the main window."""

from app.widgets.camera_preview import CameraPreview
from app.widgets.conversation_view import ConversationView, UtteranceDelegate, row_html
from app.widgets.indicators import LevelMeter, StateIndicator, dbfs_to_percent
from app.widgets.task_card import TaskCard

__all__ = [
    "CameraPreview", "ConversationView", "LevelMeter", "StateIndicator", "TaskCard", "UtteranceDelegate",
    "dbfs_to_percent", "row_html",
]
