"""SIGKILL in the middle of tasks, then restart: idempotent work is resumed, the rest is reported; none is lost."""

from __future__ import annotations

from pathlib import Path

from harness_support import (
    crash_mid_tasks,
    crash_test_tools,
    make_harness,
    task_events,
    wait_final,
    wait_until,
)

from engine.timeline.events import (
    ConfirmationRequested,
    DelegationDispatched,
    DelegationFailed,
    DelegationProgress,
    DelegationResult,
    SystemNotice,
)
from harness import TaskState, TaskStore


def test_sigkill_mid_task_then_restart_resumes_or_reports(tmp_path: Path):
    store_path, markers = tmp_path / "tasks.db", tmp_path / "markers"
    markers.mkdir()
    ids = crash_mid_tasks(store_path, markers)

    before = {r.id: r.state for r in TaskStore(store_path).all_tasks()}
    assert before[ids["resumable"]] is TaskState.RUNNING and before[ids["effectful"]] is TaskState.RUNNING
    assert before[ids["queued"]] is TaskState.QUEUED and before[ids["confirming"]] is TaskState.CONFIRMING

    harness, timeline = make_harness(extra_tools=crash_test_tools(markers), store_path=store_path, workers=2)
    try:
        resumed = wait_final(timeline, ids["resumable"], timeout_s=60)
        assert isinstance(resumed, DelegationResult) and resumed.result == {"count": 20}
        events = task_events(timeline, ids["resumable"])
        assert isinstance(events[0], DelegationDispatched)
        assert isinstance(events[1], DelegationProgress) and events[1].status == "resumed after a restart"

        reported = wait_final(timeline, ids["effectful"])
        assert isinstance(reported, DelegationFailed) and reported.code == "interrupted"
        assert "send_slowly" in reported.error and "not run again" in reported.error
        assert any(isinstance(e, SystemNotice) and e.code == "task-interrupted" for e in timeline.events())

        assert isinstance(wait_final(timeline, ids["queued"]), DelegationResult)
        wait_until(lambda: any(isinstance(e, ConfirmationRequested) for e in
                               task_events(timeline, ids["confirming"])), what="the confirmation asked again")

        started = sorted(p.name.split("-")[0] for p in markers.iterdir())
        assert started.count("send_slowly") == 1  # the effectful task never ran twice
        assert started.count("count_slowly") == 3  # resumable twice (before and after), queued once
        after = {r.id: r.state for r in harness.store.all_tasks()}
        assert after[ids["resumable"]] is TaskState.SUCCEEDED
        assert after[ids["effectful"]] is TaskState.INTERRUPTED
        assert after[ids["confirming"]] is TaskState.CONFIRMING
    finally:
        harness.shutdown()
