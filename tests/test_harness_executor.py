"""The executor's lifecycle on a real timeline and a real SQLite file: progress, confirmation, cancel, timeout."""

from __future__ import annotations

import sqlite3
import threading
from collections import defaultdict
from pathlib import Path

import pytest
from harness_support import (
    TERMINAL,
    counting_tool,
    make_harness,
    stubborn_tool,
    task_events,
    wait_final,
    wait_until,
)

from engine import paths
from engine.timeline.events import (
    AsrFinal,
    AssistantTurnEnd,
    ConfirmationAnswered,
    ConfirmationRequested,
    DelegationCancelled,
    DelegationDispatched,
    DelegationFailed,
    DelegationProgress,
    DelegationResult,
    Kind,
    UserText,
)
from harness import Permission, TaskState


@pytest.fixture
def release():
    """Wakes the stubborn tool at the end of a test, so shutting the harness down never waits on it."""
    event = threading.Event()
    yield event
    event.set()


def _harness(release: threading.Event, confirm_timeout_s: float):
    return make_harness(
        extra_tools=(counting_tool(), stubborn_tool(release), counting_tool("careful_count", permission=Permission.ASK)),
        confirm_timeout_s=confirm_timeout_s,
    )


@pytest.fixture
def harness_and_timeline(release):
    harness, timeline = _harness(release, confirm_timeout_s=1.0)
    yield harness, timeline
    release.set()
    harness.shutdown()


def test_success_reports_dispatch_queue_progress_and_result_in_order(harness_and_timeline):
    harness, timeline = harness_and_timeline
    task_id = harness.submit("count_slowly", {"steps": 4, "step_s": 0.01}, turn_id="turn-7")
    final = wait_final(timeline, task_id)
    assert isinstance(final, DelegationResult)
    assert final.result == {"count": 4} and final.summary == "counted to 4"
    events = task_events(timeline, task_id)
    assert isinstance(events[0], DelegationDispatched) and events[0].turn_id == "turn-7"
    progress = [e for e in events if isinstance(e, DelegationProgress)]
    assert [p.state for p in progress[:2]] == ["queued", "running"]
    assert [p.status for p in progress[2:]] == [f"step {i} of 4" for i in range(1, 5)]
    assert events[-1] is final
    record = harness.task(task_id)
    assert record.state is TaskState.SUCCEEDED and record.result == {"count": 4} and record.attempts == 1


def test_invalid_arguments_fail_with_a_precise_error_for_the_model(harness_and_timeline):
    harness, timeline = harness_and_timeline
    task_id = harness.submit("count_slowly", {"steps": "three", "colour": "red"})
    final = wait_final(timeline, task_id)
    assert isinstance(final, DelegationFailed) and final.code == "invalid-arguments"
    assert "argument 'steps': 'three' is not of type 'integer'" in final.error
    assert "'colour' was unexpected" in final.error
    unknown = wait_final(timeline, harness.submit("count_quickly", {}))
    assert unknown.code == "unknown-tool" and "count_slowly" in unknown.error
    assert harness.task(task_id).state is TaskState.FAILED


def test_off_tool_is_refused_and_not_offered_to_the_model(harness_and_timeline):
    harness, timeline = harness_and_timeline
    assert "run_shell_command" not in [s["name"] for s in harness.tool_specs()]
    final = wait_final(timeline, harness.submit("run_shell_command", {"command": "true"}))
    assert isinstance(final, DelegationFailed) and final.code == "tool-denied"


def test_cancel_stops_a_running_task_cooperatively(harness_and_timeline):
    harness, timeline = harness_and_timeline
    task_id = harness.submit("count_slowly", {"steps": 1000, "step_s": 0.01})
    wait_until(lambda: any(isinstance(e, DelegationProgress) and e.status.startswith("step")
                           for e in task_events(timeline, task_id)), what="the first step")
    assert harness.cancel(task_id, "test says stop")
    final = wait_final(timeline, task_id)
    assert isinstance(final, DelegationCancelled) and final.reason == "test says stop"
    harness.flush()
    assert task_events(timeline, task_id)[-1] is final  # no progress after the end
    assert not harness.cancel(task_id)
    assert harness.task(task_id).state is TaskState.CANCELLED


def test_timeout_is_reported_even_when_the_tool_ignores_cancellation(harness_and_timeline, release):
    """The timeout ends the task while the tool is still asleep; its late return changes nothing."""
    harness, timeline = harness_and_timeline
    task_id = harness.submit("sleep_stubbornly", {"seconds": 600}, timeout_s=0.3)
    final = wait_final(timeline, task_id)  # the tool sleeps until released below: only the timeout can end it
    assert isinstance(final, DelegationFailed) and final.code == "timeout"
    assert harness.task(task_id).state is TaskState.TIMED_OUT
    release.set()
    harness.executor.shutdown(wait=True)  # the tool has returned "woke up" by now
    harness.flush()
    ends = [e for e in task_events(timeline, task_id) if e.kind in TERMINAL]
    assert ends == [final] and harness.task(task_id).state is TaskState.TIMED_OUT


