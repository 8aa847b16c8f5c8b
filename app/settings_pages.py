"""Settings pages that are more than a form: every tool with its permission, allowed folders, API keys."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.secrets import get_secret
from engine.errors import SecretError

PERMISSION_LEVELS = ("allow", "ask", "off")
PERMISSION_CHOICES = (("Allow", "allow"), ("Ask first", "ask"), ("Off", "off"))
MCP_LIST_TIMEOUT_S = 15.0  # the Tools page waits this long for MCP servers to list their tools
API_KEY_PROVIDERS = {"remote-llm": "OpenAI-compatible endpoint", "web-search": "Web search"}


def button(text: str, accessible: str) -> QPushButton:
    """A push button with its accessible name."""
    widget = QPushButton(text)
    widget.setAccessibleName(accessible)
    return widget


class ToolsPage(QWidget):
    """Every tool (built-in and from each MCP server): what it does, its source, whether it works here, and a
    permission dropdown; plus the folders file tools may touch. Only levels that differ from a tool's
    default are saved, and overrides of tools not listed now (a server that is down) are kept."""

    def __init__(self, permissions: dict[str, str], folders: list[str], tools: list[dict[str, Any]] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.overrides = dict(permissions)
        self.rows: list[dict[str, Any]] = []
        self.levels: dict[str, QComboBox] = {}
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Tool", "What it does", "From", "Works here", "Permission"])
        self.table.setAccessibleName("Tools and their permissions")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.table.horizontalHeader()
        header.setMinimumSectionSize(60)
        for column in (0, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column, width in ((3, 110), (4, 150)):  # "No: why" is elided; its tooltip has it all
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, width)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a tool by name, description or server")
        self.search.setAccessibleName("Find a tool")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.filter)
        self.status = QLabel("Looking up the tools…")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Tools status")
        self.folders = QListWidget()
        self.folders.setAccessibleName("Allowed folders")
        self.folders.setMaximumHeight(90)
        self.folders.addItems(folders)
        add_folder, remove_folder = button("Add folder…", "Add an allowed folder"), button("Remove folder", "Remove the selected folder")
        add_folder.clicked.connect(self._choose_folder)
        remove_folder.clicked.connect(lambda: self.folders.takeItem(self.folders.currentRow()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        intro = QLabel("Allow runs a tool at once, Ask first waits for your yes, Off hides it from Venus. "
                       "Changes apply as soon as you save.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addWidget(QLabel("Folders the file tools may read and write:"))
        layout.addWidget(self.folders)
        row = QHBoxLayout()
        row.addWidget(add_folder)
        row.addWidget(remove_folder)
        row.addStretch(1)
        layout.addLayout(row)
        if tools is not None:
            self.show_tools(tools)

    def show_tools(self, rows: list[dict[str, Any]], problem: str = "") -> None:
        """Fill the table from `Harness.describe_tools()` rows; a level chosen meanwhile is kept."""
        chosen = {name: box.currentData() for name, box in self.levels.items()}
        self.rows = rows
        self.levels = {}
        self.table.setRowCount(len(rows))
        for position, row in enumerate(rows):
            name = row["name"]
            what = row["description"].removeprefix(f"[{row['source']}] ").split("\n", 1)[0]  # the source has a column
            cells = [name, what, row["source"],
                     "Yes" if row["available"] else f"No: {row['why']}"]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(row["description"] if column < 2 else text)
                self.table.setItem(position, column, item)
            box = QComboBox()
            loosest = PERMISSION_LEVELS.index(row.get("max", "allow"))  # the shell may ask, never just run
            for label, level in PERMISSION_CHOICES[loosest:]:
                box.addItem(label + (" (default)" if level == row["default"] else ""), level)
            wanted = box.findData(chosen.get(name, self.overrides.get(name, row["level"])))
            box.setCurrentIndex(wanted if wanted >= 0 else 0)
            box.setAccessibleName(f"Permission for {name}")
            self.table.setCellWidget(position, 4, box)
            self.levels[name] = box
        mcp = len({row["source"] for row in rows if row["source"] != "built-in"})
        self.status.setText(problem or f"{len(rows)} tools, {mcp} MCP server(s) answering.")
        self.filter(self.search.text())

    def filter(self, text: str) -> list[str]:
        """Show only the tools whose name, description or source contains `text`; returns their names."""
        words = text.lower().split()
        shown = []
        for position, row in enumerate(self.rows):
            haystack = f"{row['name']} {row['description']} {row['source']}".lower()
            match = all(word in haystack for word in words)
            self.table.setRowHidden(position, not match)
            if match:
                shown.append(row["name"])
        return shown

    def set_level(self, tool: str, level: str) -> None:
        """Choose a tool's permission (as a click on its dropdown would)."""
        box = self.levels[tool]
        box.setCurrentIndex(box.findData(level))

    def add_folder(self, folder: str) -> None:
        """Append an allowed folder."""
        self.folders.addItem(folder)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Allow a folder")
        if folder:
            self.add_folder(folder)

    def values(self) -> tuple[dict[str, str], list[str], list[str]]:
        """(permissions, folders, problems): the levels that differ from each tool's default; missing folders."""
        permissions = {name: level for name, level in self.overrides.items() if name not in self.levels}
        defaults = {row["name"]: row["default"] for row in self.rows}
        for name, box in self.levels.items():
            if box.currentData() != defaults[name] or name in self.overrides:
                permissions[name] = box.currentData()
        folders = [self.folders.item(i).text() for i in range(self.folders.count())]
        problems = [f"harness.allowed_folders: {folder} is not an existing folder; create it or remove it"
                    for folder in folders if not Path(folder).expanduser().is_dir()]
        return permissions, folders, problems


