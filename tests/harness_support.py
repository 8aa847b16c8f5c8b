"""Helpers shared by the harness tests: a real harness on a real timeline, and a few real test tools."""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.settings import HarnessSettings
from engine.timeline import Timeline
from engine.timeline.events import (
    DelegationCancelled,
    DelegationFailed,
    DelegationResult,
    Event,
    Kind,
)
from harness import Harness, Permission, Tool, ToolContext, ToolOutput, ToolSpec

TERMINAL = (Kind.DELEGATION_RESULT, Kind.DELEGATION_FAILED, Kind.DELEGATION_CANCELLED)


def wait_until(predicate: Callable[[], Any], timeout_s: float = 20.0, what: str = "condition") -> Any:
    """Poll `predicate` until it returns something truthy; fail the test with `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def task_events(timeline: Timeline, task_id: str) -> list[Event]:
    """Every event on the timeline about one task, in timeline order."""
    return [e for e in timeline.events() if getattr(e, "task_id", None) == task_id]


def wait_final(timeline: Timeline, task_id: str, timeout_s: float = 20.0) -> DelegationResult | DelegationFailed | \
        DelegationCancelled:
    """The end event of a task, once it is on the timeline."""
    def final() -> Event | None:
        ends = [e for e in task_events(timeline, task_id) if e.kind in TERMINAL]
        return ends[0] if ends else None

    return wait_until(final, timeout_s, f"the end of task {task_id}")


def counting_tool(name: str = "count_slowly", *, idempotent: bool = True, permission: Permission = Permission.ALLOW,
                  marker_dir: Path | None = None) -> Tool:
    """A cooperative tool: `steps` steps of `step_s` seconds with progress; optionally leaves a file per run."""

    def run(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        steps, step_s = arguments["steps"], arguments.get("step_s", 0.05)
        if marker_dir is not None:
            (marker_dir / f"{name}-{ctx.task_id}-{time.monotonic_ns()}").write_text("started")
        for step in range(steps):
            ctx.progress(100.0 * step / steps, f"step {step + 1} of {steps}")
            time.sleep(step_s)
        return ToolOutput(summary=f"counted to {steps}", data={"count": steps})

    return Tool(ToolSpec(
        name=name, description="Count slowly, reporting progress (a test tool).",
        parameters={"type": "object", "required": ["steps"], "additionalProperties": False, "properties": {
            "steps": {"type": "integer", "minimum": 0}, "step_s": {"type": "number", "minimum": 0}}},
        permission=permission, idempotent=idempotent,
    ), run)


def stubborn_tool(release: threading.Event | None = None) -> Tool:
    """A tool that ignores cancellation: it sleeps `seconds`, or until the test sets `release`."""

    def run(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if release is None:
            time.sleep(arguments["seconds"])
        else:
            release.wait(arguments["seconds"])
        return ToolOutput(summary="woke up", data=None)

    return Tool(ToolSpec(
        name="sleep_stubbornly", description="Sleep without checking for cancellation (a test tool).",
        parameters={"type": "object", "required": ["seconds"], "properties": {"seconds": {"type": "number"}}},
        permission=Permission.ALLOW,
    ), run)


def make_harness(allowed: list[Path] | None = None, *, extra_tools: tuple[Tool, ...] = (), store_path: Path | None = None,
                 **settings: Any) -> tuple[Harness, Timeline]:
    """A harness reporting onto a fresh timeline, subscribed to it for the user's replies."""
    timeline = Timeline()
    config = HarnessSettings(allowed_folders=[str(p) for p in (allowed or [])], **settings)
    harness = Harness(config, timeline.append, extra_tools=extra_tools, store_path=store_path)
    timeline.subscribe(harness.on_timeline_event)
    return harness, timeline


def crash_test_tools(markers: Path) -> tuple[Tool, ...]:
    """The tools the crash test's child and its restarted parent both register."""
    return (
        counting_tool("count_slowly", idempotent=True, marker_dir=markers),
        counting_tool("send_slowly", idempotent=False, marker_dir=markers),
        counting_tool("careful_count", permission=Permission.ASK, marker_dir=markers),
    )


CRASH_CHILD = Path(__file__).parent / "fixtures" / "harness_crash_child.py"


def crash_mid_tasks(store_path: Path, markers: Path) -> dict[str, str]:
    """Run the crash child (tasks running, queued and waiting in `store_path`), SIGKILL it mid-work, and return
    the ids it printed: resumable, effectful, queued, confirming."""
    child = subprocess.Popen([sys.executable, str(CRASH_CHILD), str(store_path), str(markers)], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    try:
        line = child.stdout.readline()
        assert line, "the child exited before its tasks were running"
        ids = dict(pair.split("=") for pair in line.split())
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    return ids


@contextmanager
def chat_server(answer: Callable[[dict], str]) -> Iterator[str]:
    """An OpenAI-compatible chat server on 127.0.0.1 that streams `answer(request body)` as one chunk; yields the
    base URL for `llm.remote_url`."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = answer(body)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for piece, finish in ((text, None), ("", "stop")):
                chunk = {"choices": [{"delta": {"content": piece}, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

    with loopback_server(Handler) as url:
        yield url


@contextmanager
def loopback_server(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 with `handler`, on its own thread; yields its base URL ending in /v1."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()

