"""Secrets never leave the process in text: the remote API key after a failing request, chained tracebacks, MCP
env secrets echoed by a tool, the settings dialog's server test; secrets written in clear in settings are named
by `venus doctor` and the dialog, and one click moves them into the keyring."""

from __future__ import annotations

import http.server
import json
import logging
import os
import secrets
import sqlite3
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import httpx  # noqa: E402
import keyring  # noqa: E402
import pytest  # noqa: E402
from harness_support import loopback_server, make_harness, wait_final, wait_until  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from app.secrets import SERVICE, keyring_usable  # noqa: E402
from app.settings_dialog import SettingsDialog  # noqa: E402
from engine import paths  # noqa: E402
from engine.errors import BackendError  # noqa: E402
from engine.llm import Conversation, ConversationOptions, GenerateRequest, RenderOptions  # noqa: E402
from engine.llm.remote import RemoteBackend, RemoteOptions  # noqa: E402
from engine.logsetup import setup_logging  # noqa: E402
from engine.secrets import MASK  # noqa: E402
from engine.settings import Settings, load_settings, save_settings  # noqa: E402
from engine.timeline import Timeline  # noqa: E402
from engine.timeline import events as ev  # noqa: E402
from harness import SecretVault  # noqa: E402
from harness.secrets import PROCESS_REDACTOR  # noqa: E402

needs_keyring = pytest.mark.skipif(
    not keyring_usable(),
    reason="no OS keyring backend; scripts/run-tests.sh starts gnome-keyring under dbus-run-session",
)
ECHO_SERVER = str(Path(__file__).parent / "fixtures" / "mcp_echo_server.py")


def fresh_key() -> str:
    """A secret no earlier test has registered, so masking it proves this test's path."""
    return "sk-venus-" + secrets.token_hex(16)


