"""MCP servers cannot hold Venus hostage: real harness, real MCP server subprocesses (small scripts written here),
real SQLite. A hung server neither delays start-up nor outlives its timeout; a crash is told and its tools leave
until a restart brings them back; stopping leaves no process behind; a flood of output is cut and marked."""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

import psutil
from harness_support import make_harness, task_events, wait_final, wait_until

from engine.settings import HarnessSettings
from engine.timeline.events import ConfirmationRequested, DelegationFailed, DelegationResult, SystemNotice

SERVER_HEAD = '''
import os, subprocess, sys, time
from pathlib import Path
from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).parent
server = MCPServer("venus-trust-test")


@server.tool(description="Return the given text unchanged.")
def echo(text: str) -> str:
    return text
'''

SERVER_TAIL = '''
if __name__ == "__main__":
    server.run("stdio")
'''


def write_server(folder: Path, name: str, body: str = "", **config) -> dict:
    """A Python MCP server script in `folder` (the echo tool plus `body`), as an `mcpServers` entry."""
    script = folder / f"{name}.py"
    script.write_text(SERVER_HEAD + body + SERVER_TAIL)
    return {"command": sys.executable, "args": [str(script)], "permission": "allow", **config}


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def our_children(marker: str) -> list[str]:
    """Command lines of this process's live descendants that mention `marker`."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and marker in " ".join(child.cmdline()):
                found.append(" ".join(child.cmdline()))
        except psutil.NoSuchProcess:
            pass
    return found


def notices(timeline, code: str) -> list[str]:
    """Texts of the SystemNotices with `code` so far."""
    return [e.text for e in timeline.events() if isinstance(e, SystemNotice) and e.code == code]


def tool_names(harness) -> set[str]:
    return {spec["name"] for spec in harness.tool_specs()}


def test_hung_server_neither_delays_start_up_nor_outlives_its_timeout(tmp_path: Path):
    grandchild_file = tmp_path / "grandchild.pid"
    hung_with_child = f"sleep 613 & echo $! > {grandchild_file}; exec sleep 613"
    began = time.monotonic()
    harness, timeline = make_harness(mcp_servers={
        "sleeper": {"command": "sleep", "args": ["613"], "start_timeout_s": 1},
        "family": {"command": "/bin/sh", "args": ["-c", hung_with_child], "start_timeout_s": 1},
    })
    try:
        assert time.monotonic() - began < 3.0, "Harness() waited for a server that never answers"
        assert wait_final(timeline, harness.submit("calculate", {"expression": "6*7"})).result == {"value": 42}
        failed = wait_until(lambda: len(notices(timeline, "mcp-server-failed")) == 2 and
                            notices(timeline, "mcp-server-failed"), what="both start timeouts")
        assert all("did not answer within 1 s" in text for text in failed), failed
        grandchild = int(wait_until(lambda: grandchild_file.exists() and grandchild_file.read_text().strip(),
                                    what="the hung server's own child"))
        wait_until(lambda: not our_children("613") and not alive(grandchild), timeout_s=10,
                   what="the hung servers' whole process groups to be killed")
        assert not {name for name in tool_names(harness) if name.startswith(("sleeper__", "family__"))}
    finally:
        harness.shutdown()


def test_flood_of_output_is_cut_to_the_setting_and_marked(tmp_path: Path):
    assert HarnessSettings().max_tool_output_bytes == 1_000_000
    flood = '''
@server.tool(description="Print a flood on stderr and return one as the result.")
def flood(megabytes: int) -> str:
    sys.stderr.write("e" * (megabytes * 1_000_000))
    sys.stderr.flush()
    return "x" * (megabytes * 1_000_000)
'''
    store = tmp_path / "tasks.db"
    harness, timeline = make_harness(store_path=store, max_tool_output_bytes=250_000,
                                     mcp_servers={"loud": write_server(tmp_path, "loud", flood)})
    try:
        wait_until(lambda: "loud__flood" in tool_names(harness), timeout_s=30, what="the flood tool")
        task = harness.submit("loud__flood", {"megabytes": 50})
        result = wait_final(timeline, task, timeout_s=90)
        assert isinstance(result, DelegationResult), result
        kept, _, marker = result.result.partition("\n[output truncated: ")
        assert kept == "x" * 250_000 and marker == f"{50_000_000 - 250_000} more bytes not shown]"
        assert "truncated" in result.summary
        stored = sqlite3.connect(store).execute("select result from tasks where id = ?", (task,)).fetchone()[0]
        assert 250_000 < len(stored) < 300_000
        assert wait_final(timeline, harness.submit("loud__echo", {"text": "still here"})).result == "still here"
    finally:
        harness.shutdown()


def test_crash_is_told_its_tools_leave_and_a_restart_brings_them_back(tmp_path: Path):
    broken = tmp_path / "broken"
    starts = tmp_path / "starts"
    fragile = f'''
with open({str(starts)!r}, "a") as log:
    log.write(f"{{os.getpid()}}\\n")
if Path({str(broken)!r}).exists():
    print("venus-test: refusing to start while broken", file=sys.stderr, flush=True)
    sys.exit(3)


@server.tool(description="Exit the server at once, as a crash would.")
def die() -> str:
    os._exit(7)
'''
    harness, timeline = make_harness(mcp_servers={"fragile": write_server(tmp_path, "fragile", fragile)})
    try:
        wait_until(lambda: "fragile__echo" in tool_names(harness), timeout_s=30, what="the server's tools")
        broken.touch()  # from now on a restart fails, so the tools must stay away
        died = wait_final(timeline, harness.submit("fragile__die", {}))
        assert isinstance(died, DelegationFailed) and "fragile" in died.error
        crashed = wait_until(lambda: notices(timeline, "mcp-server-crashed"), what="a crash notice")
        assert "'fragile' stopped unexpectedly (it exited with code 7)" in crashed[0]
        assert not {"fragile__echo", "fragile__die"} & tool_names(harness)
        assert "no tool named 'fragile__echo'" in harness.check_call("fragile__echo", {"text": "hi"})
        wait_until(lambda: len(starts.read_text().split()) >= 2, timeout_s=30, what="a restart attempt")
        assert not {"fragile__echo", "fragile__die"} & tool_names(harness)  # the failed restart added nothing

        broken.unlink()
        wait_until(lambda: "fragile__echo" in tool_names(harness), timeout_s=60, what="a successful restart")
        # the notice travels through the harness's pump, so it may land on the timeline just after the tools
        wait_until(lambda: any("'fragile' was restarted" in text for text in notices(timeline, "mcp-server-ready")),
                   what="the restart notice")
        assert wait_final(timeline, harness.submit("fragile__echo", {"text": "back"})).result == "back"

        server_pid = int(starts.read_text().split()[-1])
        psutil.Process(server_pid).kill()  # killed from outside this time
        wait_until(lambda: len(notices(timeline, "mcp-server-crashed")) == 2, what="a second crash notice")
        assert "killed by signal 9" in notices(timeline, "mcp-server-crashed")[1]
        wait_until(lambda: "fragile__echo" in tool_names(harness) and int(starts.read_text().split()[-1]) != server_pid,
                   timeout_s=60, what="the restart after the kill")
        assert not notices(timeline, "mcp-server-gave-up")
    finally:
        harness.shutdown()


def test_stopping_the_harness_leaves_no_process_behind(tmp_path: Path):
    grandchild_file = tmp_path / "grandchild.pid"
    parent = f'''
_child = subprocess.Popen(["sleep", "613"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
Path({str(grandchild_file)!r}).write_text(str(_child.pid))
'''
    harness, timeline = make_harness(mcp_servers={
        "parent": write_server(tmp_path, "parent", parent),  # exits on stdin's end, its child would stay
        "starting": {"command": "sleep", "args": ["613"], "start_timeout_s": 120},  # stopped while starting
    })
    try:
        wait_until(lambda: "parent__echo" in tool_names(harness), timeout_s=30, what="the server's tools")
        wait_until(lambda: any(c.startswith("sleep 613") for c in our_children("613")) and grandchild_file.exists(),
                   what="both servers' processes")
        grandchild = int(grandchild_file.read_text())
        assert alive(grandchild)
    finally:
        began = time.monotonic()
        harness.shutdown()
    assert time.monotonic() - began < 10.0
    wait_until(lambda: not our_children(str(tmp_path)) and not our_children("613") and not alive(grandchild),
               timeout_s=10, what="every server process and what they started to be gone")


def test_shell_output_is_cut_and_marked(tmp_path: Path):
    harness, timeline = make_harness([tmp_path], permissions={"run_shell_command": "ask"})
    try:
        flood = f"{sys.executable} -c \"import sys; sys.stdout.write('y' * 50_000_000)\""
        task = harness.submit("run_shell_command", {"command": flood})
        wait_until(lambda: [e for e in task_events(timeline, task) if isinstance(e, ConfirmationRequested)])
        harness.answer_confirmation(task, True, "ui")
        result = wait_final(timeline, task, timeout_s=60)
        assert isinstance(result, DelegationResult), result
        stdout = result.result["stdout"]
        assert result.result["truncated"] and result.result["exit_code"] == 0
        assert stdout.endswith(f"\n[output truncated: {50_000_000 - 64 * 1024} more bytes not shown]")
        assert stdout.startswith("y" * 64 * 1024) and len(stdout) < 64 * 1024 + 100
    finally:
        harness.shutdown()
