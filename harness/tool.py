"""Typed tools: a name, a description for the model, a JSON schema for its arguments and a permission level."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import jsonschema

from engine.errors import ToolError
from harness.process import ProcessResult, run_isolated


class Permission(StrEnum):
    """What the harness does when the model calls a tool."""

    ALLOW = "allow"  # run it
    ASK = "ask"  # ask the user every time, showing the exact arguments
    OFF = "off"  # refuse it

    def at_most(self, ceiling: Permission) -> Permission:
        """The stricter of this level and `ceiling` (off > ask > allow)."""
        order = [Permission.ALLOW, Permission.ASK, Permission.OFF]
        return order[max(order.index(self), order.index(ceiling))]


class TaskCancelled(Exception):
    """Raised inside a tool when its task was cancelled or timed out; tools let it pass."""


class InvalidArguments(ToolError):
    """The model's arguments do not match the tool's schema; the message says exactly what to fix."""

    code = "invalid-arguments"


@dataclass(frozen=True)
class ToolSpec:
    """What the model and the permission gate know about a tool."""

    name: str  # unique, [A-Za-z0-9_-], what the model calls
    description: str  # one or two sentences for the model
    parameters: Mapping[str, Any]  # JSON schema (an object schema) for the arguments
    # default level; settings may override it. Ask unless the tool declares itself harmless: anything with an
    # effect outside Venus's own data and the allowed folders (opening things, the clipboard, a shell, a
    # third-party server) must have the user's word each time until the user says otherwise
    permission: Permission = Permission.ASK
    max_permission: Permission = Permission.ALLOW  # the loosest level settings may give (shell: ask)
    idempotent: bool = True  # safe to run again after a crash (resumed instead of reported)
    source: str = "built-in"  # where it comes from: "built-in" or "MCP server NAME"
    # what a call does, in words for the user's yes: "open {target}" (filled from the arguments)
    question: str = ""

    def __post_init__(self) -> None:
        if not self.name or not all(c.isalnum() or c in "_-" for c in self.name) or len(self.name) > 64:
            raise ValueError(f"tool name {self.name!r} must be 1-64 characters of letters, digits, '_' or '-'")
        if not self.description.strip():
            raise ValueError(f"tool {self.name!r} needs a description for the model")
        if self.parameters.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: parameters must be a JSON object schema")
        jsonschema.Draft202012Validator.check_schema(dict(self.parameters))


def describe_call(spec: ToolSpec, arguments: Mapping[str, Any], limit: int = 80) -> str:
    """A call in words, for the question the user answers: "open https://example.com", "run this command: ls"."""
    values = {k: _short(v, limit) for k, v in arguments.items()}
    if spec.question:
        try:
            return spec.question.format_map(values)
        except (KeyError, IndexError, ValueError):
            pass  # an argument the wording needs is missing: say it plainly instead
    what = f"use the {spec.name.split('__')[-1].replace('_', ' ')} tool"
    if spec.source != "built-in":
        what += f" of {spec.source}"
    listed = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in values.items())
    return f"{what} with {listed}" if listed else what


def _short(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: a short line the assistant can speak and the data itself (untrusted)."""

    summary: str  # e.g. "Found 3 files named report"
    data: Any = None  # JSON-ready result


class ToolContext:
    """What a running tool may use: progress reports, cancellation checks and killable subprocesses."""

    def __init__(
        self,
        task_id: str,
        report: Callable[[float, str], None],
        cancel_event: threading.Event,
    ) -> None:
        self.task_id = task_id
        self._report = report
        self._cancel = cancel_event
        self._processes: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        """True once the task was cancelled or timed out."""
        return self._cancel.is_set()

    def check_cancelled(self) -> None:
        """Raise TaskCancelled when the task should stop; call it between steps of long work."""
        if self._cancel.is_set():
            raise TaskCancelled(self.task_id)

    def progress(self, percent: float, status: str = "") -> None:
        """Report progress (0-100) and a status line; also a cancellation point."""
        self.check_cancelled()
        self._report(max(0.0, min(100.0, float(percent))), status)

    def run_process(
        self, argv: Sequence[str], *, cwd: Path | None = None, input_bytes: bytes | None = None,
        timeout_s: float | None = None, env: Mapping[str, str] | None = None,
    ) -> ProcessResult:
        """Run a subprocess in its own process group; cancelling the task kills the whole group."""
        self.check_cancelled()
        return run_isolated(
            argv, cwd=cwd, input_bytes=input_bytes, timeout_s=timeout_s, env=env,
            cancel_event=self._cancel,
        )


