"""Harness benchmark: dispatch overhead per task (median) and events per second through the timeline.

Runs N trivial tasks submitted at once through the real harness (thread pool, SQLite task store, event pump,
in-memory timeline) and, side by side in the same run, a bare thread pool appending the same events, so the printed ratio
does not depend on the machine. Run: .venv/bin/python -m bench.bench_harness [N] [workers]  (default 200 tasks, 4 workers)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.settings import HarnessSettings  # noqa: E402
from engine.timeline import Timeline  # noqa: E402
from engine.timeline.events import Event, Kind  # noqa: E402
from harness import Harness, Permission, Tool, ToolContext, ToolOutput, ToolSpec  # noqa: E402


def _noop(arguments: dict, ctx: ToolContext) -> ToolOutput:
    ctx.progress(50, "half way")
    return ToolOutput(summary="done", data={"n": arguments["n"]})


NOOP = Tool(ToolSpec(name="noop", description="Do nothing (benchmark).",
                     parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
                     permission=Permission.ALLOW), _noop)


def main() -> None:
    """Print the medians, the ratio and the event rate."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    with tempfile.TemporaryDirectory() as home:
        os.environ["VENUS_DATA_DIR"] = home
        timeline = Timeline()
        finished_at: dict[str, float] = {}
        done = threading.Event()

        def watch(event: Event) -> None:
            if event.kind == Kind.DELEGATION_RESULT:
                finished_at[event.task_id] = time.perf_counter()
                if len(finished_at) == count:
                    done.set()

        timeline.subscribe(watch)
        harness = Harness(HarnessSettings(workers=workers), timeline.append, extra_tools=(NOOP,),
                          store_path=Path(home) / "tasks.db")
        submitted_at: dict[str, float] = {}
        start = time.perf_counter()
        for n in range(count):
            t0 = time.perf_counter()
            submitted_at[harness.submit("noop", {"n": n})] = t0
        submit_done = time.perf_counter()
        done.wait(600)
        end = time.perf_counter()
        harness.flush()
        events = len(timeline)
        harness.shutdown()

    baseline_per_task = _bare_pool(count, workers)
    latency = [finished_at[t] - submitted_at[t] for t in submitted_at]
    per_task = (end - start) / count
    print(f"tasks: {count} submitted at once, workers: {workers}, events on the timeline: {events}")
    print(f"submit() on the caller's thread, mean:      {(submit_done - start) / count * 1e3:8.3f} ms")
    print(f"submit → result on the timeline, median:    {statistics.median(latency) * 1e3:8.3f} ms")
    print(f"dispatch overhead per task (wall / tasks):  {per_task * 1e3:8.3f} ms")
    print(f"bare thread pool + timeline, same events:   {baseline_per_task * 1e3:8.3f} ms per task")
    print(f"ratio harness / bare pool:                  {per_task / baseline_per_task:8.1f}x "
          "(the cost of persisting every lifecycle step, validation and the event pump)")
    print(f"events/s through the timeline:              {events / (end - start):8.0f}")


def _bare_pool(count: int, workers: int) -> float:
    """Wall time per task for the same tool and the same five events with no store, validation or pump."""
    from concurrent.futures import ThreadPoolExecutor

    from engine.timeline.events import DelegationDispatched, DelegationProgress, DelegationResult

    timeline = Timeline()

    class _Ctx(ToolContext):
        def __init__(self, task_id: str) -> None:
            super().__init__(task_id, lambda p, s: timeline.append(
                DelegationProgress(task_id=task_id, percent=p, status=s)), threading.Event())

    def job(n: int) -> None:
        task_id = f"t{n}"
        timeline.append(DelegationProgress(task_id=task_id, state="running"))
        out = _noop({"n": n}, _Ctx(task_id))
        timeline.append(DelegationResult(task_id=task_id, tool="noop", summary=out.summary, result=out.data))

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for n in range(count):
            timeline.append(DelegationDispatched(task_id=f"t{n}", tool="noop", arguments={"n": n}))
            timeline.append(DelegationProgress(task_id=f"t{n}", state="queued"))
            pool.submit(job, n)
    return (time.perf_counter() - start) / count


if __name__ == "__main__":
    main()
