"""The conversation list: utterances painted as bubbles, delegated tasks as live cards with real buttons."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QColor, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from app.timeline_model import ConversationModel, Role, Row, RowKind
from app.widgets.task_card import TaskCard

_MARGIN = 6  # around each bubble
_PADDING = 8  # inside each bubble
_BUBBLE_SHARE = 0.78  # widest bubble as a share of the view


def row_html(row: Row, assistant_name: str = "Venus") -> str:
    """The bubble's rich text: speaker, text, and for a cut answer the unheard part struck through."""
    if row.kind == RowKind.NOTICE:
        return f"<i>{html.escape(row.text)}</i>"
    who = "You" if row.kind == RowKind.USER else assistant_name
    if row.kind == RowKind.USER and row.typed:
        who += " (typed)"
    if row.interrupted:
        body = html.escape(row.heard_text)
        if row.unheard_text.strip():
            body += f" <span style='color:#888888; text-decoration:line-through'>{html.escape(row.unheard_text.strip())}</span>"
        body += " <b>— interrupted</b>"
    else:
        body = html.escape(row.text) + (" ▍" if row.streaming else "")
    return f"<b>{html.escape(who)}</b><br>{body}"


class UtteranceDelegate(QStyledItemDelegate):
    """Paints user/assistant bubbles and notices; task rows take their height from their card."""

    def __init__(self, view: ConversationView) -> None:
        super().__init__(view)
        self._view = view
        self._heights: dict[tuple, int] = {}

    def _document(self, row: Row, width: int) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(self._view.font())
        doc.setHtml(row_html(row, self._view.assistant_name))
        doc.setTextWidth(max(40, width))
        return doc

    def _bubble_width(self) -> int:
        return int(self._view.viewport().width() * _BUBBLE_SHARE) - 2 * _PADDING

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """Height of the bubble's laid-out text, or of the task card."""
        row: Row = index.data(Role.ROW)
        width = self._view.viewport().width()
        if row.kind == RowKind.TASK:
            card = self._view.card(row.key)
            height = card.sizeHint().height() if card is not None else 120
            return QSize(width, height + 2 * _MARGIN)
        key = (row.kind, row.key, row.text, row.heard_text, row.interrupted, row.streaming, width)
        if key not in self._heights:
            if len(self._heights) > 4096:
                self._heights.clear()
            doc = self._document(row, self._bubble_width())
            self._heights[key] = int(doc.size().height()) + 2 * (_PADDING + _MARGIN)
        return QSize(width, self._heights[key])

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        """Draw the bubble (tasks are drawn by their card widget)."""
        row: Row = index.data(Role.ROW)
        if row is None or row.kind == RowKind.TASK:
            return
        palette = option.palette
        doc = self._document(row, self._bubble_width())
        text_w, text_h = doc.idealWidth(), doc.size().height()
        bubble_w = text_w + 2 * _PADDING
        rect = option.rect.adjusted(_MARGIN, _MARGIN, -_MARGIN, -_MARGIN)
        if row.kind == RowKind.USER:
            left = rect.right() - bubble_w
            fill = palette.color(QPalette.ColorRole.Highlight)
            fill.setAlpha(60)
        elif row.kind == RowKind.ASSISTANT:
            left = rect.left()
            fill = palette.color(QPalette.ColorRole.AlternateBase)
        else:
            left = rect.left() + (rect.width() - bubble_w) / 2
            fill = QColor(0, 0, 0, 0)
        bubble = QRectF(left, rect.top(), bubble_w, text_h + 2 * _PADDING)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.setPen(palette.color(QPalette.ColorRole.Highlight))
        else:
            painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        painter.drawRoundedRect(bubble, 10, 10)
        painter.translate(bubble.left() + _PADDING, bubble.top() + _PADDING)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, palette.color(QPalette.ColorRole.Text))
        doc.documentLayout().draw(painter, context)
        painter.restore()


class ConversationView(QListView):
    """The timeline of the conversation; cards for tasks forward their buttons as signals."""

    cancel_requested = Signal(str)  # task id
    confirmation_given = Signal(str, bool)  # task id, approved

    def __init__(self, model: ConversationModel, parent: QWidget | None = None, assistant_name: str = "Venus") -> None:
        super().__init__(parent)
        self.assistant_name = assistant_name
        self._cards: dict[str, TaskCard] = {}
        self._heights: dict[str, int] = {}  # row key -> last laid-out height
        self.setObjectName("conversation")
        self.setAccessibleName("Conversation")
        self.setAccessibleDescription("What you and the assistant said, and the tasks running in the background")
        self.setModel(model)
        self._delegate = UtteranceDelegate(self)
        self.setItemDelegate(self._delegate)
        self.setUniformItemSizes(False)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setWordWrap(True)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.dataChanged.connect(self._on_data_changed)
        model.rowsRemoved.connect(lambda *_: self.scheduleDelayedItemsLayout())
        model.modelReset.connect(self._rebuild_cards)

    def card(self, task_id: str) -> TaskCard | None:
        """The card widget of a task, if the task is on the view."""
        return self._cards.get(task_id)

    def _make_card(self, index: QModelIndex) -> None:
        row: Row = index.data(Role.ROW)
        card = TaskCard(row)
        card.cancel_requested.connect(self.cancel_requested)
        card.confirmation_given.connect(self.confirmation_given)
        self._cards[row.key] = card
        self.setIndexWidget(index, card)

    def _rebuild_cards(self) -> None:
        self._cards.clear()
        model = self.model()
        for position in range(model.rowCount()):
            index = model.index(position, 0)
            if index.data(Role.KIND) == RowKind.TASK:
                self._make_card(index)

    def _on_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 4
        for position in range(first, last + 1):
            index = self.model().index(position, 0)
            if index.data(Role.KIND) == RowKind.TASK:
                self._make_card(index)
        if follow:
            self.scrollToBottom()

    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int] = ()) -> None:
        for position in range(top_left.row(), bottom_right.row() + 1):
            index = self.model().index(position, 0)
            row: Row = index.data(Role.ROW)
            if row.kind == RowKind.TASK and row.key in self._cards:
                self._cards[row.key].update_row(row)
            height = self._delegate.sizeHint(QStyleOptionViewItem(), index).height()
            if self._heights.get(row.key) != height:  # re-layout only when a row grew or shrank
                self._heights[row.key] = height
                self._delegate.sizeHintChanged.emit(index)
        bar = self.verticalScrollBar()
        if bar.value() >= bar.maximum() - 40:
            self.scrollToBottom()

    def for_each_card(self, action: Callable[[TaskCard], None]) -> None:
        """Apply `action` to every task card (used by themes and tests)."""
        for card in self._cards.values():
            action(card)
