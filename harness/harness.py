"""The harness facade the runtime talks to: submit, cancel, confirm, tool specs, and user replies."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from engine.errors import ToolError
from engine.settings import HarnessSettings
from engine.timeline.events import AsrFinal, Event, SystemNotice, UserText
from harness.builtin import ReminderService, builtin_tools
from harness.emitter import EventPump
from harness.executor import ExecutorOptions, TaskExecutor
from harness.mcp_bridge import MCPServerConfig, MCPServerConnection, MCPState, MCPStatus
from harness.replies import Reply, read_answer
from harness.sandbox import AllowedRoots
from harness.scheduler import DeadlineScheduler
from harness.secrets import PROCESS_REDACTOR, SecretVault, install_log_redaction
from harness.store import TaskRecord, TaskStore
from harness.task_tools import TaskTools
from harness.tool import Tool, ToolRegistry

log = logging.getLogger(__name__)


class Harness:
    """Venus's background loop: runs delegated tool calls and reports them as timeline events through `emit`.

    `emit` is usually `Timeline.append`; it is called from one harness thread, in order per task.
    """

    def __init__(
        self,
        settings: HarnessSettings,
        emit: Callable[[Event], None],
        *,
        store_path: Path | None = None,
        extra_tools: Iterable[Tool] = (),
        vault: SecretVault | None = None,
    ) -> None:
        self.settings = settings
        self.redactor = PROCESS_REDACTOR
        install_log_redaction(self.redactor)
        self.vault = vault or SecretVault(self.redactor)
        self._pump = EventPump(emit, self.redactor)
        self._scheduler = DeadlineScheduler()
        self.store = TaskStore(store_path)
        self.roots = AllowedRoots(self._existing_folders(settings.allowed_folders))
        self.registry = ToolRegistry(settings.permissions)
        self.reminders = ReminderService(self.store, self._scheduler, self._pump.put)
        for tool in [*builtin_tools(self.roots, self.store, self.reminders), *extra_tools]:
            self.registry.register(tool, replace=True)
        self.executor = TaskExecutor(
            self.registry, self.store, self._pump, self._scheduler, self.redactor,
            ExecutorOptions(settings.workers, settings.task_timeout_s, settings.confirm_timeout_s),
        )
        self.tasks = TaskTools(self.executor.active, self.store.get_task, self.executor.cancel)
        for tool in self.tasks.tools():
            self.registry.register(tool, replace=True)
        self.mcp: dict[str, MCPServerConnection] = {}  # started in the background; tools join once listed
        self._mcp_heard = threading.Condition()  # notified whenever a server's state changes
        self._mcp_states: dict[str, MCPState] = {}
        for name, raw in settings.mcp_servers.items():
            self._start_mcp(name, raw)
        self.executor.recover()
        self.reminders.restore()

    # ---- the runtime's API --------------------------------------------------------------------------------

    def submit(self, tool: str, arguments: Any, turn_id: str = "", timeout_s: float | None = None) -> str:
        """Delegate a tool call; returns the task id at once. Everything else arrives on the timeline."""
        return self.executor.submit(tool, arguments, turn_id, timeout_s)

    def cancel(self, task_id: str, reason: str = "cancelled by the user") -> bool:
        """Cancel a task; False when it had already ended."""
        return self.executor.cancel(task_id, reason)

    def answer_confirmation(self, task_id: str, approved: bool, source: str = "ui") -> bool:
        """The user's yes or no (source "ui" or "voice"); False when no confirmation was pending for it."""
        return self.executor.answer_confirmation(task_id, approved, source)

    def tool_specs(self) -> list[dict[str, Any]]:
        """Tools the model may call right now: [{name, description, parameters}]; 'off' tools are left out."""
        return self.registry.tool_specs()

    def task(self, task_id: str) -> TaskRecord | None:
        """A task's stored state."""
        return self.store.get_task(task_id)

    def active_tasks(self) -> list[str]:
        """Tasks not yet ended, oldest first."""
        return self.executor.active()

    def running_tasks(self) -> list[dict[str, Any]]:
        """The tasks not yet ended, oldest first, as {task_id, tool, title, percent, status}."""
        return self.tasks.views()

    def pending_reminders(self) -> list[dict[str, Any]]:
        """Timers and reminders not yet fired, soonest first, as {reminder_id, text, due_at, set_at} (Unix times)."""
        return [{"reminder_id": r.id, "text": r.text, "due_at": r.due_at, "set_at": r.created_at}
                for r in self.store.pending_reminders()]

    def check_call(self, tool: str, arguments: Any) -> str | None:
        """Why a call of `tool` with `arguments` cannot run (unknown, off, or arguments outside its schema),
        in words for the user; None when it can."""
        try:
            self.registry.validate(tool, arguments)
        except ToolError as exc:
            return str(exc)
        if self.registry.permission(tool).value == "off":
            return f"the {tool.replace('_', ' ')} tool is turned off in settings"
        return None

    def set_permissions(self, permissions: dict[str, str]) -> None:
        """Apply the settings' per-tool levels now: the next call, and every task still waiting, sees them.

        A task waiting for a yes whose tool was just turned off is cancelled; a queued one is refused when its
        turn comes (TaskExecutor._execute), and a restored one on the next start (TaskExecutor.recover).
        """
        self.registry.set_overrides(permissions)
        for task_id in self.pending_confirmations():
            record = self.store.get_task(task_id)
            if record is not None and self.registry.permission(record.tool).value == "off":
                self.cancel(task_id, reason=f"the {record.tool} tool was turned off in settings")

    def describe_tools(self) -> list[dict[str, Any]]:
        """Every tool with its level, default, source (built-in or MCP server) and availability here."""
        return self.registry.describe()

    def wait_mcp_started(self, timeout_s: float | None = None) -> bool:
        """Wait until every MCP server has either listed its tools or failed to start (each has its own start
        timeout, so this ends); False if `timeout_s` passed first. For listings such as `venus tools`."""
        with self._mcp_heard:
            return self._mcp_heard.wait_for(lambda: set(self.mcp) <= set(self._mcp_states), timeout_s)

    def pending_confirmations(self) -> list[str]:
        """Tasks waiting for the user's yes or no, oldest first."""
        return self.executor.awaiting_confirmation()

    def handle_user_text(self, text: str, source: str = "voice", asked: str | None = None) -> Reply | None:
        """Act on what the user said or typed: answer a pending confirmation, or cancel the newest task.

        The answer is read from the whole utterance (harness.replies.read_answer). It applies to the task it
        names ("the second one", "the note"), else to `asked`: the confirmation the runtime asked about aloud
        and the user heard. A spoken answer with nothing asked aloud answers nothing (the question may only be
        on screen, or the words were meant for someone else); a typed one answers `asked` or else the oldest
        pending question, which is the one shown first. Returns "unclear" when the answer is both yes and no,
        or names no single task: nothing is decided and the question should be asked again.
        Only call this with the user's own words; tool output and the assistant's text must never reach it.
        """
        waiting = self.pending_confirmations()
        tools = {task_id: record.tool for task_id in waiting if (record := self.store.get_task(task_id)) is not None}
        answer = read_answer(text, waiting, tools)
        if answer.reply == "cancel":
            active = self.active_tasks()
            if active:
                self.cancel(active[-1], reason=f'the user said "{text.strip()}"')
                return "cancel"
            return None
        if answer.reply is None or not waiting:
            return None
        if source == "voice" and asked not in waiting:
            return None
        if answer.reply == "unclear" or answer.ambiguous:
            return "unclear"
        target = answer.task_id or (asked if asked in waiting else waiting[0])
        self.answer_confirmation(target, answer.reply == "yes", source)
        return answer.reply

    @staticmethod
    def reads_as_answer(text: str) -> bool:
        """The words are a yes, a no or both, read from the whole utterance (whoever said them)."""
        return read_answer(text).reply in ("yes", "no", "unclear")

    @staticmethod
    def reads_as_approval(text: str) -> bool:
        """The words may approve (a yes, or a yes and a no): what only the user's own voice may say. A no only
        declines, which is safe from anyone."""
        return read_answer(text).reply in ("yes", "unclear")

    def on_timeline_event(self, event: Event) -> None:
        """A timeline subscriber: the user's transcripts and typed text may answer or cancel; nothing else can."""
        if isinstance(event, AsrFinal):
            self.handle_user_text(event.text, "voice")
        elif isinstance(event, UserText):
            self.handle_user_text(event.text, "ui")

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every event so far has been delivered to `emit`."""
        return self._pump.flush(timeout_s)

    def shutdown(self) -> None:
        """Stop workers, MCP servers and threads; unfinished tasks stay in the store for the next start."""
        self.executor.shutdown(wait=True)
        for connection in self.mcp.values():
            connection.stop()
        self._scheduler.stop()
        self._pump.stop()
        self.store.close()

    # ---- setup --------------------------------------------------------------------------------------------

    def _existing_folders(self, folders: list[str]) -> list[str]:
        usable = []
        for folder in folders:
            if Path(folder).expanduser().is_dir():
                usable.append(folder)
            else:
                self._pump.put(SystemNotice(level="warning", code="folder-missing", text=(
                    f"The allowed folder {folder} does not exist, so file tools skip it; "
                    "fix it in Settings → Tools → Allowed folders.")))
        return usable

    def _start_mcp(self, name: str, raw: dict[str, Any]) -> None:
        """Start one server on its own thread; Harness() does not wait for it (see _on_mcp_status)."""
        try:
            config = MCPServerConfig.from_dict(name, raw)
        except ValueError as exc:
            log.warning("MCP server %s not started: %s", name, exc)
            self._pump.put(SystemNotice(level="warning", code="mcp-server-failed", text=str(exc)))
            return
        if raw.get("disabled"):
            return
        connection = MCPServerConnection(config, self.vault, on_status=self._on_mcp_status,
                                         max_output_bytes=self.settings.max_tool_output_bytes)
        self.mcp[name] = connection
        connection.start()

    def _on_mcp_status(self, status: MCPStatus) -> None:
        """A server's tools join the registry when it is ready and leave when it fails; the user hears of both."""
        if status.state is MCPState.READY:
            for tool in status.tools:
                self.registry.register(tool, replace=True)
        else:
            for tool in status.tools:
                self.registry.unregister(tool.name)
        with self._mcp_heard:
            self._mcp_states[status.server] = status.state
            self._mcp_heard.notify_all()
        level = {MCPState.READY: "info", MCPState.GAVE_UP: "error"}.get(status.state, "warning")
        self._pump.put(SystemNotice(level=level, code=f"mcp-server-{status.state}", text=status.text))
