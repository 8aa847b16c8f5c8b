"""The MCP servers page: a form (add, edit, test, remove) over the usual `mcpServers` JSON, which is shown beside
it for import and export. Secret env values go to the keyring on save; secrets found in clear move there in
one click. A test starts a stdio server on a worker thread and sends the MCP `initialize`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.secrets import (
    SECRET_REF_PREFIX,
    PlaintextSecret,
    find_plaintext_secrets,
    mcp_secret_name,
    move_to_keyring,
    resolve_env,
    secret_ref,
)
from app.settings_pages import button as _button
from app.settings_pages import describe_tools_offline
from engine.errors import SecretError
from engine.secrets import MIN_SECRET_LENGTH, PROCESS_REDACTOR, Redactor, looks_secret, plaintext_warning

MCP_TEST_TIMEOUT_S = 10.0
MCP_TEST_STDERR_CHARS = 200  # the most of a failed server's last stderr line shown after a test


class McpPage(QWidget):
    """MCP servers as a form (add, edit, test, remove), secret env values kept for the keyring, and the usual
    `mcpServers` JSON beside it for import and export; the form and the JSON always show the same servers."""

    test_finished = Signal(str, bool, str)  # server, ok, message (emitted from the test thread)
    secrets_moved = Signal(list)  # the PlaintextSecrets "Move to keyring" just stored in the keyring

    def __init__(self, servers: dict[str, dict[str, Any]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pending_secrets: dict[str, str] = {}  # keyring name -> value, stored on save
        self._syncing = False
        self.editor = QPlainTextEdit(json.dumps(servers, indent=2))
        self.editor.setAccessibleName("MCP servers as JSON")
        self.editor.setTabChangesFocus(True)
        self.server_list = QListWidget()
        self.server_list.setAccessibleName("MCP servers")
        self.server_list.setMaximumWidth(180)
        self.server_list.currentTextChanged.connect(self._load_form)
        self.add_button = _button("Add server", "Add an MCP server")
        self.add_button.clicked.connect(lambda: self.add_server())
        self.remove_button = _button("Remove", "Remove the selected MCP server")
        self.remove_button.clicked.connect(lambda: self.remove_server(self.server_list.currentItem().text())
                                           if self.server_list.currentItem() else None)
        self.name_edit, self.command_edit, self.args_edit, self.url_edit = QLineEdit(), QLineEdit(), QLineEdit(), QLineEdit()
        self.kind_box, self.permission_box = QComboBox(), QComboBox()
        self.kind_box.addItem("A program on this computer (stdio)", "command")
        self.kind_box.addItem("A web address (HTTP)", "url")
        self.permission_box.addItem("Ask first", "ask")
        self.permission_box.addItem("Allow", "allow")
        self.env_edit = QPlainTextEdit()
        self.env_edit.setTabChangesFocus(True)
        self.env_edit.setFixedHeight(54)
        self.env_edit.setPlaceholderText("NAME=value, one per line (secrets: use Store secret below)")
        for widget, name in ((self.name_edit, "Server name"), (self.kind_box, "How Venus reaches the server"),
                             (self.command_edit, "Program to start"), (self.args_edit, "Arguments of the program"),
                             (self.url_edit, "Server address"), (self.permission_box, "Permission of the server's tools"),
                             (self.env_edit, "Environment variables of the server")):
            widget.setAccessibleName(name)
        self.args_edit.setPlaceholderText("--root /home/me/Documents")
        self.url_edit.setPlaceholderText("http://127.0.0.1:8000/mcp")
        for edit in (self.name_edit, self.command_edit, self.args_edit, self.url_edit):
            edit.editingFinished.connect(self._form_changed)
        self.kind_box.currentIndexChanged.connect(self._follow_kind)
        self.kind_box.currentIndexChanged.connect(self._form_changed)
        self.permission_box.currentIndexChanged.connect(self._form_changed)
        self.env_edit.textChanged.connect(self._form_changed)
        self.server_box, self.env_key, self.env_value = QComboBox(), QLineEdit(), QLineEdit()
        self.server_box.setEditable(True)
        self.server_box.setAccessibleName("MCP server for the secret")
        self.env_key.setAccessibleName("Secret environment variable name")
        self.env_key.setPlaceholderText("GITHUB_TOKEN")
        self.env_value.setAccessibleName("Secret environment variable value")
        self.env_value.setEchoMode(QLineEdit.EchoMode.Password)
        self.add_secret_button = _button("Store secret", "Store the secret env value in the keyring on save")
        self.add_secret_button.clicked.connect(self._on_add_secret)
        self.test_button = _button("Test server", "Start the chosen MCP server and check that it answers")
        self.test_button.clicked.connect(lambda: self.test_server(self.server_box.currentText()))
        self.import_button = _button("Import JSON…", "Import servers from an mcpServers JSON file")
        self.import_button.clicked.connect(self._choose_import)
        self.export_button = _button("Export JSON…", "Export the servers as an mcpServers JSON file")
        self.export_button.clicked.connect(self._choose_export)
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
        form.addRow("Name", self.name_edit)
        form.addRow("Reached as", self.kind_box)
        form.addRow("Program", self.command_edit)
        form.addRow("Arguments", self.args_edit)
        form.addRow("Address", self.url_edit)
        form.addRow("Its tools", self.permission_box)
        form.addRow("Environment", self.env_edit)
        secret = QHBoxLayout()
        secret.addWidget(self.env_key)
        secret.addWidget(self.env_value, 1)
        secret.addWidget(self.add_secret_button)
        form.addRow("Secret variable", secret)
        left = QVBoxLayout()
        left.addWidget(self.server_list, 1)
        left.addWidget(self.add_button)
        left.addWidget(self.remove_button)
        top = QHBoxLayout()
        top.addLayout(left)
        top.addLayout(form, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(QLabel("Test:"))
        buttons.addWidget(self.server_box, 1)
        buttons.addWidget(self.test_button)
        buttons.addSpacing(12)
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.export_button)
        json_group = QGroupBox("As mcpServers JSON (the format other apps use)")
        json_layout = QVBoxLayout(json_group)
        json_layout.addWidget(self.editor)
        self.editor.setFixedHeight(96)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.result)
        warning = QHBoxLayout()
        warning.addWidget(self.plaintext, 1)
        warning.addWidget(self.move_button)
        layout.addLayout(warning)
        layout.addWidget(json_group)
        self._refresh_from_editor()

    # ---- the form ----------------------------------------------------------------------------------------------

    def _refresh_from_editor(self) -> None:
        try:
            servers = self.parsed()
        except ValueError as exc:
            self.result.setText(str(exc))
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
        if self._syncing:
            return
        selected = self.server_list.currentItem().text() if self.server_list.currentItem() else ""
        self._syncing = True
        self.server_list.clear()
        self.server_list.addItems(names)
        self._syncing = False
        if names:
            self.server_list.setCurrentRow(names.index(selected) if selected in names else 0)
        else:
            self._load_form("")

    def _write(self, servers: dict[str, dict[str, Any]], select: str = "") -> None:
        """Show `servers` in the JSON box (and so in the form), selecting `select`."""
        self.editor.setPlainText(json.dumps(servers, indent=2))
        if select:
            items = self.server_list.findItems(select, Qt.MatchFlag.MatchExactly)
            if items:
                self.server_list.setCurrentItem(items[0])

    def _load_form(self, name: str) -> None:
        if self._syncing:
            return
        try:
            spec = self.parsed().get(name, {}) if name else {}
        except ValueError:
            return
        self._syncing = True
        try:
            self.name_edit.setText(name)
            self.kind_box.setCurrentIndex(self.kind_box.findData("url" if "url" in spec else "command"))
            self.command_edit.setText(str(spec.get("command", "")))
            self.args_edit.setText(shlex.join(str(a) for a in spec.get("args", [])))
            self.url_edit.setText(str(spec.get("url", "")))
            self.permission_box.setCurrentIndex(self.permission_box.findData("allow" if spec.get("permission") == "allow" else "ask"))
            self.env_edit.setPlainText("\n".join(f"{k}={v}" for k, v in spec.get("env", {}).items()))
            self._follow_kind()
            for widget in (self.name_edit, self.kind_box, self.permission_box, self.env_edit):
                widget.setEnabled(bool(name))
            if name:
                self.server_box.setCurrentText(name)
        finally:
            self._syncing = False

    def _follow_kind(self) -> None:
        """A program has a command and arguments; a web server has an address."""
        by_url = self.kind_box.currentData() == "url"
        self.command_edit.setEnabled(not by_url)
        self.args_edit.setEnabled(not by_url)
        self.url_edit.setEnabled(by_url)

    def _form_changed(self) -> None:
        """Write the form back into the servers (and so into the JSON box)."""
        item = self.server_list.currentItem()
        if self._syncing or item is None:
            return
        try:
            servers = self.parsed()
            old = item.text()
            name = self.name_edit.text().strip() or old
            spec = dict(servers.get(old, {}))
            if self.kind_box.currentData() == "url":
                spec.pop("command", None)
                spec.pop("args", None)
                spec["url"] = self.url_edit.text().strip()
            else:
                spec.pop("url", None)
                spec["command"] = self.command_edit.text().strip()
                spec["args"] = shlex.split(self.args_edit.text())
            env = {}
            for line in self.env_edit.toPlainText().splitlines():
                key, sep, value = line.partition("=")
                if key.strip() and sep:
                    env[key.strip()] = value.strip()
            spec["env"] = env
            if not env:
                spec.pop("env")
            if self.permission_box.currentData() == "allow":
                spec["permission"] = "allow"
            else:
                spec.pop("permission", None)
        except ValueError as exc:
            self.result.setText(f"Not applied: {exc}")
            return
        if name != old and name in servers:
            self.result.setText(f"There is already a server named {name!r}; choose another name.")
            return
        renamed = {(name if key == old else key): (spec if key == old else value) for key, value in servers.items()}
        if renamed != servers:
            self._syncing = True  # the JSON follows the form; reloading the form now would move the typing cursor
            self.editor.setPlainText(json.dumps(renamed, indent=2))
            if name != old:
                item.setText(name)
                self.server_box.setCurrentText(name)
            self._syncing = False

    def add_server(self, name: str = "", spec: dict[str, Any] | None = None) -> str:
        """Add a server (a blank program entry to fill in by default) and select it; returns its name."""
        servers = self.parsed()
        base = name or "new-server"
        name, n = base, 2
        while name in servers:
            name, n = f"{base}-{n}", n + 1
        servers[name] = spec or {"command": ""}
        self._write(servers, select=name)
        self.name_edit.setFocus()
        return name

    def remove_server(self, name: str) -> None:
        """Remove a server."""
        servers = self.parsed()
        servers.pop(name, None)
        self._write(servers)
        self.result.setText(f"{name} removed; save to stop using it.")

    def import_json(self, path: Path) -> list[str]:
        """Add the servers of an `mcpServers` JSON file (Claude Desktop, VS Code and others write this shape);
        a server with a name already here replaces it. Returns the names imported."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path} could not be read as JSON: {exc}") from exc
        imported = data.get("mcpServers", data.get("servers", data)) if isinstance(data, dict) else None
        if not isinstance(imported, dict):
            raise ValueError(f"{path} holds no mcpServers object")
        servers = {**self.parsed(), **imported}
        self._write(servers, select=next(iter(imported), ""))
        self.parsed()  # names the server at fault, if any
        self.result.setText(f"Imported {len(imported)} server(s) from {path}: {', '.join(imported)}.")
        return list(imported)

    def export_json(self, path: Path) -> None:
        """Write the servers as `{"mcpServers": {...}}`; secrets stay `keyring:` references."""
        Path(path).write_text(json.dumps({"mcpServers": self.parsed()}, indent=2) + "\n", encoding="utf-8")
        self.result.setText(f"Exported {len(self.parsed())} server(s) to {path}.")

    def _choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import MCP servers", "", "JSON (*.json)")
        if path:
            try:
                self.import_json(Path(path))
            except ValueError as exc:
                self.result.setText(f"Not imported: {exc}")

    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export MCP servers", "mcp.json", "JSON (*.json)")
        if path:
            try:
                self.export_json(Path(path))
            except (OSError, ValueError) as exc:
                self.result.setText(f"Not exported: {exc}")

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

    def unfinished(self) -> list[str]:
        """Servers with neither a program nor an address filled in, as problems to fix before saving."""
        try:
            servers = self.parsed()
        except ValueError:
            return []  # parsed() names that problem itself
        return [f"harness.mcp_servers.{name}: fill in the program to start or the server's address, or remove it"
                for name, spec in servers.items() if not str(spec.get("command") or spec.get("url") or "").strip()]

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
                self.test_finished.emit(server, *_test_by_url(server, spec))
                return
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


def _test_by_url(server: str, spec: dict[str, Any]) -> tuple[bool, str]:
    """Connect to an HTTP server as a session would (a throwaway harness) and count the tools it lists."""
    from engine.settings import HarnessSettings

    notices: list[str] = []
    rows = describe_tools_offline(HarnessSettings(mcp_servers={server: spec}), MCP_TEST_TIMEOUT_S, notices)
    tools = [row["name"] for row in rows if row["source"] == f"MCP server {server}"]
    if tools:
        return True, f"{server} answered with {len(tools)} tool(s): {', '.join(t.split('__', 1)[-1] for t in tools)}"
    said = [text for text in notices if server in text]
    return False, said[-1] if said else f"{server} listed no tools within {MCP_TEST_TIMEOUT_S:.0f} s"


def _no_answer(server: str, proc: subprocess.CompletedProcess[str]) -> str:
    """Why a test got no MCP reply, in a sentence: the exit code and the server's last word on stderr, if any."""
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    said = f": {lines[-1][:MCP_TEST_STDERR_CHARS]}" if lines else ""
    if proc.returncode != 0:
        return f"{server} stopped with exit code {proc.returncode} before answering{said}"
    return f"{server} ended without answering the MCP handshake{said}"
