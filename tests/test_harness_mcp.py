"""A real MCP server subprocess over stdio: its tools join the registry, run with permissions, get keyring
secrets at spawn time, and no secret reaches a log line, a database row, the settings file or the timeline."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import socket
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import keyring
import pytest
from harness_support import make_harness, task_events, wait_final, wait_until

from engine import paths
from engine.settings import Settings, save_settings
from engine.timeline.events import ConfirmationRequested, DelegationFailed, DelegationResult, SystemNotice
from harness import MCPServerConfig, SecretVault
from harness.secrets import PROCESS_REDACTOR

SERVER = str(Path(__file__).parent / "fixtures" / "mcp_echo_server.py")


def echo_server(**extra) -> dict:
    return {"command": sys.executable, "args": [SERVER], **extra}


def wait_for_tools(harness, *names: str) -> None:
    """MCP servers start in the background: wait until their tools joined the registry."""
    wait_until(lambda: set(names) <= {s["name"] for s in harness.tool_specs()}, timeout_s=30,
               what=f"the MCP tools {names}")


def secret_service_available() -> str | None:
    """None when a working Secret Service keyring is reachable, else why not."""
    backend = keyring.get_keyring()
    if "SecretService" not in type(backend).__module__ + type(backend).__name__:
        return f"no Secret Service keyring (backend is {type(backend).__module__}); run under dbus-run-session " \
               "with gnome-keyring-daemon as .ci/run does"
    try:
        keyring.set_password("venus-test-probe", "probe", "ok")
        keyring.delete_password("venus-test-probe", "probe")
    except Exception as exc:  # locked or broken keyring
        return f"the Secret Service keyring does not work here: {exc}"
    return None


def test_mcp_tools_join_the_registry_and_run():
    harness, timeline = make_harness(mcp_servers={
        "echo": echo_server(permission="allow"),
        "cautious": echo_server(),  # no permission given: third-party tools ask first
    })
    try:
        wait_for_tools(harness, "echo__add", "echo__echo", "cautious__add")
        added = wait_final(timeline, harness.submit("echo__add", {"a": 2, "b": 40}))
        assert isinstance(added, DelegationResult) and added.result == 42
        echoed = wait_final(timeline, harness.submit("echo__echo", {"text": "héllo"}))
        assert echoed.result == "héllo"
        invalid = wait_final(timeline, harness.submit("echo__add", {"a": "two", "b": 1}))
        assert isinstance(invalid, DelegationFailed) and invalid.code == "invalid-arguments"
        assert "argument 'a'" in invalid.error  # checked against the server's own schema before the call
        asked = harness.submit("cautious__add", {"a": 1, "b": 1})
        wait_until(lambda: [e for e in task_events(timeline, asked) if isinstance(e, ConfirmationRequested)])
        harness.answer_confirmation(asked, True, "ui")
        assert wait_final(timeline, asked).result == 2
        slow = harness.submit("echo__sleep", {"seconds": 60})  # only the cancel can end it in time
        wait_until(lambda: [e for e in task_events(timeline, slow) if getattr(e, "state", "") == "running"])
        harness.cancel(slow, "the user said never mind")
        assert wait_final(timeline, slow).kind == "delegation_cancelled"
    finally:
        harness.shutdown()


def test_bad_mcp_config_is_a_notice_not_a_crash():
    harness, timeline = make_harness(mcp_servers={
        "both": {"command": "x", "url": "http://127.0.0.1:1/mcp"},
        "missing": {"command": "/nonexistent/venus-mcp-server"},
    })
    try:
        def notices() -> list[str]:
            return [e.text for e in timeline.events() if isinstance(e, SystemNotice)]

        wait_until(lambda: any("'missing' could not start" in n for n in notices()), what="the start failure")
        assert any("'both' needs exactly one of 'command' or 'url'" in n for n in notices())
        assert wait_final(timeline, harness.submit("calculate", {"expression": "1+1"})).result == {"value": 2}
    finally:
        harness.shutdown()
    with pytest.raises(ValueError, match="unknown keys"):
        MCPServerConfig.from_dict("typo", {"comand": "x"})


def test_keyring_secret_reaches_the_server_and_nothing_else():
    reason = secret_service_available()
    if reason:
        pytest.skip(reason)
    name = f"venus-test-{uuid.uuid4().hex[:8]}"
    value = "sk-" + secrets.token_hex(16)
    vault = SecretVault(PROCESS_REDACTOR)
    vault.store(name, value)
    log_file = paths.log_dir() / "venus.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    try:
        servers = {"vault": echo_server(env={"API_TOKEN": f"keyring:{name}"}, permission="allow")}
        settings = Settings()
        settings.harness.mcp_servers = servers
        settings_file = save_settings(settings)
        harness, timeline = make_harness(mcp_servers=servers)
        try:
            wait_for_tools(harness, "vault__env_digest")
            digest = wait_final(timeline, harness.submit("vault__env_digest", {"name": "API_TOKEN"}))
            assert digest.result == hashlib.sha256(value.encode()).hexdigest()
            revealed = wait_final(timeline, harness.submit("vault__reveal_env", {"name": "API_TOKEN"}))
            assert isinstance(revealed, DelegationResult) and revealed.result == "«secret»"
            echoed = wait_final(timeline, harness.submit("vault__echo", {"text": f"token is {value}"}))
            assert echoed.result == "token is «secret»"
            logging.getLogger("harness.test").warning("the model tried to print %s", value)
            harness.flush()
        finally:
            harness.shutdown()
        handler.flush()
        db = paths.data_dir() / "tasks.db"
        stored = b"".join(p.read_bytes() for p in db.parent.glob("tasks.db*"))
        assert value.encode() not in stored
        rows = sqlite3.connect(db).execute("select tool, arguments, result from tasks").fetchall()
        masked = {tool: (json.loads(args), json.loads(result)) for tool, args, result in rows}
        assert masked["vault__reveal_env"][1] == "«secret»"  # the rows are there, masked
        assert masked["vault__echo"] == ({"text": "token is «secret»"}, "token is «secret»")
        log_text = log_file.read_text(encoding="utf-8")
        assert "the model tried to print «secret»" in log_text and value not in log_text
        assert value not in settings_file.read_text() and f"keyring:{name}" in settings_file.read_text()
        assert value not in json.dumps([e.to_dict() for e in timeline.events()], default=str)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        vault.delete(name)


def test_missing_keyring_secret_names_the_secret_and_the_fix():
    reason = secret_service_available()
    if reason:
        pytest.skip(reason)
    harness, timeline = make_harness(mcp_servers={"vault": echo_server(env={"API_TOKEN": "keyring:venus-absent"})})
    try:
        def told() -> bool:
            return any("secret 'venus-absent' is not in the keyring" in e.text and "keyring set venus venus-absent"
                       in e.text for e in timeline.events() if isinstance(e, SystemNotice))

        wait_until(told, what="a notice naming the missing secret")
        assert "vault__echo" not in [s["name"] for s in harness.tool_specs()]
    finally:
        harness.shutdown()


def test_remote_mcp_server_by_url_on_localhost():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        wait_until(listening, timeout_s=30, what="the HTTP MCP server")
        harness, timeline = make_harness(mcp_servers={"remote": {"url": f"http://127.0.0.1:{port}/mcp",
                                                                 "permission": "allow"}})
        try:
            wait_for_tools(harness, "remote__add")
            assert wait_final(timeline, harness.submit("remote__add", {"a": 20, "b": 22})).result == 42
        finally:
            harness.shutdown()
    finally:
        server.terminate()
        server.wait(timeout=10)
