"""The task executor: a thread pool running tools through queued → running → an end state, all persisted."""

from __future__ import annotations

import itertools
import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from engine.errors import StorageError, ToolError
from engine.timeline.events import (
    ConfirmationAnswered,
    ConfirmationRequested,
    DelegationCancelled,
    DelegationDispatched,
    DelegationFailed,
    DelegationProgress,
    DelegationResult,
    Event,
    SystemNotice,
)
from harness.emitter import EventPump
from harness.scheduler import DeadlineScheduler, Scheduled
from harness.secrets import Redactor
from harness.store import TaskRecord, TaskState, TaskStore
from harness.tool import Permission, TaskCancelled, Tool, ToolContext, ToolOutput, ToolRegistry, describe_call

log = logging.getLogger(__name__)

ANSWER_SOURCES = ("ui", "voice", "timeout")  # who may answer a confirmation; tool output is never one of them
END_RETRY_MAX_S = 60.0  # an end state the store refused is retried after 1, 2, 4 … s, at most this far apart


@dataclass(frozen=True)
class ExecutorOptions:
    """How the executor runs tasks."""

    workers: int = 4  # threads running tools at once
    task_timeout_s: float = 120.0  # a running task past this is stopped and reported as timed out
    confirm_timeout_s: float = 60.0  # an unanswered confirmation is cancelled after this

    def __post_init__(self) -> None:
        if not 1 <= self.workers <= 64:
            raise ValueError(f"workers must be 1-64, got {self.workers}")
        if self.task_timeout_s <= 0 or self.confirm_timeout_s <= 0:
            raise ValueError("task_timeout_s and confirm_timeout_s must be positive")


@dataclass(eq=False)
class _Run:
    task_id: str
    tool: Tool
    arguments: dict[str, Any]
    turn_id: str
    timeout_s: float
    state: TaskState = TaskState.QUEUED
    finished: bool = False
    cancel_event: threading.Event = field(default_factory=threading.Event)
    lock: threading.RLock = field(default_factory=threading.RLock)
    deadline: Scheduled | None = None


