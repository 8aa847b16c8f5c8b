"""The shell command tool: off by default; when the user turns it on, it still asks every time."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from harness.sandbox import AllowedRoots
from harness.tool import Permission, Tool, ToolContext, ToolOutput, ToolSpec

SHELL_TIMEOUT_S = 60.0


def _shell_argv(command: str) -> list[str]:
    if sys.platform == "win32":
        return ["powershell", "-NoProfile", "-NonInteractive", "-Command", command]
    return ["/bin/sh", "-c", command]


def shell_tool(roots: AllowedRoots) -> Tool:
    """run_shell_command: runs in the first allowed folder (or home), in its own killable process group."""

    def run(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        cwd = roots.roots[0] if roots else Path.home()
        ctx.progress(0, f"running {arguments['command'][:60]}")
        result = ctx.run_process(_shell_argv(arguments["command"]), cwd=cwd,
                                 timeout_s=arguments.get("timeout_s", SHELL_TIMEOUT_S))
        verdict = "succeeded" if result.returncode == 0 else f"failed with exit code {result.returncode}"
        return ToolOutput(summary=f"The command {verdict}", data={
            "exit_code": result.returncode, "stdout": result.stdout, "stderr": result.stderr,
            "truncated": result.truncated, "cwd": str(cwd)})

    return Tool(ToolSpec(
        name="run_shell_command",
        description="Run a shell command on the user's computer. The user must approve each command.",
        parameters={"type": "object", "additionalProperties": False, "required": ["command"], "properties": {
            "command": {"type": "string", "minLength": 1, "maxLength": 4000},
            "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 600}}},
        permission=Permission.OFF,
        max_permission=Permission.ASK,
        question="run this command: {command}",
        idempotent=False,
    ), run)
