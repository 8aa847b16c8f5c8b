"""The conversation as a Qt list model: one row per utterance, task card or notice, built from timeline events.

`ConversationModel.apply(event)` folds one event into the rows: tokens stream into their turn's row, an
interruption cuts a row to what the user heard, delegation events move a task card through its states.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from engine.timeline.events import Event, Kind


class RowKind(StrEnum):
    """What a row of the conversation shows."""

    USER = "user"
    ASSISTANT = "assistant"
    TASK = "task"
    NOTICE = "notice"


class TaskState(StrEnum):
    """Where a delegated task card stands."""

    QUEUED = "queued"
    RUNNING = "running"
    WAITING_CONFIRMATION = "waiting_confirmation"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    DENIED = "denied"


class Role(IntEnum):
    """Item data roles beyond DisplayRole (which gives the row's plain text)."""

    ROW = Qt.ItemDataRole.UserRole + 1  # the whole Row dataclass
    KIND = Qt.ItemDataRole.UserRole + 2  # RowKind value
    STREAMING = Qt.ItemDataRole.UserRole + 3  # True while the text is still arriving
    INTERRUPTED = Qt.ItemDataRole.UserRole + 4
    HEARD_TEXT = Qt.ItemDataRole.UserRole + 5
    UNHEARD_TEXT = Qt.ItemDataRole.UserRole + 6
    TASK_ID = Qt.ItemDataRole.UserRole + 7
    TASK_STATE = Qt.ItemDataRole.UserRole + 8
    PROGRESS = Qt.ItemDataRole.UserRole + 9  # 0-100
    STATUS = Qt.ItemDataRole.UserRole + 10
    ARGUMENTS = Qt.ItemDataRole.UserRole + 11  # the exact arguments, pretty JSON
    RESULT = Qt.ItemDataRole.UserRole + 12


@dataclass(frozen=True)
class Row:
    """One row of the conversation; replaced (never mutated) when an event changes it."""

    kind: RowKind
    key: str  # turn id, task id, or a unique id for user speech and notices
    text: str = ""  # what is shown: the utterance, the task's tool, or the notice
    streaming: bool = False  # text still arriving (ASR partials, assistant tokens)
    typed: bool = False  # user text typed rather than spoken
    interrupted: bool = False
    heard_text: str = ""  # for interrupted assistant turns: the part the user heard
    task_state: TaskState | None = None
    progress: float = 0.0
    status: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""  # the confirmation question for 'ask' tools
    result: str = ""  # the task's summary/result, or its error
    level: str = "info"  # for notices

    @property
    def unheard_text(self) -> str:
        """The generated part the user never heard (empty unless interrupted)."""
        if not self.interrupted:
            return ""
        return self.text[len(self.heard_text):] if self.text.startswith(self.heard_text) else self.text

    @property
    def arguments_text(self) -> str:
        """The exact arguments as JSON: on one line when short, indented when long."""
        compact = json.dumps(self.arguments, ensure_ascii=False, sort_keys=True, default=str)
        if len(compact) <= 72:
            return compact
        return json.dumps(self.arguments, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def tool_label(tool: str) -> str:
    """A tool's name as the window shows it: "set_timer" -> "Set timer" (an MCP tool keeps its server's prefix)."""
    words = tool.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _result_text(summary: str, result: Any) -> str:
    if summary:
        return summary
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str) if result is not None else ""


def _role_value(row: Row, role: Role) -> Any:
    if role == Role.KIND:
        return str(row.kind)
    if role == Role.STREAMING:
        return row.streaming
    if role == Role.INTERRUPTED:
        return row.interrupted
    if role == Role.HEARD_TEXT:
        return row.heard_text
    if role == Role.UNHEARD_TEXT:
        return row.unheard_text
    if role == Role.TASK_ID:
        return row.key if row.kind == RowKind.TASK else ""
    if role == Role.TASK_STATE:
        return str(row.task_state) if row.task_state else ""
    if role == Role.PROGRESS:
        return row.progress
    if role == Role.STATUS:
        return row.status
    if role == Role.ARGUMENTS:
        return row.arguments_text
    return row.result  # Role.RESULT


class ConversationModel(QAbstractListModel):
    """A flat list of conversation rows, updated one timeline event at a time."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self._index: dict[tuple[RowKind, str], int] = {}
        self._open_user_key: str | None = None  # the spoken user row still being transcribed
        self._counter = 0

    # ---- Qt model interface ----------------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        """Number of rows (a list model has no children)."""
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The row's data for `role`; None for roles it does not provide."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows) or index.column() != 0:
            return None
        row = self._rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return self._display(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.arguments_text if row.kind == RowKind.TASK else None
        if role == Role.ROW:  # the hot path: the delegate reads whole rows while laying out
            return row
        if role not in Role._value2member_map_:
            return None
        return _role_value(row, Role(role))

    def roleNames(self) -> dict[int, bytes]:
        """Role names (for QML and debugging)."""
        names = dict(super().roleNames())
        names.update({int(r): r.name.lower().encode() for r in Role})
        return names

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        """Rows are selectable (for copy) but not editable."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    # ---- reading -----------------------------------------------------------------------------------------------

    def row(self, position: int) -> Row:
        """The row at `position`."""
        return self._rows[position]

    def rows(self) -> list[Row]:
        """A copy of all rows."""
        return list(self._rows)

    def find(self, kind: RowKind, key: str) -> int | None:
        """Position of the row for (kind, key), or None."""
        return self._index.get((kind, key))

    @staticmethod
    def _display(row: Row) -> str:
        if row.kind == RowKind.ASSISTANT and row.interrupted:
            return row.heard_text
        if row.kind == RowKind.TASK:
            return f"{row.text}: {row.status or row.task_state}"
        return row.text

    # ---- writing -----------------------------------------------------------------------------------------------

    def _append(self, row: Row) -> None:
        position = len(self._rows)
        self.beginInsertRows(QModelIndex(), position, position)
        self._rows.append(row)
        self._index[(row.kind, row.key)] = position
        self.endInsertRows()

    def _replace(self, position: int, **changes: Any) -> None:
        self._rows[position] = dataclasses.replace(self._rows[position], **changes)
        index = self.index(position, 0)
        self.dataChanged.emit(index, index)

    def _next_key(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}-{self._counter}"

    def apply(self, event: Event) -> None:
        """Fold one timeline event into the rows (events that the conversation view does not show are ignored)."""
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            handler(self, event)

    def reset(self, events: list[Event] = ()) -> None:
        """Show another conversation: drop every row, then fold `events`."""
        self.beginResetModel()
        self._rows, self._index, self._open_user_key = [], {}, None
        self.endResetModel()
        self.apply_all(list(events))

    def apply_all(self, events: list[Event]) -> None:
        """Fold many events, e.g. a reopened conversation."""
        for event in events:
            self.apply(event)

    # user speech: partials grow one open row, the final transcript closes it
    def _on_user_speech_start(self, event: Any) -> None:
        if self._open_user_key is None:
            self._open_user_key = self._next_key("speech")
            self._append(Row(RowKind.USER, self._open_user_key, text="…", streaming=True))

    def _on_asr_partial(self, event: Any) -> None:
        self._on_user_speech_start(event)
        self._replace(self._index[(RowKind.USER, self._open_user_key)], text=event.text or "…")

    def _on_asr_final(self, event: Any) -> None:
        self._on_user_speech_start(event)
        position = self._index[(RowKind.USER, self._open_user_key)]
        self._open_user_key = None
        if event.text.strip():
            self._replace(position, text=event.text.strip(), streaming=False)
        else:  # VAD fired but nothing was said: drop the placeholder
            self._remove(position)

    def _remove(self, position: int) -> None:
        self.beginRemoveRows(QModelIndex(), position, position)
        del self._rows[position]
        self._index = {(r.kind, r.key): i for i, r in enumerate(self._rows)}
        self.endRemoveRows()

    def _on_user_text(self, event: Any) -> None:
        self._append(Row(RowKind.USER, self._next_key("typed"), text=event.text, typed=True))

    # assistant turns
    def _assistant_row(self, turn_id: str) -> int:
        position = self.find(RowKind.ASSISTANT, turn_id)
        if position is None:
            self._append(Row(RowKind.ASSISTANT, turn_id, streaming=True))
            position = len(self._rows) - 1
        return position

    def _on_assistant_token(self, event: Any) -> None:
        position = self._assistant_row(event.turn_id)
        self._replace(position, text=self._rows[position].text + event.text, streaming=True)

    def _on_interruption(self, event: Any) -> None:
        position = self._assistant_row(event.turn_id)
        row = self._rows[position]
        text = row.text or (event.heard_text + event.unheard_text)
        self._replace(position, text=text, interrupted=True, heard_text=event.heard_text)

    def _on_assistant_turn_end(self, event: Any) -> None:
        position = self.find(RowKind.ASSISTANT, event.turn_id)
        if position is None and not event.text:
            return  # a silent or delegating turn said nothing
        position = self._assistant_row(event.turn_id)
        interrupted = event.interrupted or self._rows[position].interrupted
        heard = event.heard_text if event.interrupted else self._rows[position].heard_text
        self._replace(
            position, text=event.text or self._rows[position].text, streaming=False,
            interrupted=interrupted, heard_text=heard if interrupted else event.text,
        )

    # delegated tasks
    def _on_dispatched(self, event: Any) -> None:
        if self.find(RowKind.TASK, event.task_id) is None:
            self._append(Row(
                RowKind.TASK, event.task_id, text=event.tool, task_state=TaskState.QUEUED,
                status="queued", arguments=dict(event.arguments),
            ))

    def _task(self, task_id: str, tool: str = "") -> int:
        position = self.find(RowKind.TASK, task_id)
        if position is None:  # progress for a task dispatched before this window opened
            self._append(Row(RowKind.TASK, task_id, text=tool or task_id, task_state=TaskState.RUNNING))
            position = len(self._rows) - 1
        return position

    def _on_progress(self, event: Any) -> None:
        position = self._task(event.task_id)
        state = TaskState.QUEUED if event.state == "queued" else TaskState.RUNNING
        if self._rows[position].task_state == TaskState.WAITING_CONFIRMATION:
            state = TaskState.WAITING_CONFIRMATION
        self._replace(position, progress=max(0.0, min(100.0, event.percent)), status=event.status, task_state=state)

    def _on_confirmation_requested(self, event: Any) -> None:
        position = self._task(event.task_id, event.tool)
        self._replace(
            position, task_state=TaskState.WAITING_CONFIRMATION, arguments=dict(event.arguments),
            prompt=event.prompt, status="waiting for your confirmation",
        )

    def _on_confirmation_answered(self, event: Any) -> None:
        position = self._task(event.task_id)
        if event.approved:
            self._replace(position, task_state=TaskState.RUNNING, status=f"approved ({event.source})")
        else:
            self._replace(position, task_state=TaskState.DENIED, status=f"denied ({event.source})")

    def _on_result(self, event: Any) -> None:
        position = self._task(event.task_id, event.tool)
        self._replace(
            position, task_state=TaskState.DONE, progress=100.0, status="done",
            result=_result_text(event.summary, event.result),
        )

    def _on_failed(self, event: Any) -> None:
        position = self._task(event.task_id, event.tool)
        self._replace(position, task_state=TaskState.FAILED, status=f"failed ({event.code or 'error'})",
                      result=event.error)

    def _on_cancelled(self, event: Any) -> None:
        position = self._task(event.task_id, event.tool)
        self._replace(position, task_state=TaskState.CANCELLED, status="cancelled", result=event.reason)

    # notices
    def _on_notice(self, event: Any) -> None:
        self._append(Row(RowKind.NOTICE, self._next_key("notice"), text=event.text, level=event.level))

    def _on_reminder(self, event: Any) -> None:
        self._append(Row(RowKind.NOTICE, self._next_key("reminder"), text=f"Reminder: {event.text}", level="info"))


_HANDLERS = {
    Kind.USER_SPEECH_START: ConversationModel._on_user_speech_start,
    Kind.ASR_PARTIAL: ConversationModel._on_asr_partial,
    Kind.ASR_FINAL: ConversationModel._on_asr_final,
    Kind.USER_TEXT: ConversationModel._on_user_text,
    Kind.ASSISTANT_TOKEN: ConversationModel._on_assistant_token,
    Kind.INTERRUPTION: ConversationModel._on_interruption,
    Kind.ASSISTANT_TURN_END: ConversationModel._on_assistant_turn_end,
    Kind.DELEGATION_DISPATCHED: ConversationModel._on_dispatched,
    Kind.DELEGATION_PROGRESS: ConversationModel._on_progress,
    Kind.CONFIRMATION_REQUESTED: ConversationModel._on_confirmation_requested,
    Kind.CONFIRMATION_ANSWERED: ConversationModel._on_confirmation_answered,
    Kind.DELEGATION_RESULT: ConversationModel._on_result,
    Kind.DELEGATION_FAILED: ConversationModel._on_failed,
    Kind.DELEGATION_CANCELLED: ConversationModel._on_cancelled,
    Kind.SYSTEM_NOTICE: ConversationModel._on_notice,
    Kind.REMINDER_FIRED: ConversationModel._on_reminder,
}


def row_markdown(row: Row, assistant_name: str = "Venus") -> str:
    """One row as Markdown: what is copied from a message and written by an export."""
    if row.kind == RowKind.NOTICE:
        return f"> {row.text}"
    if row.kind == RowKind.TASK:
        lines = [f"**Task `{row.text}`** — {row.status or row.task_state}", "", f"```json\n{row.arguments_text}\n```"]
        if row.result:
            lines += ["", row.result]
        return "\n".join(lines)
    who = "You" if row.kind == RowKind.USER else assistant_name
    if row.interrupted:
        unheard = row.unheard_text.strip()
        body = row.heard_text + (f" ~~{unheard}~~" if unheard else "") + " *(interrupted)*"
    else:
        body = row.text
    return f"**{who}:** {body}"


def conversation_markdown(events: list[Event], title: str = "", assistant_name: str = "Venus") -> str:
    """A whole conversation as a Markdown document, built from its events the way the window shows it."""
    model = ConversationModel()
    model.apply_all(events)
    parts = [f"# {title or 'Conversation with ' + assistant_name}"]
    parts += [row_markdown(row, assistant_name) for row in model.rows() if not row.streaming or row.text.strip("…")]
    return "\n\n".join(parts) + "\n"