class ToolHandler(Protocol):
    """The callable behind a tool: validated arguments in, a ToolOutput out."""

    def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput: ...


@dataclass(frozen=True)
class Tool:
    """A tool the harness can run: its spec and its handler."""

    spec: ToolSpec
    handler: ToolHandler = field(compare=False)
    # why the tool cannot run on this machine right now (no clipboard program, no display), or None when it can
    unavailable: Callable[[], str | None] = field(default=lambda: None, compare=False)

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.spec.name


def _describe_error(err: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in err.absolute_path)
    return f"argument '{where}': {err.message}" if where else err.message


class ToolRegistry:
    """All tools the harness knows, with their permission levels after settings overrides."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}
        self._overrides = {k: Permission(v) for k, v in (overrides or {}).items()}
        self._lock = threading.Lock()

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add a tool; a second tool with the same name is refused unless `replace`."""
        with self._lock:
            if tool.name in self._tools and not replace:
                raise ValueError(f"a tool named {tool.name!r} is already registered")
            self._tools[tool.name] = tool
            self._validators[tool.name] = jsonschema.Draft202012Validator(dict(tool.spec.parameters))

    def unregister(self, name: str) -> None:
        """Remove a tool (e.g. when its MCP server stops)."""
        with self._lock:
            self._tools.pop(name, None)
            self._validators.pop(name, None)

    def get(self, name: str) -> Tool:
        """The tool called `name`; ToolError naming the known tools when there is none."""
        with self._lock:
            tool = self._tools.get(name)
            known = sorted(self._tools)
        if tool is None:
            raise ToolError(f"there is no tool named {name!r}", fix=f"use one of: {', '.join(known)}")
        return tool

    def names(self) -> list[str]:
        """Registered tool names, sorted."""
        with self._lock:
            return sorted(self._tools)

    def set_overrides(self, overrides: Mapping[str, str]) -> None:
        """Replace the settings' per-tool levels; they apply to the next call, confirmation and restored task."""
        levels = {k: Permission(v) for k, v in overrides.items()}
        with self._lock:
            self._overrides = levels

    def describe(self) -> list[dict[str, Any]]:
        """Every tool as {name, description, level, default, max (the loosest level allowed), source, available,
        why}, sorted by name."""
        rows = []
        for name in self.names():
            tool = self.get(name)
            try:
                why = tool.unavailable()
            except Exception as exc:  # a broken check must not hide the tool from the list
                why = f"could not check: {exc}"
            rows.append({"name": name, "description": tool.spec.description, "level": self.permission(name).value,
                         "default": tool.spec.permission.value, "max": tool.spec.max_permission.value,
                         "source": tool.spec.source,
                         "available": why is None, "why": why or ""})
        return rows

    def permission(self, name: str) -> Permission:
        """The level in force: the settings override (or the tool's default), capped by its max level."""
        spec = self.get(name).spec
        with self._lock:
            level = self._overrides.get(name, spec.permission)
        return level.at_most(spec.max_permission)

    def validate(self, name: str, arguments: Any) -> dict[str, Any]:
        """Check arguments against the tool's schema; InvalidArguments lists every problem precisely."""
        tool = self.get(name)
        if not isinstance(arguments, dict):
            raise InvalidArguments(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}")
        with self._lock:
            validator = self._validators[tool.name]
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if errors:
            details = "; ".join(_describe_error(e) for e in errors)
            raise InvalidArguments(f"{name}: {details}", fix=f"call {name} again with arguments matching its schema")
        return arguments

    def tool_specs(self, include_off: bool = False) -> list[dict[str, Any]]:
        """Specs for the model: {name, description, parameters}; tools that are off are left out."""
        specs = []
        for name in self.names():
            if not include_off and self.permission(name) is Permission.OFF:
                continue
            spec = self.get(name).spec
            specs.append({"name": spec.name, "description": spec.description, "parameters": dict(spec.parameters)})
        return specs