class TaskExecutor:
    """Runs tool calls in the background and reports every step as an event; nothing is lost across restarts."""

    def __init__(self, registry: ToolRegistry, store: TaskStore, pump: EventPump, scheduler: DeadlineScheduler,
                 redactor: Redactor, options: ExecutorOptions) -> None:
        self.registry = registry
        self.store = store
        self.options = options
        self._pump = pump
        self._scheduler = scheduler
        self._redactor = redactor
        self._pool = ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="venus-harness")
        self._runs: dict[str, _Run] = {}
        self._runs_lock = threading.Lock()
        self._id_prefix = uuid.uuid4().hex[:8]  # unique per start; os.urandom is slow on some VMs, so once
        self._ids = itertools.count(1)
        self._stopping = False  # set by shutdown(): stopped work stays unfinished in the store for the next start

    # ---- requests -------------------------------------------------------------------------------------------

    def submit(self, tool_name: str, arguments: Any, turn_id: str = "", timeout_s: float | None = None) -> str:
        """Start a task for a model's tool call; returns its id at once. Problems arrive as events."""
        task_id = f"{self._id_prefix}{next(self._ids):06x}"
        args = arguments if isinstance(arguments, dict) else {"_raw": arguments}
        try:
            tool = self.registry.get(tool_name)
        except ToolError as exc:
            self._reject(task_id, tool_name, args, turn_id, str(exc), "unknown-tool")
            return task_id
        run = _Run(task_id, tool, args, turn_id, timeout_s or self.options.task_timeout_s)
        with run.lock:
            try:
                self.store.add_task(task_id, tool_name, self._redactor.scrub(args), turn_id, TaskState.QUEUED,
                                    tool.spec.idempotent)
            except StorageError as exc:  # not recorded, so not run: a restart could not tell what it did
                self._emit(DelegationDispatched(task_id=task_id, tool=tool_name, arguments=args, turn_id=turn_id))
                self._emit(DelegationFailed(task_id=task_id, tool=tool_name, code=exc.code,
                                            error=f"not started, because Venus could not record it: {exc}"))
                return task_id
            self._emit(DelegationDispatched(task_id=task_id, tool=tool_name, arguments=args, turn_id=turn_id))
            try:
                self.registry.validate(tool_name, arguments)
                level = self.registry.permission(tool_name)
            except ToolError as exc:
                self._finish(run, TaskState.FAILED, error=str(exc), code=exc.code)
                return task_id
            if level is Permission.OFF:
                self._finish(run, TaskState.FAILED, code="tool-denied",
                             error=f"the tool {tool_name!r} is turned off; the user can turn it on in "
                                   "Settings → Tools")
                return task_id
            with self._runs_lock:
                self._runs[task_id] = run
            if level is Permission.ASK:
                self._ask(run)
            else:
                self._enqueue(run, "queued", persist=False)  # the new row already says queued
        return task_id

    def cancel(self, task_id: str, reason: str = "cancelled by the user") -> bool:
        """Stop a task (cooperatively; its subprocesses are killed). False if it had already ended."""
        run = self._get(task_id)
        if run is None:
            return False
        with run.lock:
            if run.finished:
                return False
            return self._finish(run, TaskState.CANCELLED, reason=reason)

    def answer_confirmation(self, task_id: str, approved: bool, source: str = "ui") -> bool:
        """Record the user's answer to a confirmation; False when none is pending for that task."""
        if source not in ANSWER_SOURCES:
            raise ValueError(f"source must be one of {ANSWER_SOURCES}, got {source!r}")
        run = self._get(task_id)
        if run is None:
            return False
        with run.lock:
            if run.finished or run.state is not TaskState.CONFIRMING:
                return False
            if run.deadline is not None:
                run.deadline.cancel()
            self._emit(ConfirmationAnswered(task_id=task_id, approved=approved, source=source))
            if approved:
                self._enqueue(run, "approved by the user")
            elif source == "timeout":
                self._finish(run, TaskState.CANCELLED,
                             reason=f"no answer within {self.options.confirm_timeout_s:g} s, so it was not run")
            else:
                self._finish(run, TaskState.CANCELLED, reason="the user said no")
        return True

    def active(self) -> list[str]:
        """Ids of tasks not yet ended, oldest first."""
        with self._runs_lock:
            return [r.task_id for r in self._runs.values() if not r.finished]

    def awaiting_confirmation(self) -> list[str]:
        """Ids of tasks waiting for a yes or no, oldest first."""
        with self._runs_lock:
            return [r.task_id for r in self._runs.values() if r.state is TaskState.CONFIRMING and not r.finished]

    def recover(self) -> None:
        """After a restart: run again what is safe to run again, report the rest as interrupted."""
        for record in self.store.unfinished_tasks():
            self._recover_one(record)

    def shutdown(self, wait: bool = True) -> None:
        """Stop running work without ending it in the store (the next start resumes or reports it)."""
        self._stopping = True
        for task_id in self.active():
            run = self._get(task_id)
            if run is not None:
                run.cancel_event.set()  # stop the work but keep the row unfinished, so a restart sees it
        self._pool.shutdown(wait=wait, cancel_futures=True)

    # ---- lifecycle ------------------------------------------------------------------------------------------

    def _recover_one(self, record: TaskRecord) -> None:
        try:
            tool = self.registry.get(record.tool)
        except ToolError:
            tool = None
        started = record.state is TaskState.RUNNING
        turned_off = tool is not None and self.registry.permission(record.tool) is Permission.OFF
        if tool is None or turned_off or (started and not record.idempotent):
            why = ("its tool is no longer available" if tool is None
                   else "its tool is now turned off in Settings → Tools" if turned_off
                   else "it may already have had effects, so it was not run again")
            error = f"Venus stopped while '{record.tool}' was {record.state}; {why}. Ask again if still wanted."
            self._record_end(record.id, record.tool, {"state": TaskState.INTERRUPTED, "error": error,
                                                      "code": "interrupted"},
                             DelegationFailed(task_id=record.id, tool=record.tool, error=error, code="interrupted"))
            self._emit(SystemNotice(level="warning", code="task-interrupted", text=error))
            return
        run = _Run(record.id, tool, record.arguments, record.turn_id, self.options.task_timeout_s)
        with self._runs_lock:
            self._runs[record.id] = run
        with run.lock:
            self._emit(DelegationDispatched(task_id=record.id, tool=record.tool, arguments=record.arguments,
                                            turn_id=record.turn_id))
            if self.registry.permission(record.tool) is Permission.ASK:
                self._ask(run)  # the earlier answer (if any) does not carry over a restart
            else:
                self._enqueue(run, "resumed after a restart")

    def _ask(self, run: _Run) -> None:
        run.state = TaskState.CONFIRMING
        self._record_step(run.task_id, state=TaskState.CONFIRMING)  # if refused, the row says queued: asked again
        self._emit(ConfirmationRequested(
            task_id=run.task_id, tool=run.tool.name, arguments=run.arguments,
            prompt=f"May I {describe_call(run.tool.spec, run.arguments)}?", timeout_s=self.options.confirm_timeout_s,
        ))
        run.deadline = self._scheduler.call_later(
            self.options.confirm_timeout_s, lambda: self.answer_confirmation(run.task_id, False, "timeout"))

    def _enqueue(self, run: _Run, status: str, persist: bool = True) -> None:
        run.state = TaskState.QUEUED
        if persist:
            self._record_step(run.task_id, state=TaskState.QUEUED, status=status)
        self._emit(DelegationProgress(task_id=run.task_id, percent=0.0, status=status, state="queued"))
        self._pool.submit(self._execute, run)

    def _execute(self, run: _Run) -> None:
        with run.lock:
            if run.finished or run.cancel_event.is_set():
                return
            if self.registry.permission(run.tool.name) is Permission.OFF:  # turned off while it waited
                self._finish(run, TaskState.FAILED, code="tool-denied",
                             error=f"the tool {run.tool.name!r} was turned off in Settings → Tools before it ran")
                return
            try:  # recorded before it runs, so a restart knows it may have had effects
                record = self.store.get_task(run.task_id)
                self.store.update_task(run.task_id, state=TaskState.RUNNING, status="started",
                                       attempts=(record.attempts if record else 0) + 1)
            except StorageError as exc:
                self._finish(run, TaskState.FAILED, code=exc.code,
                             error=f"not started, because Venus could not record it: {exc}")
                return
            run.state = TaskState.RUNNING
            self._emit(DelegationProgress(task_id=run.task_id, percent=0.0, status="started", state="running"))
            run.deadline = self._scheduler.call_later(run.timeout_s, lambda: self._time_out(run))
        ctx = ToolContext(run.task_id, lambda p, s: self._progress(run, p, s), run.cancel_event)
        try:
            output = run.tool.handler(dict(run.arguments), ctx)
            if not isinstance(output, ToolOutput):
                output = ToolOutput(summary=f"{run.tool.name} finished", data=output)
        except TaskCancelled:
            with run.lock:
                if not run.finished and not self._stopping:
                    self._finish(run, TaskState.CANCELLED, reason="the tool stopped itself")
            return
        except ToolError as exc:
            with run.lock:
                self._finish(run, TaskState.FAILED, error=str(exc), code=exc.code)
            return
        except Exception as exc:  # a tool's bug becomes a failed task the model can explain, not a dead thread
            log.warning("tool %s failed in task %s: %s", run.tool.name, run.task_id, exc, exc_info=True)
            with run.lock:
                self._finish(run, TaskState.FAILED, error=f"{type(exc).__name__}: {exc}", code="tool-failed")
            return
        with run.lock:
            self._finish(run, TaskState.SUCCEEDED, output=output)

    def _progress(self, run: _Run, percent: float, status: str) -> None:
        with run.lock:
            if run.finished:
                raise TaskCancelled(run.task_id)
            self._record_step(run.task_id, percent=percent, status=status)
            self._emit(DelegationProgress(task_id=run.task_id, percent=percent, status=status, state="running"))

    def _time_out(self, run: _Run) -> None:
        with run.lock:
            if not run.finished:
                self._finish(run, TaskState.TIMED_OUT,
                             error=f"'{run.tool.name}' ran longer than {run.timeout_s:g} s and was stopped",
                             code="timeout")

    def _finish(self, run: _Run, state: TaskState, *, output: ToolOutput | None = None, error: str = "",
                code: str = "", reason: str = "") -> bool:
        """Move a task to an end state exactly once (caller holds run.lock); persist first, then report."""
        if run.finished:
            return False
        run.finished = True
        run.state = state
        run.cancel_event.set()  # stops cooperative work and kills subprocesses
        if run.deadline is not None:
            run.deadline.cancel()
        with self._runs_lock:
            self._runs.pop(run.task_id, None)
        scrub = self._redactor.scrub
        name = run.tool.name
        if state is TaskState.SUCCEEDED and output is not None:
            fields = {"state": state, "percent": 100.0, "summary": scrub(output.summary), "result": scrub(output.data)}
            end: Event = DelegationResult(task_id=run.task_id, tool=name, summary=output.summary, result=output.data)
        elif state is TaskState.CANCELLED:
            fields = {"state": state, "error": scrub(reason), "code": "cancelled"}
            end = DelegationCancelled(task_id=run.task_id, tool=name, reason=reason)
        else:
            fields = {"state": state, "error": scrub(error), "code": code}
            end = DelegationFailed(task_id=run.task_id, tool=name, error=error, code=code)
        self._record_end(run.task_id, name, fields, end)
        return True

    # ---- recording in the store -------------------------------------------------------------------------------

    def _record_step(self, task_id: str, **fields: Any) -> None:
        """Record a step on the way (queued, confirming, progress); a store that refuses it costs only that step."""
        try:
            self.store.update_task(task_id, **fields)
        except StorageError as exc:
            log.warning("task %s: could not record %s: %s", task_id, sorted(fields), exc)

    def _record_end(self, task_id: str, tool: str, fields: dict[str, Any], end: Event) -> None:
        """Persist a task's end state, then report it. While the store refuses it, report anyway, tell the user,
        and retry on a timer, so the row never stays 'running' (a restart before then resumes or reports it)."""
        try:
            self.store.update_task(task_id, **fields)
        except StorageError as exc:
            self._emit(end)
            self._emit(SystemNotice(level="error", code="task-not-saved", text=(
                f"'{tool}' ended ({fields['state']}), but Venus could not record that: {exc}. It keeps trying; "
                "if Venus restarts first, the task is resumed or reported as interrupted.")))
            self._retry_end(task_id, fields, attempt=1)
            return
        self._emit(end)

    def _retry_end(self, task_id: str, fields: dict[str, Any], attempt: int) -> None:
        if self._stopping:
            return  # the row stays unfinished; the next start resumes or reports it
        delay = min(END_RETRY_MAX_S, 2.0 ** (attempt - 1))

        def again() -> None:  # on the pool, so a slow store never holds up the deadline thread
            try:
                self._pool.submit(self._write_end_again, task_id, fields, attempt)
            except RuntimeError:  # the pool was shut down meanwhile
                pass

        self._scheduler.call_later(delay, again)

    def _write_end_again(self, task_id: str, fields: dict[str, Any], attempt: int) -> None:
        try:
            self.store.update_task(task_id, **fields)
        except StorageError as exc:
            log.warning("task %s: its end state still cannot be recorded (try %d): %s", task_id, attempt, exc)
            self._retry_end(task_id, fields, attempt + 1)
        else:
            log.info("task %s: its end state %s is recorded after %d retries", task_id, fields["state"], attempt)

    def _reject(self, task_id: str, tool: str, args: dict[str, Any], turn_id: str, error: str, code: str) -> None:
        try:
            self.store.add_task(task_id, tool, self._redactor.scrub(args), turn_id, TaskState.FAILED, True)
            self.store.update_task(task_id, error=error, code=code)
        except StorageError as exc:  # it never ran: there is nothing to resume or report after a restart
            log.warning("task %s: could not record its rejection: %s", task_id, exc)
        self._emit(DelegationDispatched(task_id=task_id, tool=tool, arguments=args, turn_id=turn_id))
        self._emit(DelegationFailed(task_id=task_id, tool=tool, error=error, code=code))

    def _get(self, task_id: str) -> _Run | None:
        with self._runs_lock:
            return self._runs.get(task_id)

    def _emit(self, event: Event) -> None:
        self._pump.put(event)
