"""Widgets of the main window."""

from app.widgets.camera_preview import CameraPreview
from app.widgets.conversation_list import ConversationList
from app.widgets.conversation_view import ConversationView, UtteranceDelegate, row_html
from app.widgets.indicators import LevelMeter, StateIndicator, dbfs_to_percent
from app.widgets.task_card import TaskCard
from app.widgets.tasks_panel import TaskGroup, TasksPanel

__all__ = [
    "CameraPreview", "ConversationList", "ConversationView", "LevelMeter", "StateIndicator", "TaskCard",
    "TaskGroup", "TasksPanel", "UtteranceDelegate", "dbfs_to_percent", "row_html",
]