def test_timeout_kills_a_hung_subprocess_group(harness_and_timeline, tmp_path: Path):
    """A tool's subprocess and the process it started in the background both die when the task times out."""
    harness, timeline = harness_and_timeline
    pid_file = tmp_path / "grandchild.pid"
    from harness import Permission, Tool, ToolOutput, ToolSpec

    def hang(arguments, ctx):
        ctx.run_process(["/bin/sh", "-c", f"sleep 60 & echo $! > {pid_file}; wait"])
        return ToolOutput(summary="never")

    harness.registry.register(Tool(ToolSpec(name="hang", description="Hang in a subprocess.",
                                            parameters={"type": "object"}, permission=Permission.ALLOW), hang))
    task_id = harness.submit("hang", {}, timeout_s=2.0)
    pid = int(wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the grandchild's pid"))
    assert wait_final(timeline, task_id).code == "timeout"

    def gone() -> bool:
        try:
            return "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        except FileNotFoundError:
            return True

    wait_until(gone, timeout_s=5, what="the background sleep to be killed")


@pytest.mark.parametrize("answer", ["ui-yes", "voice-yes", "voice-no", "typed-no", "timeout"])
def test_ask_tool_waits_for_the_user(release, answer):
    # only the timeout case has a short timeout: an answer never races it on a loaded machine
    harness, timeline = _harness(release, confirm_timeout_s=1.0 if answer == "timeout" else 60.0)
    try:
        _ask_and_answer(harness, timeline, answer)
    finally:
        harness.shutdown()


def _ask_and_answer(harness, timeline, answer: str) -> None:
    task_id = harness.submit("careful_count", {"steps": 2, "step_s": 0.0})
    request = wait_until(lambda: [e for e in task_events(timeline, task_id) if isinstance(e, ConfirmationRequested)])[0]
    assert request.arguments == {"steps": 2, "step_s": 0.0} and "steps 2" in request.prompt
    assert harness.pending_confirmations() == [task_id]
    if answer == "ui-yes":
        assert harness.answer_confirmation(task_id, True, "ui")
    elif answer == "voice-yes":  # the runtime asked about it aloud and the user heard the question
        assert harness.handle_user_text("Yes, go ahead.", "voice", asked=task_id) == "yes"
    elif answer == "voice-no":
        assert harness.handle_user_text("No.", "voice", asked=task_id) == "no"
    elif answer == "typed-no":
        timeline.append(UserText(text="nope"))
    final = wait_final(timeline, task_id)
    answered = [e for e in task_events(timeline, task_id) if isinstance(e, ConfirmationAnswered)]
    assert len(answered) == 1
    if answer.endswith("yes"):
        assert isinstance(final, DelegationResult) and answered[0].approved
        assert answered[0].source == ("ui" if answer == "ui-yes" else "voice")
    else:
        assert isinstance(final, DelegationCancelled) and not answered[0].approved
        assert answered[0].source == {"voice-no": "voice", "typed-no": "ui", "timeout": "timeout"}[answer]
        assert not [e for e in task_events(timeline, task_id) if isinstance(e, DelegationProgress)
                    and e.state == "running"]


def test_assistant_text_cannot_answer_a_confirmation(harness_and_timeline):
    harness, timeline = harness_and_timeline
    task_id = harness.submit("careful_count", {"steps": 1})
    wait_until(lambda: harness.pending_confirmations(), what="the confirmation")
    timeline.append(AssistantTurnEnd(text="Yes, go ahead.", heard_text="Yes, go ahead."))
    with pytest.raises(ValueError, match="source must be one of"):
        harness.answer_confirmation(task_id, True, source="tool")
    final = wait_final(timeline, task_id)
    assert isinstance(final, DelegationCancelled) and "no answer" in final.reason


def test_voice_cancel_stops_the_newest_task(harness_and_timeline):
    harness, timeline = harness_and_timeline
    older = harness.submit("count_slowly", {"steps": 2000, "step_s": 0.01})
    newer = harness.submit("count_slowly", {"steps": 2000, "step_s": 0.01})
    wait_until(lambda: len([e for e in timeline.events() if isinstance(e, DelegationProgress)
                            and e.status.startswith("step")]) >= 2, what="both tasks running")
    timeline.append(AsrFinal(text="Never mind, stop looking."))
    final = wait_final(timeline, newer)
    assert isinstance(final, DelegationCancelled) and "stop looking" in final.reason
    assert older in harness.active_tasks()
    harness.cancel(older)


def test_two_hundred_tasks_at_once_every_lifecycle_event_in_order():
    harness, timeline = make_harness(extra_tools=(counting_tool(),), workers=8)
    try:
        ids = [harness.submit("count_slowly", {"steps": 3, "step_s": 0.0}) for _ in range(200)]
        wait_until(lambda: len(timeline.events(kinds=[Kind.DELEGATION_RESULT])) == 200, timeout_s=120,
                   what="200 results")
        harness.flush()
        per_task = defaultdict(list)
        for event in timeline.events():
            per_task[getattr(event, "task_id", "")].append(event)
        expected = ["delegation_dispatched", "queued", "running", "step 1 of 3", "step 2 of 3", "step 3 of 3",
                    "delegation_result"]
        for task_id in ids:
            seen = [e.state if isinstance(e, DelegationProgress) and not e.status.startswith("step") else
                    e.status if isinstance(e, DelegationProgress) else str(e.kind) for e in per_task[task_id]]
            assert seen == expected, task_id
            seqs = [e.seq for e in per_task[task_id]]
            assert seqs == sorted(seqs)
        rows = sqlite3.connect(paths.data_dir() / "tasks.db").execute(
            "select state, count(*) from tasks group by state").fetchall()
        assert rows == [("succeeded", 200)]
    finally:
        harness.shutdown()
