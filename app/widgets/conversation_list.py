"""The stored conversations: search, new, rename (F2 or double-click), delete, export as Markdown or JSON."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.timeline.store import ConversationInfo

_ID = Qt.ItemDataRole.UserRole + 1
_INFO = Qt.ItemDataRole.UserRole + 2


def conversation_label(info: ConversationInfo, now: dt.datetime | None = None) -> str:
    """The title shown for a conversation: its title, or when it started."""
    if info.title.strip():
        return info.title.strip()
    now = now or dt.datetime.now(dt.UTC)
    local = info.created.astimezone()
    when = local.strftime("%H:%M") if local.date() == now.astimezone().date() else local.strftime("%d %b %H:%M")
    return f"New chat · {when}"


class ConversationList(QWidget):
    """Lists conversations (most recent first); emits what the user asked for, by conversation id."""

    new_requested = Signal()
    open_requested = Signal(str)  # conversation id
    rename_requested = Signal(str, str)  # id, new title
    delete_requested = Signal(str)  # id
    export_requested = Signal(str, str)  # id, "md" or "json"
    search_requested = Signal(str)  # words to look for in what was said (titles are matched here)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversationList")
        self.current_id = ""
        self._filling = False
        self._said_matches: tuple[str, set[str]] = ("", set())  # (query, ids whose words match it)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)  # search the words once typing pauses
        self._search_timer.timeout.connect(lambda: self.search_requested.emit(self.search.text().strip()))
        self.new_button = QPushButton("+  New chat")
        self.new_button.setObjectName("primaryButton")
        self.new_button.setAccessibleName("New chat (Ctrl+N)")
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.search = QLineEdit()
        self.search.setObjectName("searchBox")
        self.search.setPlaceholderText("Search conversations")
        self.search.setAccessibleName("Search conversations (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setObjectName("conversations")
        self.list.setAccessibleName("Conversations")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.DoubleClicked)
        self.empty = QLabel("No saved conversations yet")
        self.empty.setObjectName("mutedText")
        self.empty.setWordWrap(True)
        self.rename_button = self._tool("Rename", "Rename the selected conversation (F2)")
        self.delete_button = self._tool("Delete", "Delete the selected conversation")
        self.export_button = self._tool("Export", "Export the selected conversation as Markdown or JSON")
        export_menu = QMenu(self.export_button)
        self.export_markdown_action = export_menu.addAction("As Markdown…")
        self.export_json_action = export_menu.addAction("As JSON…")
        self.export_button.setMenu(export_menu)
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)

        actions = QHBoxLayout()
        actions.setSpacing(4)
        for button in (self.rename_button, self.delete_button, self.export_button):
            actions.addWidget(button)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addLayout(actions)

        self.new_button.clicked.connect(self.new_requested)
        self.search.textChanged.connect(self._filter)
        self.search.textChanged.connect(lambda text: self._search_timer.start() if text.strip() else None)
        self.list.itemActivated.connect(lambda item: self.open_requested.emit(item.data(_ID)))
        self.list.itemClicked.connect(lambda item: self.open_requested.emit(item.data(_ID)))
        self.list.itemChanged.connect(self._on_item_changed)
        self.rename_button.clicked.connect(self.rename_selected)
        self.delete_button.clicked.connect(lambda: self._emit_selected(self.delete_requested))
        self.export_markdown_action.triggered.connect(lambda: self._export("md"))
        self.export_json_action.triggered.connect(lambda: self._export("json"))

    def _tool(self, text: str, accessible: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setAccessibleName(accessible)
        button.setToolTip(accessible)
        return button

    def set_conversations(self, conversations: list[ConversationInfo], current_id: str) -> None:
        """Show `conversations`, select the one in use, and keep the search filter."""
        self._filling = True
        self.current_id = current_id
        self.list.clear()
        for info in conversations:
            item = QListWidgetItem(conversation_label(info))
            item.setData(_ID, info.id)
            item.setData(_INFO, info)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            item.setToolTip(f"Started {info.created.astimezone():%d %b %Y %H:%M} · {info.event_count} events")
            self.list.addItem(item)
            if info.id == current_id:
                item.setSelected(True)
                self.list.setCurrentItem(item)
        self._filling = False
        self.empty.setVisible(not conversations)
        self._filter(self.search.text())

    def ids(self, visible_only: bool = False) -> list[str]:
        """Conversation ids in list order (only those the search lets through, when asked)."""
        items = [self.list.item(i) for i in range(self.list.count())]
        return [item.data(_ID) for item in items if not (visible_only and item.isHidden())]

    def title_of(self, conversation_id: str) -> str:
        """The label shown for a conversation."""
        for i in range(self.list.count()):
            if self.list.item(i).data(_ID) == conversation_id:
                return self.list.item(i).text()
        return ""

    def selected_id(self) -> str:
        """The selected conversation's id, else the one in use."""
        item = self.list.currentItem()
        return item.data(_ID) if item is not None else self.current_id

    def rename_selected(self) -> None:
        """Start editing the selected conversation's title in place."""
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        info: ConversationInfo = item.data(_INFO)
        title = item.text().strip()
        if info is not None and title and title != conversation_label(info):
            self.rename_requested.emit(info.id, title)

    def _emit_selected(self, signal: Signal) -> None:
        conversation_id = self.selected_id()
        if conversation_id:
            signal.emit(conversation_id)

    def _export(self, fmt: str) -> None:
        conversation_id = self.selected_id()
        if conversation_id:
            self.export_requested.emit(conversation_id, fmt)

    def show_search_matches(self, query: str, ids: list[str]) -> None:
        """Conversations whose words (not only title) match `query`, found off the GUI thread."""
        self._said_matches = (query, set(ids))
        self._filter(self.search.text())

    def _filter(self, text: str) -> None:
        words = text.lower().split()
        query, said = self._said_matches
        said = said if query == text.strip() else set()
        for i in range(self.list.count()):
            item = self.list.item(i)
            titled = all(w in item.text().lower() for w in words)
            item.setHidden(not (titled or item.data(_ID) in said))