@pytest.fixture
def venus_log():
    """The real logging setup writing venus.log in this test's log folder; undone afterwards."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    setup_logging()
    yield paths.log_dir() / "venus.log"
    for handler in set(root.handlers) - set(before):
        handler.close()
        root.removeHandler(handler)
    root.setLevel(level)
    root._venus_configured = False  # type: ignore[attr-defined]


class _FailingServer(http.server.BaseHTTPRequestHandler):
    """An OpenAI-style server that refuses every request and, like some proxies, echoes the key it got."""

    seen_keys: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        self.seen_keys.append(key)
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def failing_server():
    """The base URL of a real loopback server that answers every request with HTTP 500."""
    with loopback_server(_FailingServer) as url:
        yield url


def test_remote_api_key_never_appears_in_venus_log_after_a_failing_request(venus_log, failing_server):
    key = fresh_key()
    options = RemoteOptions(base_url=failing_server, api_key=key)
    assert key not in repr(options)
    backend = RemoteBackend(options)
    timeline = Timeline()
    conversation = Conversation(timeline, backend, ConversationOptions(
        render=RenderOptions(system_prompt="You are Venus."), answer=GenerateRequest(max_tokens=8), n_ctx=2048))
    try:
        logging.getLogger("venus.test").info("remote options in use: %s", options)
        timeline.append(ev.UserText(text="What colour is the sky?"))
        turn = conversation.respond()
        with pytest.raises(BackendError) as failed:
            turn.wait(30)
    finally:
        backend.close()
    assert _FailingServer.seen_keys[-1] == key  # the key did travel, to the server only
    assert key not in str(failed.value) and f"Incorrect API key provided: {MASK}" in str(failed.value)
    assert key not in json.dumps([e.to_dict() for e in timeline.events()], default=str)
    ends = timeline.events(kinds=[ev.Kind.ASSISTANT_TURN_END])
    assert ends and "HTTP 500" in ends[-1].reason
    for handler in logging.getLogger().handlers:
        handler.flush()
    log_text = venus_log.read_text(encoding="utf-8")
    assert "Traceback" in log_text and "HTTP 500" in log_text and MASK in log_text  # the failure is logged...
    assert key not in log_text  # ...without the key


def test_chained_exception_tracebacks_are_masked_whole(venus_log, tmp_path):
    key = fresh_key()
    RemoteOptions(api_key=key)  # the key enters the engine the way the session passes it
    plain_file = tmp_path / "plain.log"
    plain = logging.FileHandler(plain_file, encoding="utf-8")  # any handler, without Venus's formatter
    logging.getLogger().addHandler(plain)
    try:
        try:
            try:
                raise httpx.ConnectError(f"proxy refused the header Authorization: Bearer {key}")
            except httpx.ConnectError as low:
                raise RuntimeError(f"retrying with {key} failed") from low
        except RuntimeError:
            try:
                raise BackendError("the remote server is unreachable")  # its __context__ holds the key
            except BackendError:
                logging.getLogger("venus.test").exception("request failed")
    finally:
        logging.getLogger().removeHandler(plain)
        plain.close()
    for handler in logging.getLogger().handlers:
        handler.flush()
    for text in (venus_log.read_text(encoding="utf-8"), plain_file.read_text(encoding="utf-8")):
        assert "direct cause" in text and "During handling" in text  # the whole chain is there...
        assert "ConnectError" in text and f"retrying with {MASK} failed" in text
        assert key not in text  # ...masked, causes and contexts included


def _mcp_server_with_secret(name: str) -> dict:
    """The echo MCP server with API_TOKEN taken from the keyring secret `name`."""
    return {"vault": {"command": sys.executable, "args": [ECHO_SERVER], "env": {"API_TOKEN": f"keyring:{name}"},
                      "permission": "allow"}}


@needs_keyring
def test_mcp_env_secret_never_reaches_the_timeline_or_task_rows(venus_log):
    name, value = f"venus-test-{uuid.uuid4().hex[:8]}", fresh_key()
    vault = SecretVault(PROCESS_REDACTOR)
    keyring.set_password(SERVICE, name, value)  # stored by hand: only reading it makes the harness mask it
    try:
        harness, timeline = make_harness(mcp_servers=_mcp_server_with_secret(name))
        try:
            wait_until(lambda: "vault__reveal_env" in {s["name"] for s in harness.tool_specs()}, timeout_s=30,
                       what="the vault server's tools")  # MCP servers may start in the background
            revealed = wait_final(timeline, harness.submit("vault__reveal_env", {"name": "API_TOKEN"}))
            failed = wait_final(timeline, harness.submit("vault__add", {"a": value, "b": 1}))
            harness.flush()
        finally:
            harness.shutdown()
        assert isinstance(revealed, ev.DelegationResult) and revealed.result == MASK
        assert isinstance(failed, ev.DelegationFailed) and value not in failed.error
        assert value not in json.dumps([e.to_dict() for e in timeline.events()], default=str)
        db = paths.data_dir() / "tasks.db"
        rows = sqlite3.connect(db).execute("select tool, arguments, result, error from tasks").fetchall()
        assert {row[0] for row in rows} == {"vault__reveal_env", "vault__add"}
        assert value not in json.dumps(rows) and MASK in json.dumps(rows, ensure_ascii=False)
        assert value.encode() not in b"".join(p.read_bytes() for p in db.parent.glob("tasks.db*"))
        for handler in logging.getLogger().handlers:
            handler.flush()
        assert value not in venus_log.read_text(encoding="utf-8")
    finally:
        vault.delete(name)


def test_a_token_written_in_clear_for_an_mcp_server_is_masked_too(venus_log):
    value = fresh_key()
    servers = {"vault": {"command": sys.executable, "args": [ECHO_SERVER], "env": {"API_TOKEN": value},
                         "permission": "allow"}}
    harness, timeline = make_harness(mcp_servers=servers)
    try:
        wait_until(lambda: "vault__reveal_env" in {s["name"] for s in harness.tool_specs()}, timeout_s=30,
                   what="the vault server's tools")
        revealed = wait_final(timeline, harness.submit("vault__reveal_env", {"name": "API_TOKEN"}))
        harness.flush()
    finally:
        harness.shutdown()
    assert isinstance(revealed, ev.DelegationResult) and revealed.result == MASK  # the server did get it
    assert value not in json.dumps([e.to_dict() for e in timeline.events()], default=str)
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert value not in venus_log.read_text(encoding="utf-8")


@needs_keyring
def test_plaintext_secret_is_named_by_doctor_and_moved_into_the_keyring_in_one_click(qtbot, tmp_path):
    token, bearer = "ghp_" + secrets.token_hex(18), "Bearer " + secrets.token_hex(16)
    settings = Settings()
    settings.harness.mcp_servers = {
        "gh": {"command": "github-mcp", "env": {"GITHUB_TOKEN": token, "LOG_LEVEL": "debug"}},
        "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": bearer}},
    }
    settings_file = save_settings(settings)
    doctor = subprocess.run([sys.executable, "-m", "app.cli", "doctor"], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "VENUS_MODELS_DIR": str(tmp_path / "no-models")})
    warning = next(line for line in doctor.stdout.splitlines() if " secrets:" in line)
    assert warning.startswith("[warn]") and "2 secret(s) written in clear" in warning
    assert "harness.mcp_servers.gh.env.GITHUB_TOKEN" in warning and "harness.mcp_servers.web.headers.Authorization" in warning
    assert token not in doctor.stdout + doctor.stderr and bearer not in doctor.stdout + doctor.stderr
    assert "Move to keyring" in doctor.stdout

    dialog = SettingsDialog(load_settings().settings, settings_path=settings_file)
    qtbot.addWidget(dialog)
    assert "harness.mcp_servers.gh.env.GITHUB_TOKEN" in dialog.error.text() and token not in dialog.error.text()
    assert not dialog.mcp.move_button.isHidden() and "2 secret(s)" in dialog.mcp.plaintext.text()
    try:
        with qtbot.waitSignal(dialog.settings_saved, timeout=5000) as saved:
            qtbot.mouseClick(dialog.mcp.move_button, Qt.MouseButton.LeftButton)
        assert keyring.get_password(SERVICE, "mcp:gh:GITHUB_TOKEN") == token
        assert keyring.get_password(SERVICE, "mcp:web:header:Authorization") == bearer
        text = settings_file.read_text()
        assert token not in text and bearer not in text
        servers = json.loads(text)["harness"]["mcp_servers"]
        assert servers["gh"]["env"] == {"GITHUB_TOKEN": "keyring:mcp:gh:GITHUB_TOKEN", "LOG_LEVEL": "debug"}
        assert servers["web"]["headers"] == {"Authorization": "keyring:mcp:web:header:Authorization"}
        assert saved.args[0].harness.mcp_servers == servers  # the window gets the references too
        assert dialog.mcp.move_button.isHidden() and not dialog.error.text()
        assert "keyring:mcp:gh:GITHUB_TOKEN" in dialog.mcp.editor.toPlainText()
    finally:
        for name in ("mcp:gh:GITHUB_TOKEN", "mcp:web:header:Authorization"):
            try:
                keyring.delete_password(SERVICE, name)
            except keyring.errors.PasswordDeleteError:
                pass


LEAKY_SERVER = textwrap.dedent("""
    import os, sys
    sys.stdin.readline()
    print("Traceback (most recent call last):", file=sys.stderr)
    print('  File "server.py", line 3, in <module>', file=sys.stderr)
    sys.exit(f"AuthError: the upstream refused token {os.environ['TOKEN']} and key {os.environ['OPENAI_API_KEY']}")
""")


def test_test_server_output_is_one_masked_sentence(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    script = tmp_path / "leaky_server.py"
    script.write_text(LEAKY_SERVER)
    pending, plain = "pending-" + secrets.token_hex(12), "sk-" + secrets.token_hex(20)
    dialog = SettingsDialog(Settings(), settings_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    dialog.mcp.editor.setPlainText(json.dumps({"files": {"command": sys.executable, "args": [str(script)],
                                                         "env": {"OPENAI_API_KEY": plain}}}))
    dialog.mcp.add_secret("files", "TOKEN", pending)  # not in the keyring yet: stored on save
    with qtbot.waitSignal(dialog.mcp.test_finished, timeout=20000) as finished:
        dialog.mcp.test_server("files")
    server, ok, message = finished.args
    assert server == "files" and ok is False
    assert message == (f"files stopped with exit code 1 before answering: AuthError: the upstream refused token {MASK} "
                       f"and key {MASK}")
    qtbot.waitUntil(lambda: "✘" in dialog.mcp.result.text())
    assert pending not in dialog.mcp.result.text() and plain not in dialog.mcp.result.text()
    assert "Traceback" not in dialog.mcp.result.text()
