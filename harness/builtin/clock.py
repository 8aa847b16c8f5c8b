"""The local time and date, as the computer's clock has them (a model must never guess them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from harness.tool import Permission, Tool, ToolContext, ToolOutput, ToolSpec


def _now(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    now = datetime.now().astimezone()
    data = {"iso": now.isoformat(timespec="seconds"), "time": now.strftime("%H:%M"),
            "date": now.strftime("%Y-%m-%d"), "weekday": now.strftime("%A"), "timezone": now.tzname() or ""}
    return ToolOutput(summary=f"It is {now:%H:%M} on {now:%A, %Y-%m-%d}", data=data)


def clock_tool() -> Tool:
    """current_time."""
    return Tool(ToolSpec(
        name="current_time", permission=Permission.ALLOW, description="The current local time, date and weekday from the computer's clock.",
        parameters={"type": "object", "additionalProperties": False, "properties": {}},
    ), _now)
