"""The conversation: utterances painted as bubbles (the assistant's as Markdown), each with a Copy link;
delegated tasks appear as one line here and as cards in the tasks panel."""

from __future__ import annotations

import html
from collections import OrderedDict

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from app.timeline_model import ConversationModel, Role, Row, RowKind, tool_label

_MARGIN = 6  # around each bubble
_PADDING = 10  # inside each bubble
_BUBBLE_SHARE = 0.8  # widest bubble as a share of the view
_COPY = "Copy"
_LABEL_GAP = 16  # between the speaker's name and the Copy link
_CACHE = 512  # laid-out documents kept
# GitHub Markdown without raw HTML: an answer's "<img src=...>" or "<h1>" is shown as the text it is
_MARKDOWN = QTextDocument.MarkdownFeature.MarkdownDialectGitHub | QTextDocument.MarkdownFeature.MarkdownNoHTML


def speaker_label(row: Row, assistant_name: str = "Venus") -> str:
    """Who said a user or assistant row, as its bubble's first line shows it: "You (typed)", "Venus"."""
    who = "You" if row.kind == RowKind.USER else assistant_name
    return who + " (typed)" if row.kind == RowKind.USER and row.typed else who


def row_html(row: Row, assistant_name: str = "Venus") -> str:
    """Rich text for rows that are not Markdown: speaker, text, and for a cut answer the unheard part struck."""
    if row.kind == RowKind.NOTICE:
        return f"<i>{html.escape(row.text)}</i>"
    if row.kind == RowKind.TASK:
        return f"⚙ <b>{html.escape(tool_label(row.text))}</b> — {html.escape(row.status or str(row.task_state))}"
    who = speaker_label(row, assistant_name)
    if row.interrupted:
        body = html.escape(row.heard_text)
        if row.unheard_text.strip():
            body += f" <span style='color:#8a8a8a; text-decoration:line-through'>{html.escape(row.unheard_text.strip())}</span>"
        body += " <b>— interrupted</b>"
    else:
        body = html.escape(row.text) + (" ▍" if row.streaming else "")
    return f"<b>{html.escape(who)}</b><br>{body}"


def row_is_markdown(row: Row) -> bool:
    """An assistant answer that was not cut is shown as Markdown."""
    return row.kind == RowKind.ASSISTANT and not row.interrupted


def copy_text(row: Row) -> str:
    """What the Copy link puts on the clipboard: the words as said (Markdown source for an answer)."""
    if row.kind == RowKind.ASSISTANT and row.interrupted:
        return row.heard_text
    return row.text


