"""Tools about the tasks themselves: what is running ("what are you working on?") and stopping one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.errors import ToolError
from harness.store import TaskRecord
from harness.tool import Permission, Tool, ToolContext, ToolOutput, ToolSpec


def describe_task(tool: str, arguments: dict[str, Any]) -> str:
    """A task in a few words for people: the tool's name in words and its main argument."""
    words = tool.replace("_", " ").replace("-", " ")
    detail = next((str(v) for k, v in arguments.items() if isinstance(v, str) and v and not k.startswith("_")), "")
    return f"{words}: {detail[:60]}" if detail else words


class TaskTools:
    """list_tasks and cancel_task over the executor's live tasks."""

    def __init__(self, active: Callable[[], list[str]], record: Callable[[str], TaskRecord | None],
                 cancel: Callable[[str, str], bool]) -> None:
        self._active, self._record, self._cancel = active, record, cancel

    def views(self, exclude: str = "") -> list[dict[str, Any]]:
        """The tasks not yet ended, oldest first: {task_id, tool, title, percent, status}."""
        views = []
        for task_id in self._active():
            record = self._record(task_id)
            if task_id == exclude or record is None or record.tool in ("list_tasks", "cancel_task"):
                continue
            views.append({"task_id": task_id, "tool": record.tool, "title": describe_task(record.tool, record.arguments),
                          "percent": record.percent, "status": record.status})
        return views

    def list(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: the running tasks."""
        tasks = self.views(exclude=ctx.task_id)
        if not tasks:
            return ToolOutput(summary="No tasks are running", data={"tasks": []})
        return ToolOutput(summary=f"{len(tasks)} task{'s' if len(tasks) != 1 else ''} running: "
                          + "; ".join(t["title"] for t in tasks), data={"tasks": tasks})

    def cancel(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: stop one running task by id."""
        task_id = arguments["task_id"]
        if task_id == ctx.task_id:
            raise ToolError("a task cannot cancel itself")
        record = self._record(task_id)
        if record is None or not self._cancel(task_id, "cancelled by the user"):
            raise ToolError(f"no running task has id {task_id!r}", fix="call list_tasks for the ids")
        title = describe_task(record.tool, record.arguments)
        return ToolOutput(summary=f"Stopped {title}", data={"task_id": task_id, "title": title})

    def tools(self) -> list[Tool]:
        """The two tools, ready to register."""
        return [
            Tool(ToolSpec(name="list_tasks", permission=Permission.ALLOW, description="List the background tasks that are still running.",
                          parameters={"type": "object", "additionalProperties": False, "properties": {}}),
                 self.list),
            Tool(ToolSpec(name="cancel_task", permission=Permission.ALLOW, description="Stop a running background task by its id.",
                          parameters={"type": "object", "additionalProperties": False, "required": ["task_id"],
                                      "properties": {"task_id": {"type": "string"}}}, idempotent=False),
                 self.cancel),
        ]
