"""Background tasks beside the conversation, in three groups: running, waiting for you, done."""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.timeline_model import ConversationModel, Role, Row, RowKind, TaskState
from app.widgets.task_card import TaskCard

DONE_SHOWN = 12  # finished cards kept on the panel; older ones stay in the conversation and its export


class TaskGroup(StrEnum):
    """Where a task card sits in the panel."""

    RUNNING = "Running"
    WAITING = "Waiting for you"
    DONE = "Done"


def task_group(state: TaskState | None) -> TaskGroup:
    """The panel group of a task in `state`."""
    if state == TaskState.WAITING_CONFIRMATION:
        return TaskGroup.WAITING
    if state in (TaskState.QUEUED, TaskState.RUNNING, None):
        return TaskGroup.RUNNING
    return TaskGroup.DONE


class _Section(QWidget):
    def __init__(self, group: TaskGroup) -> None:
        super().__init__()
        self.group = group
        self.header = QLabel()
        self.header.setObjectName("sectionHeader")
        self.empty = QLabel("Nothing waiting" if group == TaskGroup.WAITING else "None yet")
        self.empty.setObjectName("mutedText")
        self.cards = QVBoxLayout()
        self.cards.setContentsMargins(0, 0, 0, 0)
        self.cards.setSpacing(8)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.header)
        layout.addWidget(self.empty)
        layout.addLayout(self.cards)
        self.refresh()

    def count(self) -> int:
        return self.cards.count()

    def refresh(self) -> None:
        self.header.setText(f"{self.group.value} · {self.count()}")
        self.header.setAccessibleName(f"{self.group.value}: {self.count()} tasks")
        self.empty.setVisible(self.count() == 0)


class TasksPanel(QScrollArea):
    """Task cards grouped by state, kept in step with the conversation model's task rows."""

    cancel_requested = Signal(str)  # task id
    confirmation_given = Signal(str, bool)  # task id, approved

    def __init__(self, model: ConversationModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tasksPanel")
        self.setAccessibleName("Background tasks")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._model = model
        self._cards: dict[str, TaskCard] = {}
        self.sections = {group: _Section(group) for group in TaskGroup}
        body = QWidget()
        body.setObjectName("tasksBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(16)
        for group in (TaskGroup.WAITING, TaskGroup.RUNNING, TaskGroup.DONE):
            layout.addWidget(self.sections[group])
        layout.addStretch(1)
        self.setWidget(body)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.dataChanged.connect(self._on_data_changed)
        model.modelReset.connect(self._rebuild)

    def card(self, task_id: str) -> TaskCard | None:
        """The card of a task, if it is on the panel."""
        return self._cards.get(task_id)

    def group_of(self, task_id: str) -> TaskGroup | None:
        """The group a task's card sits in now."""
        card = self._cards.get(task_id)
        return TaskGroup(card.property("taskGroup")) if card is not None else None

    def task_ids(self, group: TaskGroup) -> list[str]:
        """Task ids in `group`, newest first."""
        section = self.sections[group]
        return [section.cards.itemAt(i).widget().task_id for i in range(section.count())]

    def _place(self, row: Row) -> None:
        card = self._cards.get(row.key)
        if card is None:
            card = TaskCard(row)
            card.cancel_requested.connect(self.cancel_requested)
            card.confirmation_given.connect(self.confirmation_given)
            self._cards[row.key] = card
        else:
            card.update_row(row)
        group = task_group(row.task_state)
        if card.property("taskGroup") == group.value:
            return
        old = card.property("taskGroup")
        if old:
            self.sections[TaskGroup(old)].cards.removeWidget(card)
            self.sections[TaskGroup(old)].refresh()
        card.setProperty("taskGroup", group.value)
        self.sections[group].cards.insertWidget(0, card)  # newest on top
        if group == TaskGroup.DONE:
            self._trim_done()
        self.sections[group].refresh()

    def _trim_done(self) -> None:
        cards = self.sections[TaskGroup.DONE].cards
        while cards.count() > DONE_SHOWN:
            old = cards.takeAt(cards.count() - 1).widget()
            self._cards.pop(old.task_id, None)
            old.setParent(None)
            old.deleteLater()

    def _on_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        for position in range(first, last + 1):
            row: Row = self._model.index(position, 0).data(Role.ROW)
            if row.kind == RowKind.TASK:
                self._place(row)

    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int] = ()) -> None:
        for position in range(top_left.row(), bottom_right.row() + 1):
            row: Row = self._model.index(position, 0).data(Role.ROW)
            if row.kind == RowKind.TASK:
                self._place(row)

    def _rebuild(self) -> None:
        for card in self._cards.values():
            card.setParent(None)
            card.deleteLater()
        self._cards.clear()
        for section in self.sections.values():
            section.refresh()
        for row in self._model.rows():
            if row.kind == RowKind.TASK:
                self._place(row)
