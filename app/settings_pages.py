"""Settings pages that are more than a form: tool permissions and folders, MCP servers, API keys."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from app.secrets import (
    SECRET_REF_PREFIX,
    PlaintextSecret,
    find_plaintext_secrets,
    get_secret,
    mcp_secret_name,
    move_to_keyring,
    resolve_env,
    secret_ref,
)
from engine.errors import SecretError
from engine.secrets import MIN_SECRET_LENGTH, PROCESS_REDACTOR, Redactor, looks_secret, plaintext_warning

PERMISSION_LEVELS = ("allow", "ask", "off")
API_KEY_PROVIDERS = {"remote-llm": "OpenAI-compatible endpoint", "web-search": "Web search"}
MCP_TEST_TIMEOUT_S = 10.0
MCP_TEST_STDERR_CHARS = 200  # the most of a failed server's last stderr line shown after a test


def _button(text: str, accessible: str) -> QPushButton:
    button = QPushButton(text)
    button.setAccessibleName(accessible)
    return button


class ToolsPage(QWidget):
    """Per-tool permission levels and the folders file tools may touch."""

    def __init__(self, permissions: dict[str, str], folders: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Tool", "Permission"])
        self.table.setAccessibleName("Tool permissions")
        self.table.horizontalHeader().setStretchLastSection(True)
        for name, level in sorted(permissions.items()):
            self.add_permission(name, level)
        add_tool, remove_tool = _button("Add tool", "Add a tool permission"), _button("Remove tool", "Remove the selected tool permission")
        add_tool.clicked.connect(lambda: self.add_permission("", "ask"))
        remove_tool.clicked.connect(lambda: self.table.removeRow(self.table.currentRow()))
        self.folders = QListWidget()
        self.folders.setAccessibleName("Allowed folders")
        self.folders.addItems(folders)
        add_folder, remove_folder = _button("Add folder…", "Add an allowed folder"), _button("Remove folder", "Remove the selected folder")
        add_folder.clicked.connect(self._choose_folder)
        remove_folder.clicked.connect(lambda: self.folders.takeItem(self.folders.currentRow()))
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Permission per tool: allow runs it, ask waits for your confirmation, off hides it."))
        layout.addWidget(self.table)
        row = QHBoxLayout()
        row.addWidget(add_tool)
        row.addWidget(remove_tool)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(QLabel("Folders the file tools may read and write:"))
        layout.addWidget(self.folders)
        row = QHBoxLayout()
        row.addWidget(add_folder)
        row.addWidget(remove_folder)
        row.addStretch(1)
        layout.addLayout(row)

    def add_permission(self, name: str, level: str) -> None:
        """Append a tool row."""
        position = self.table.rowCount()
        self.table.insertRow(position)
        edit = QLineEdit(name)
        edit.setAccessibleName(f"Tool name, row {position + 1}")
        box = QComboBox()
        box.addItems(PERMISSION_LEVELS)
        box.setCurrentText(level)
        box.setAccessibleName(f"Permission, row {position + 1}")
        self.table.setCellWidget(position, 0, edit)
        self.table.setCellWidget(position, 1, box)

    def add_folder(self, folder: str) -> None:
        """Append an allowed folder."""
        self.folders.addItem(folder)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Allow a folder")
        if folder:
            self.add_folder(folder)

    def values(self) -> tuple[dict[str, str], list[str], list[str]]:
        """(permissions, folders, problems): blank tool names and missing folders are problems."""
        permissions, problems = {}, []
        for position in range(self.table.rowCount()):
            name = self.table.cellWidget(position, 0).text().strip()
            if not name:
                problems.append(f"harness.permissions: row {position + 1} has no tool name; type one or remove the row")
                continue
            permissions[name] = self.table.cellWidget(position, 1).currentText()
        folders = [self.folders.item(i).text() for i in range(self.folders.count())]
        for folder in folders:
            if not Path(folder).expanduser().is_dir():
                problems.append(f"harness.allowed_folders: {folder} is not an existing folder; create it or remove it")
        return permissions, folders, problems


class McpPage(QWidget):
    """MCP servers as the usual `mcpServers` JSON, secret env values kept apart for the keyring, and a test."""

    test_finished = Signal(str, bool, str)  # server, ok, message (emitted from the test thread)
    secrets_moved = Signal(list)  # the PlaintextSecrets "Move to keyring" just stored in the keyring

    def __init__(self, servers: dict[str, dict[str, Any]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = QPlainTextEdit(json.dumps(servers, indent=2))
        self.editor.setAccessibleName("MCP servers as JSON")
        self.pending_secrets: dict[str, str] = {}  # keyring name -> value, stored on save
        self.server_box, self.env_key, self.env_value = QComboBox(), QLineEdit(), QLineEdit()
        self.server_box.setEditable(True)
        self.server_box.setAccessibleName("MCP server for the secret")
        self.env_key.setAccessibleName("Secret environment variable name")
        self.env_value.setAccessibleName("Secret environment variable value")
        self.env_value.setEchoMode(QLineEdit.EchoMode.Password)
        self.add_secret_button = _button("Store secret", "Store the secret env value in the keyring on save")
        self.add_secret_button.clicked.connect(self._on_add_secret)
        self.test_button = _button("Test server", "Start the chosen MCP server and check that it answers")
        self.test_button.clicked.connect(lambda: self.test_server(self.server_box.currentText()))
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setAccessibleName("MCP test result")
        self.plaintext = QLabel()
        self.plaintext.setWordWrap(True)
        self.plaintext.setAccessibleName("Secrets written in clear")
        self.move_button = _button("Move to keyring", "Move the secrets written in clear into the OS keyring")
        self.move_button.clicked.connect(self.move_secrets_to_keyring)
        self.test_finished.connect(self._show_test)
        self.editor.textChanged.connect(self._refresh_from_editor)
        form = QFormLayout()
        form.addRow("Server", self.server_box)
        form.addRow("Env variable", self.env_key)
        form.addRow("Secret value", self.env_value)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_secret_button)
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel('Servers: {"name": {"command": "...", "args": [...], "env": {...}}}'))
        layout.addWidget(self.editor, 1)
        warning = QHBoxLayout()
        warning.addWidget(self.plaintext, 1)
        warning.addWidget(self.move_button)
        layout.addLayout(warning)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.result)
        self._refresh_from_editor()

    def _refresh_from_editor(self) -> None:
        try:
            servers = self.parsed()
        except ValueError:
            return
        found = find_plaintext_secrets(servers)
        self.plaintext.setText(f"⚠ {plaintext_warning(found)}." if found else "")
        self.plaintext.setHidden(not found)
        self.move_button.setHidden(not found)
        names = list(servers)
        current = self.server_box.currentText()
        self.server_box.clear()
        self.server_box.addItems(names)
        if current in names:
            self.server_box.setCurrentText(current)

    def parsed(self) -> dict[str, dict[str, Any]]:
        """The servers from the editor; ValueError names the line or server at fault."""
        try:
            servers = json.loads(self.editor.toPlainText() or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"harness.mcp_servers: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
        if not isinstance(servers, dict):
            raise ValueError("harness.mcp_servers: must be a JSON object of name -> server")
        for name, server in servers.items():
            if not isinstance(server, dict) or not (isinstance(server.get("command"), str) or isinstance(server.get("url"), str)):
                raise ValueError(f"harness.mcp_servers.{name}: needs a \"command\" (stdio) or a \"url\" (HTTP)")
            if not isinstance(server.get("args", []), list) or not isinstance(server.get("env", {}), dict):
                raise ValueError(f"harness.mcp_servers.{name}: \"args\" must be a list and \"env\" an object")
        return servers

    def add_secret(self, server: str, env_key: str, value: str) -> None:
        """Put a `keyring:` reference into the server's env; the value goes to the keyring on save."""
        servers = self.parsed()
        if server not in servers:
            raise ValueError(f"no MCP server named {server!r}; add it to the JSON first")
        if not env_key or not value:
            raise ValueError("both the env variable name and its secret value are needed")
        name = mcp_secret_name(server, env_key)
        servers[server].setdefault("env", {})[env_key] = secret_ref(name)
        self.pending_secrets[name] = value
        self.editor.setPlainText(json.dumps(servers, indent=2))
        self.server_box.setCurrentText(server)

    def plaintext_secrets(self) -> list[PlaintextSecret]:
        """Env and header values in the editor that look like credentials written in clear."""
        try:
            return find_plaintext_secrets(self.parsed())
        except ValueError:
            return []

    def move_secrets_to_keyring(self) -> list[PlaintextSecret]:
        """Store every secret written in clear in the keyring now and leave `keyring:` references in the JSON."""
        try:
            servers, moved = move_to_keyring(self.parsed())
        except (ValueError, SecretError) as exc:
            self.result.setText(f"Not moved: {exc}")
            return []
        self.editor.setPlainText(json.dumps(servers, indent=2))
        self.result.setText(f"✔ {len(moved)} secret(s) moved into the keyring; the settings keep keyring: references.")
        self.secrets_moved.emit(moved)
        return moved

    def _on_add_secret(self) -> None:
        try:
            self.add_secret(self.server_box.currentText(), self.env_key.text().strip(), self.env_value.text())
        except ValueError as exc:
            self.result.setText(str(exc))
            return
        self.env_value.clear()
        self.result.setText(f"{self.env_key.text()} will be stored in the keyring when you save.")

    def test_server(self, server: str) -> threading.Thread:
        """Start `server` on a worker thread and send an MCP `initialize`; the answer arrives as test_finished."""
        self.result.setText(f"Testing {server}…")
        thread = threading.Thread(target=self._run_test, args=(server,), name="venus-mcp-test", daemon=True)
        thread.start()
        return thread

    def _env_for(self, env: dict[str, str]) -> dict[str, str]:
        pending = {k: v for k, v in env.items() if isinstance(v, str) and v[len(SECRET_REF_PREFIX):] in self.pending_secrets}
        resolved = {k: self.pending_secrets[v[len(SECRET_REF_PREFIX):]] for k, v in pending.items()}
        stored = resolve_env({k: v for k, v in env.items() if k not in pending})
        return {**stored, **resolved}

    def _run_test(self, server: str) -> None:
        masker = Redactor()  # the secrets this test hands the server, stored or not yet
        try:
            spec = self.parsed()[server]
            if "command" not in spec:
                raise ValueError("only stdio servers (with a command) can be tested here")
            raw_env = spec.get("env", {})
            server_env = self._env_for(raw_env)
            for key, value in server_env.items():
                secret = str(raw_env[key]).startswith(SECRET_REF_PREFIX) or looks_secret(key, value)
                if secret and len(value) >= MIN_SECRET_LENGTH:
                    masker.add(value)
            request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "venus", "version": "0.1"}}}
            proc = subprocess.run([spec["command"], *map(str, spec.get("args", []))], input=json.dumps(request) + "\n",
                                  capture_output=True, text=True, env={**os.environ, **server_env},
                                  timeout=MCP_TEST_TIMEOUT_S)
            for line in proc.stdout.splitlines():
                reply = json.loads(line) if line.strip().startswith("{") else {}
                if reply.get("id") == 1 and "result" in reply:
                    info = reply["result"].get("serverInfo", {})
                    self.test_finished.emit(server, True, f"{server} answered: {info.get('name', '?')} {info.get('version', '')}".strip())
                    return
            message = _no_answer(server, proc)
        except subprocess.TimeoutExpired:
            message = f"{server} did not answer within {MCP_TEST_TIMEOUT_S:.0f} s"
        except (OSError, ValueError, KeyError, SecretError) as exc:
            message = f"{server} failed: {exc}"
        self.test_finished.emit(server, False, PROCESS_REDACTOR.scrub_text(masker.scrub_text(message)))

    def _show_test(self, server: str, ok: bool, message: str) -> None:
        self.result.setText(("✔ " if ok else "✘ ") + message)


def _no_answer(server: str, proc: subprocess.CompletedProcess[str]) -> str:
    """Why a test got no MCP reply, in a sentence: the exit code and the server's last word on stderr, if any."""
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    said = f": {lines[-1][:MCP_TEST_STDERR_CHARS]}" if lines else ""
    if proc.returncode != 0:
        return f"{server} stopped with exit code {proc.returncode} before answering{said}"
    return f"{server} ended without answering the MCP handshake{said}"


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
            forget = _button("Forget", f"Forget the stored {title} key")
            forget.clicked.connect(lambda _=False, p=provider, e=edit: (self.forget.add(p), e.clear(), e.setPlaceholderText("will be removed on save")))
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            row.addWidget(forget)
            self.fields[provider] = edit
            layout.addRow(title, row)

    def entered(self) -> dict[str, str]:
        """Keys the user typed (provider -> key)."""
        return {p: e.text() for p, e in self.fields.items() if e.text()}
