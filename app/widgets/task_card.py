"""A delegated task as a card: tool and exact arguments, live progress, status, result, and its buttons."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.timeline_model import Row, TaskState, tool_label

_FINISHED = {TaskState.DONE, TaskState.FAILED, TaskState.CANCELLED, TaskState.DENIED}


class TaskCard(QFrame):
    """Shows one task row; emits the user's cancel or confirm/deny with the task id."""

    cancel_requested = Signal(str)  # task id
    confirmation_given = Signal(str, bool)  # task id, approved

    def __init__(self, row: Row, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("taskCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.task_id = row.key
        self.title = QLabel()
        self.title.setObjectName("taskTitle")
        self.arguments = QLabel()
        self.arguments.setObjectName("taskArguments")
        self.arguments.setWordWrap(True)
        self.arguments.setTextFormat(Qt.TextFormat.PlainText)
        self.prompt = QLabel()
        self.prompt.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setTextVisible(False)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cancel_button = QPushButton("Cancel")
        self.approve_button = QPushButton("Approve")
        self.deny_button = QPushButton("Deny")
        self.cancel_button.clicked.connect(lambda: self.cancel_requested.emit(self.task_id))
        self.approve_button.clicked.connect(lambda: self.confirmation_given.emit(self.task_id, True))
        self.deny_button.clicked.connect(lambda: self.confirmation_given.emit(self.task_id, False))

        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        buttons.addStretch(1)
        for button in (self.approve_button, self.deny_button, self.cancel_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(4)
        for widget in (self.title, self.arguments, self.prompt, self.progress, self.status, self.result):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self.update_row(row)

    def update_row(self, row: Row) -> None:
        """Show the row's current state."""
        self.title.setText(tool_label(row.text))
        self.arguments.setText(row.arguments_text)
        # QProgressBar repaints synchronously on setValue; with updates paused the repaint is queued instead
        self.progress.setUpdatesEnabled(False)
        self.progress.setValue(round(row.progress))
        self.progress.setUpdatesEnabled(True)
        self.status.setText(row.status or str(row.task_state))
        self.result.setText(row.result)
        self.result.setVisible(bool(row.result))
        waiting = row.task_state == TaskState.WAITING_CONFIRMATION
        self.prompt.setText(row.prompt)
        self.prompt.setVisible(waiting and bool(row.prompt))
        self.approve_button.setVisible(waiting)
        self.deny_button.setVisible(waiting)
        self.cancel_button.setVisible(row.task_state not in _FINISHED)
        name = tool_label(row.text)
        self.setAccessibleName(f"Task {name}, {self.status.text()}")
        self.progress.setAccessibleName(f"Progress of task {name}")
        self.cancel_button.setAccessibleName(f"Cancel task {name}")
        self.approve_button.setAccessibleName(f"Approve {name} with the arguments shown")
        self.deny_button.setAccessibleName(f"Deny {name}")
        self.arguments.setAccessibleName(f"Arguments of task {name}")
        self.result.setAccessibleName(f"Result of task {name}")