class UtteranceDelegate(QStyledItemDelegate):
    """Paints bubbles, notices and task lines; a click on a bubble's Copy link copies that message."""

    def __init__(self, view: ConversationView) -> None:
        super().__init__(view)
        self._view = view
        self._docs: OrderedDict[tuple, QTextDocument] = OrderedDict()
        self._label_widths: dict[tuple, int] = {}  # (font, speaker label) -> width in bold: geometry runs per paint

    def _document(self, row: Row, width: int) -> QTextDocument:
        key = (row.kind, row.key, row.text, row.heard_text, row.interrupted, row.streaming, row.status, width,
               self._view.assistant_name, self._view.font().pointSizeF())
        doc = self._docs.get(key)
        if doc is not None:
            self._docs.move_to_end(key)
            return doc
        doc = QTextDocument()
        doc.setDefaultFont(self._view.font())
        doc.setDocumentMargin(0)
        if row_is_markdown(row):
            doc.setMarkdown(f"**{self._view.assistant_name}**\n\n{row.text}" + (" ▍" if row.streaming else ""), _MARKDOWN)
        else:
            doc.setHtml(row_html(row, self._view.assistant_name))
        doc.setTextWidth(max(40, width))
        self._docs[key] = doc
        if len(self._docs) > _CACHE:
            self._docs.popitem(last=False)
        return doc

    def _bubble_width(self) -> int:
        return int(self._view.viewport().width() * _BUBBLE_SHARE) - 2 * _PADDING

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """Height of the bubble's laid-out text."""
        row: Row = index.data(Role.ROW)
        doc = self._document(row, self._bubble_width())
        return QSize(self._view.viewport().width(), int(doc.size().height()) + 2 * (_PADDING + _MARGIN))

    def geometry(self, row: Row, rect: QRect) -> tuple[QRectF, QRectF]:
        """The bubble's rectangle and its Copy link's, for a row drawn in `rect`."""
        doc = self._document(row, self._bubble_width())
        copy_w = self._view.fontMetrics().horizontalAdvance(_COPY) + 12
        text_w = doc.idealWidth()
        if row.kind in (RowKind.USER, RowKind.ASSISTANT):
            # the first line holds the speaker (bold) and the Copy link, with a gap: "You (typed)" ran into "Copy"
            text_w = max(text_w, self._label_width(speaker_label(row, self._view.assistant_name)) + _LABEL_GAP + copy_w)
        bubble_w = text_w + 2 * _PADDING
        inner = QRectF(rect.adjusted(_MARGIN, _MARGIN, -_MARGIN, -_MARGIN))
        if row.kind == RowKind.USER:
            left = inner.right() - bubble_w
        elif row.kind == RowKind.NOTICE:
            left = inner.left() + (inner.width() - bubble_w) / 2
        else:
            left = inner.left()
        bubble = QRectF(left, inner.top(), bubble_w, doc.size().height() + 2 * _PADDING)
        line = self._view.fontMetrics().height()
        copy = QRectF(bubble.right() - _PADDING - copy_w, bubble.top() + _PADDING, copy_w, line)
        return bubble, copy

    def _label_width(self, label: str) -> int:
        key = (self._view.font().key(), label)
        width = self._label_widths.get(key)
        if width is None:
            bold = QFont(self._view.font())
            bold.setBold(True)
            width = self._label_widths[key] = QFontMetrics(bold).horizontalAdvance(label)
        return width

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        """Draw the bubble, its text and its Copy link."""
        row: Row = index.data(Role.ROW)
        if row is None:
            return
        palette = option.palette
        doc = self._document(row, self._bubble_width())
        bubble, copy = self.geometry(row, option.rect)
        if row.kind == RowKind.USER:
            fill = palette.color(QPalette.ColorRole.Highlight)
            fill.setAlpha(48)
        elif row.kind == RowKind.ASSISTANT:
            fill = palette.color(QPalette.ColorRole.AlternateBase)
        elif row.kind == RowKind.TASK:
            fill = palette.color(QPalette.ColorRole.Base)
        else:
            fill = QColor(0, 0, 0, 0)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.setPen(palette.color(QPalette.ColorRole.Highlight))
        elif row.kind == RowKind.TASK:
            painter.setPen(palette.color(QPalette.ColorRole.Mid))
        else:
            painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        painter.drawRoundedRect(bubble, 12, 12)
        if row.kind in (RowKind.USER, RowKind.ASSISTANT) and not row.streaming:
            painter.setPen(palette.color(QPalette.ColorRole.Link))
            painter.drawText(copy, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, _COPY)
        painter.translate(bubble.left() + _PADDING, bubble.top() + _PADDING)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, palette.color(QPalette.ColorRole.Text))
        if row.kind in (RowKind.NOTICE, RowKind.TASK):
            context.palette.setColor(QPalette.ColorRole.Text, palette.color(QPalette.ColorRole.PlaceholderText))
        doc.documentLayout().draw(painter, context)
        painter.restore()

    def editorEvent(self, event: QEvent, model, option: QStyleOptionViewItem,
                    index: QModelIndex | QPersistentModelIndex) -> bool:
        """A click on the Copy link copies the message."""
        if event.type() == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent):
            row: Row = index.data(Role.ROW)
            if row is not None and row.kind in (RowKind.USER, RowKind.ASSISTANT) and not row.streaming:
                _bubble, copy = self.geometry(row, option.rect)
                if copy.contains(event.position()):
                    self._view.copy_row(index.row())
                    return True
        return super().editorEvent(event, model, option, index)


class ConversationView(QListView):
    """The timeline of the conversation; Copy links, Ctrl+C and the context menu copy a message."""

    copied = Signal(str)  # the text put on the clipboard

    def __init__(self, model: ConversationModel, parent: QWidget | None = None, assistant_name: str = "Venus") -> None:
        super().__init__(parent)
        self.assistant_name = assistant_name
        self._heights: dict[str, int] = {}  # row key -> last laid-out height
        self.setObjectName("conversation")
        self.setAccessibleName("Conversation")
        self.setAccessibleDescription("What you and the assistant said; each message has a Copy link")
        self.setModel(model)
        self._delegate = UtteranceDelegate(self)
        self.setItemDelegate(self._delegate)
        self.setUniformItemSizes(False)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setWordWrap(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.dataChanged.connect(self._on_data_changed)
        model.rowsRemoved.connect(lambda *_: self.scheduleDelayedItemsLayout())
        model.modelReset.connect(self._heights.clear)

    @property
    def delegate(self) -> UtteranceDelegate:
        """The painter of the rows."""
        return self._delegate

    def copy_row(self, position: int) -> str:
        """Put a message on the clipboard; returns the text."""
        row: Row = self.model().index(position, 0).data(Role.ROW)
        text = copy_text(row)
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(text)
        return text

    def keyPressEvent(self, event) -> None:
        """Ctrl+C copies the selected message."""
        if event.matches(QKeySequence.StandardKey.Copy) and self.currentIndex().isValid():
            self.copy_row(self.currentIndex().row())
            return
        super().keyPressEvent(event)

    def _context_menu(self, point) -> None:
        index = self.indexAt(point)
        if not index.isValid():
            return
        menu = QMenu(self)
        menu.addAction("Copy message", lambda: self.copy_row(index.row()))
        menu.exec(self.viewport().mapToGlobal(point))

    def _on_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        bar = self.verticalScrollBar()
        if bar.value() >= bar.maximum() - 4:
            self.scrollToBottom()

    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int] = ()) -> None:
        for position in range(top_left.row(), bottom_right.row() + 1):
            index = self.model().index(position, 0)
            row: Row = index.data(Role.ROW)
            height = self._delegate.sizeHint(QStyleOptionViewItem(), index).height()
            if self._heights.get(row.key) != height:  # re-layout only when a row grew or shrank
                self._heights[row.key] = height
                self._delegate.sizeHintChanged.emit(index)
        bar = self.verticalScrollBar()
        if bar.value() >= bar.maximum() - 40:
            self.scrollToBottom()