def describe_tools_offline(settings: Any, wait_s: float = MCP_LIST_TIMEOUT_S,
                           notices: list[str] | None = None) -> list[dict[str, Any]]:
    """The tools a session with these harness settings would have, from a throwaway Harness (as `venus tools`
    does): its task store is a scratch file, so nobody's unfinished work is resumed or reported. The harness's
    notices (a server that failed to start, and why) are added to `notices`."""
    from harness import Harness

    def emit(event: Any) -> None:
        if notices is not None and getattr(event, "text", ""):
            notices.append(event.text)

    with tempfile.TemporaryDirectory(prefix="venus-tools-") as scratch:
        harness = Harness(settings, emit, store_path=Path(scratch) / "tasks.db")
        try:
            harness.wait_mcp_started(wait_s)
            return harness.describe_tools()
        finally:
            harness.shutdown()


class ApiKeysPage(QWidget):
    """Password fields for API keys; an empty field keeps the stored key, 'Forget' removes it on save."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fields: dict[str, QLineEdit] = {}
        self.forget: set[str] = set()
        layout = QFormLayout(self)
        layout.addRow(QLabel("Keys are stored in the OS keyring, never in the settings file."))
        for provider, title in API_KEY_PROVIDERS.items():
            edit = QLineEdit()
            edit.setEchoMode(QLineEdit.EchoMode.Password)
            edit.setAccessibleName(f"API key: {title}")
            try:
                stored = get_secret(f"api-key:{provider}")
            except SecretError as exc:
                stored = None
                edit.setToolTip(str(exc))
            edit.setPlaceholderText("stored in the keyring" if stored else "not set")
            forget = button("Forget", f"Forget the stored {title} key")
            forget.clicked.connect(lambda _=False, p=provider, e=edit: (self.forget.add(p), e.clear(), e.setPlaceholderText("will be removed on save")))
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            row.addWidget(forget)
            self.fields[provider] = edit
            layout.addRow(title, row)

    def entered(self) -> dict[str, str]:
        """Keys the user typed (provider -> key)."""
        return {p: e.text() for p, e in self.fields.items() if e.text()}
