"""The soak's Venus process: one persisted voice session on the scripted mic file, as `venus duplex` runs it.

Started by bench/soak/run.py with VENUS_CONFIG_DIR / VENUS_DATA_DIR pointing at a throwaway folder. It builds the
session the way `venus duplex --input` does (shared models, the warm-up, echo cancellation off for a user-only
input) but with `persist=True`, so every event goes through the writer thread into venus.db, and it submits the
script's MCP calls through the session's harness. It reports on stdout, one JSON object a line: "open" when the
mic starts, "progress" every 30 s, and "final" with the counts after everything is closed.
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import sys
import threading
import time
from pathlib import Path

import psutil

from bench.soak.script import Script
from engine import paths
from engine.runtime.duplex_files import OUTPUT_RATE, warm_up
from engine.runtime.session import load_shared, open_session
from engine.settings import load_settings
from engine.timeline.events import Kind

PROGRESS_EVERY_S = 30.0
DRAIN_S = 20.0  # after the mic ends, how long Venus may finish speaking
GRACE_S = 5.0  # after close, how long threads and child processes get to end before they count as left


def _say(kind: str, **data) -> None:
    print(json.dumps({"event": kind, **data}, default=str), flush=True)


def _new_threads(before: set[threading.Thread]) -> list[str]:
    return sorted(f"{t.name} (daemon={t.daemon})" for t in threading.enumerate() if t not in before and t.is_alive())


def _settle(check, grace_s: float = GRACE_S):
    """`check()` again and again until it returns nothing or `grace_s` passed; its last answer."""
    deadline = time.monotonic() + grace_s
    left = check()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = check()
    return left


def _rows_written(conversation_id: str) -> int:
    with sqlite3.connect(paths.database_file()) as db:
        return db.execute("SELECT count(*) FROM events WHERE conversation_id = ?", (conversation_id,)).fetchone()[0]


class _McpDriver:
    """Submits the script's MCP calls when their time comes and cancels the ones meant to be cancelled."""

    def __init__(self, script: Script, harness) -> None:
        self.harness = harness
        self.pending = sorted(script.mcp_calls, key=lambda c: c.at_s)
        self.cancels: list[tuple[float, str]] = []
        self.submitted: dict[str, str] = {}  # task id -> tool

    def tick(self, now_s: float) -> None:
        while self.pending and self.pending[0].at_s <= now_s:
            call = self.pending.pop(0)
            task_id = self.harness.submit(call.tool, dict(call.arguments))
            self.submitted[task_id] = call.tool
            if call.cancel_after_s is not None:
                self.cancels.append((now_s + call.cancel_after_s, task_id))
        for due, task_id in [c for c in self.cancels if c[0] <= now_s]:
            self.harness.cancel(task_id, "the soak's scheduled cancel")
            self.cancels.remove((due, task_id))


def run(mic: Path, script_path: Path, work: Path) -> int:
    """Run the session to the end of the mic file and report; 0 when it ran to the end."""
    script = Script.load(script_path)
    me = psutil.Process()
    baseline_threads = set(threading.enumerate())
    result = load_settings()
    settings = result.settings
    if result.problem:
        _say("warning", text=result.problem)
    audio = settings.audio.model_copy(update={"echo_cancellation": False, "echo_guard": False})
    settings = settings.model_copy(update={"audio": audio})  # as `venus duplex` does for a user-only input
    shared = load_shared(settings, speech=True)
    warm_up(settings, shared)
    before_session = set(threading.enumerate())
    children_before = {p.pid for p in me.children(recursive=True)}
    session = open_session(settings, mic=mic, speaker=work / "venus.wav", persist=True, harness=True,
                           shared=shared, output_rate=OUTPUT_RATE)
    seen = [len(session.timeline)]  # events appended before the counter subscribed

    def count(_event) -> None:
        seen[0] += 1

    session.timeline.subscribe(count)
    started = time.monotonic()
    _say("open", conversation_id=session.timeline.conversation_id, pid=me.pid, rss_mb=round(me.memory_info().rss / 2**20, 1))
    if not session.harness.wait_mcp_started(timeout_s=30):  # servers start in the background
        _say("warning", text="the soak MCP server had not started after 30 s")
    driver = _McpDriver(script, session.harness)
    next_progress = PROGRESS_EVERY_S
    finished = session.speech.source.finished
    while not finished.wait(0.25):
        now_s = time.monotonic() - started
        driver.tick(now_s)
        if now_s >= next_progress:
            next_progress += PROGRESS_EVERY_S
            _say("progress", t_s=round(now_s, 1), events=len(session.timeline), threads=threading.active_count(),
                 os_threads=me.num_threads(), active_tasks=len(session.harness.active_tasks()))
    deadline = time.monotonic() + DRAIN_S
    while time.monotonic() < deadline and not session.runtime.wait_idle(timeout=0.2):
        driver.tick(time.monotonic() - started)
    driver.tick(float("inf"))  # the last scheduled cancels
    session.harness.flush()
    mcp_children = [p.pid for p in me.children(recursive=True) if p.pid not in children_before]
    _say("closing", t_s=round(time.monotonic() - started, 1), mcp_processes=mcp_children,
         rss_mb=round(me.memory_info().rss / 2**20, 1), events=len(session.timeline))
    session.close()
    events = session.timeline.events()
    appended = len(events)
    threads_left = _settle(lambda: _new_threads(before_session))
    processes_left = _settle(lambda: [f"{p.pid} {p.name()}" for p in me.children(recursive=True) if p.is_running()])
    rows = _rows_written(session.timeline.conversation_id)
    shared.close()
    threads_left_all = _settle(lambda: _new_threads(baseline_threads))
    kinds = [e.kind for e in events]
    tasks = {e.task_id: e for e in events if e.kind in (Kind.DELEGATION_RESULT, Kind.DELEGATION_FAILED,
                                                        Kind.DELEGATION_CANCELLED)}
    bench_ends = [tasks[t].kind for t in driver.submitted if t in tasks]
    model_mcp = [e.tool for e in events if e.kind == Kind.CONTROL_DECISION and e.tool.startswith("soak__")]
    intents = [e.tool for e in events if e.kind == Kind.DELEGATION_DISPATCHED and e.turn_id
               and not e.tool.startswith("soak__")]
    _say("final", appended=appended, appended_counted=seen[0], rows_written=rows,
         threads_left_after_session=threads_left, threads_left_after_models=threads_left_all,
         processes_left=processes_left, mcp_processes=mcp_children,
         asr_finals=kinds.count(Kind.ASR_FINAL), answers=kinds.count(Kind.ASSISTANT_TURN_END),
         interruptions=kinds.count(Kind.INTERRUPTION), reminders_fired=kinds.count(Kind.REMINDER_FIRED),
         intent_tasks=len(intents), intent_tools=sorted(set(intents)), model_mcp_calls=len(model_mcp),
         mcp_submitted=len(driver.submitted), mcp_results=bench_ends.count(Kind.DELEGATION_RESULT),
         mcp_failed=bench_ends.count(Kind.DELEGATION_FAILED), mcp_cancelled=bench_ends.count(Kind.DELEGATION_CANCELLED),
         mcp_unfinished=len(driver.submitted) - len(bench_ends),
         errors=sum(1 for e in events if e.kind == Kind.SYSTEM_NOTICE and getattr(e, "level", "") == "error"))
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.soak.session --mic MIC.wav --script SCRIPT.json --work DIR` (run.py starts it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mic", type=Path, required=True)
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    return run(args.mic, args.script, args.work)


if __name__ == "__main__":
    sys.exit(main())
