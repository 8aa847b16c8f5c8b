"""MCP servers in the usual `mcpServers` shape; their tools join the registry with a permission level.

Built on the `mcp` 2.x client (`mcp.Client`), pinned to `>=2.3,<3` on purpose: 2.0 replaced 1.x's
ClientSession-first API, so a future 3.x may again change what this module calls.
Each server lives on its own thread and asyncio loop and starts in the background, so a hung one delays nothing.
A local server is spawned here (not by `mcp.client.stdio`) so that its process group is known: the group is
killed whole when the server stops, misses its start timeout or sends a runaway message. A crash removes its
tools and restarts it with back-off; tool results are cut to `max_output_bytes` with a visible "truncated" marker.
Secrets: an `env` (or `headers`) value written "keyring:NAME" is read from the OS keyring at spawn time, handed
to the server process only, and masked everywhere the harness writes text.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import json
import logging
import math
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import anyio

from engine.errors import ToolError
from harness.process import cap_text, kill_process_group
from harness.secrets import SecretVault
from harness.tool import Permission, TaskCancelled, Tool, ToolContext, ToolOutput, ToolSpec

log = logging.getLogger(__name__)

DEFAULT_MAX_OUTPUT_BYTES = 1_000_000  # a tool result is cut here unless the harness says otherwise
RESTART_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 16.0)  # waits before each restart after a crash; then it gives up
STABLE_S = 60.0  # a server that ran this long before crashing gets the whole set of restarts again
STOP_GRACE_S = 1.0  # after its stdin closes, how long a running server may take to exit before its group is killed
MAX_MESSAGE_BYTES = 128 * 1024 * 1024  # one JSON-RPC line longer than this means a runaway server: it is killed
STDERR_LOG_BYTES = 64 * 1024  # stderr logged per run of a server; the rest is read and dropped
_STDERR_LINE_BYTES = 4096  # a longer stderr line is not logged
_FIX = "check its command, arguments and secrets in Settings → MCP servers"

_KNOWN_KEYS = {"command", "args", "env", "cwd", "url", "headers", "permission", "disabled", "type",
               "start_timeout_s"}


@dataclass(frozen=True)
class MCPServerConfig:
    """One entry of `mcpServers`: a local command (stdio) or a remote `url` (streamable HTTP)."""

    name: str  # the key in `mcpServers`; prefixes its tools' names
    command: str = ""  # executable for a local server
    args: tuple[str, ...] = ()  # its arguments
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment; "keyring:NAME" values are secrets
    cwd: str | None = None  # working folder for a local server
    url: str = ""  # endpoint of a remote server
    headers: Mapping[str, str] = field(default_factory=dict)  # HTTP headers for a remote one (keyring: allowed)
    permission: Permission = Permission.ASK  # default level of its tools (third-party code asks first)
    start_timeout_s: float = 30.0  # how long to wait for the server to list its tools

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,30}", self.name):
            raise ValueError(f"MCP server name {self.name!r} must be 1-30 letters, digits, '_' or '-'")
        if bool(self.command) == bool(self.url):
            raise ValueError(f"MCP server {self.name!r} needs exactly one of 'command' or 'url'")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: url must start with http:// or https://")
        for label, mapping in (("env", self.env), ("headers", self.headers)):
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
                raise ValueError(f"MCP server {self.name!r}: every {label} key and value must be a string")
        if self.start_timeout_s <= 0:
            raise ValueError(f"MCP server {self.name!r}: start_timeout_s must be positive")

    @classmethod
    def from_dict(cls, name: str, raw: Mapping[str, Any]) -> MCPServerConfig:
        """Read one `mcpServers` entry; ValueError names the server and the bad key."""
        unknown = set(raw) - _KNOWN_KEYS
        if unknown:
            raise ValueError(f"MCP server {name!r}: unknown keys {sorted(unknown)}; known: {sorted(_KNOWN_KEYS)}")
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"MCP server {name!r}: 'args' must be a list of strings")
        try:
            permission = Permission(raw.get("permission", "ask"))
        except ValueError:
            raise ValueError(f"MCP server {name!r}: permission must be allow, ask or off") from None
        return cls(name=name, command=raw.get("command", ""), args=tuple(args), env=dict(raw.get("env", {})),
                   cwd=raw.get("cwd"), url=raw.get("url", ""), headers=dict(raw.get("headers", {})),
                   permission=permission, start_timeout_s=float(raw.get("start_timeout_s", 30.0)))


class MCPState(StrEnum):
    """What happened to a server, as the harness hears it (also the tail of its notice code)."""

    READY = "ready"  # it listed its tools, on its first start or after a restart
    FAILED = "failed"  # it never started: bad command, missing secret, or no answer within its start timeout
    CRASHED = "crashed"  # it stopped by itself while running; its tools left and a restart follows
    GAVE_UP = "gave-up"  # it kept failing, so it is no longer restarted


@dataclass(frozen=True)
class MCPStatus:
    """A change in a server's life: its new state, the tools that joined (READY) or left, and words for the user."""

    server: str
    state: MCPState
    tools: tuple[Tool, ...]
    text: str


@dataclass(frozen=True)
class _Run:
    """How one run of a server ended."""

    ready: bool  # it listed its tools
    reason: str  # why it ended, in words
    uptime_s: float


def _reason(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap the real one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


async def _lines(stream: Any, max_bytes: int) -> AsyncIterator[bytes | None]:
    """The lines of a byte stream, without newlines; None stands for a line over `max_bytes`, which is dropped."""
    buffer = bytearray()
    skipping = False
    async for chunk in stream:
        searched = len(buffer)
        buffer += chunk
        while (end := buffer.find(b"\n", searched)) >= 0:
            if not skipping:
                yield bytes(buffer[:end])
            skipping = False
            del buffer[:end + 1]
            searched = 0
        if len(buffer) > max_bytes:
            if not skipping:
                yield None
            skipping = True
            buffer.clear()
    if buffer and not skipping:
        yield bytes(buffer)


class MCPServerConnection:
    """One server, kept running on its own thread and asyncio loop until `stop()`.

    `start()` returns at once; `on_status` hears when its tools are ready, why it failed, that it crashed (a
    restart with back-off follows) or that restarts were given up. It is called on the server's thread.
    """

    def __init__(self, config: MCPServerConfig, vault: SecretVault, *,
                 on_status: Callable[[MCPStatus], None] | None = None,
                 max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> None:
        self.config = config
        self.max_output_bytes = max_output_bytes  # a tool result longer than this is cut and marked
        self.tools: tuple[Tool, ...] = ()  # the registry tools of the current (or last) run
        self._vault = vault
        self._on_status = on_status or (lambda status: None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scope: anyio.CancelScope | None = None
        self._client: Any = None
        self._pid: int | None = None
        self._serving = False
        self._lost: anyio.Event | None = None
        self._lost_reason = ""
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=3)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, name=f"venus-mcp-{config.name}", daemon=True)

    @property
    def running(self) -> bool:
        """True while the server is up and its tools can be called."""
        return self._client is not None

    def start(self) -> None:
        """Start the server in the background; `on_status` reports the outcome."""
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the server and its restarts, killing a local server's whole process group; waits for its thread."""
        self._stopping.set()
        loop, scope = self._loop, self._scope
        if loop is not None and scope is not None:
            with suppress(RuntimeError):  # the loop has already ended
                loop.call_soon_threadsafe(scope.cancel)
        if self._thread.ident is not None:
            self._thread.join(timeout_s)
        if self._thread.is_alive() and self._pid is not None:
            kill_process_group(self._pid)  # its thread is stuck; the processes must go all the same

    def call(self, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> Any:
        """Call a tool on the server from a worker thread; a cancelled task abandons the call."""
        loop, client = self._loop, self._client
        if loop is None or client is None:
            raise ToolError(f"MCP server {self.config.name!r} is not running",
                            fix="wait for it to restart, or " + _FIX)
        try:
            future = asyncio.run_coroutine_threadsafe(client.call_tool(tool, arguments), loop)
        except RuntimeError as exc:  # its loop ended in between
            raise ToolError(f"MCP server {self.config.name!r} is not running", fix=_FIX) from exc
        while True:
            try:
                return future.result(timeout=0.1)
            except concurrent.futures.TimeoutError:
                if ctx.cancelled:
                    future.cancel()
                    raise TaskCancelled(ctx.task_id) from None
            except Exception as exc:  # the server died or broke the protocol mid-call
                raise ToolError(f"MCP server {self.config.name!r} failed during {tool}: {_reason(exc)}") from exc

    # ---- the server's thread ----------------------------------------------------------------------------------

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._supervise())
        except BaseException:  # noqa: BLE001 - the thread must not die silently
            log.exception("MCP server %s: its thread failed", self.config.name)

    def _status(self, state: MCPState, tools: tuple[Tool, ...], text: str) -> None:
        if self._stopping.is_set():
            return  # a server being stopped reports nothing more
        try:
            self._on_status(MCPStatus(self.config.name, state, tools, text))
        except Exception:  # a failing listener must not end the server
            log.exception("MCP server %s: reporting %s failed", self.config.name, state)

    async def _supervise(self) -> None:
        """Run the server until stop(): a failed first start is reported once; a crash restarts it with back-off."""
        self._loop = asyncio.get_running_loop()
        name = self.config.name
        with anyio.CancelScope() as scope:
            self._scope = scope
            failures = 0
            was_ready = False
            while not self._stopping.is_set():
                run = await self._run_once(restart=was_ready)
                if self._stopping.is_set():
                    return
                if not was_ready and not run.ready:
                    self._status(MCPState.FAILED, (), str(ToolError(
                        f"MCP server {name!r} could not start: {run.reason}", fix=_FIX)))
                    return
                was_ready = True
                failures = 1 if run.uptime_s >= STABLE_S else failures + 1
                if failures > len(RESTART_DELAYS_S):
                    self._status(MCPState.GAVE_UP, (), str(ToolError(
                        f"MCP server {name!r} kept failing ({run.reason}), so Venus stopped restarting it",
                        fix=_FIX + ", then restart Venus")))
                    return
                log.info("MCP server %s: restart %d in %g s", name, failures, RESTART_DELAYS_S[failures - 1])
                await anyio.sleep(RESTART_DELAYS_S[failures - 1])

    async def _run_once(self, restart: bool) -> _Run:
        """One run: start the server, list its tools, serve calls until it ends; says whether it got ready."""
        from mcp import Client

        began = time.monotonic()
        ready = False
        self._lost, self._lost_reason = anyio.Event(), ""
        self._stderr_tail.clear()
        timeout = self.config.start_timeout_s
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as start_scope:
                async with Client(self._http_transport() if self.config.url else self._stdio_transport()) as client:
                    listing = await client.list_tools()
                    start_scope.deadline = math.inf
                    self._client, self._serving, ready = client, True, True
                    self.tools = tuple(mcp_tools(self, list(listing.tools)))
                    log.info("MCP server %s started with %d tools", self.config.name, len(self.tools))
                    self._status(MCPState.READY, self.tools, self._ready_text(restart))
                    await self._lost.wait()
            reason = f"it did not answer within {timeout:g} s" if start_scope.cancelled_caught else self._lost_reason
        except Exception as exc:
            reason = self._lost_reason or _reason(exc)
        finally:
            self._client, self._serving = None, False
        if ready and not self._stopping.is_set():
            log.warning("MCP server %s stopped unexpectedly: %s", self.config.name, reason)
            self._status(MCPState.CRASHED, self.tools, (
                f"MCP server {self.config.name!r} stopped unexpectedly ({reason}); its tools are unavailable "
                "until Venus restarts it."))
        return _Run(ready, reason or "it closed the connection", time.monotonic() - began)

    def _ready_text(self, restart: bool) -> str:
        count = f"{len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
        if restart:
            return f"MCP server {self.config.name!r} was restarted; its {count} are back."
        return f"MCP server {self.config.name!r} is ready with {count}."

    def _http_transport(self) -> Any:
        from mcp.client.streamable_http import streamable_http_client

        if not self.config.headers:
            return streamable_http_client(self.config.url)
        import httpx2

        headers = self._vault.resolve_env(dict(self.config.headers))
        return streamable_http_client(self.config.url, http_client=httpx2.AsyncClient(headers=headers))

    # ---- the local server's process ---------------------------------------------------------------------------

    @asynccontextmanager
    async def _stdio_transport(self) -> AsyncIterator[Any]:
        """The server as a child in its own process group, speaking newline-delimited JSON-RPC on stdin/stdout."""
        from mcp.client.stdio import get_default_environment
        from mcp.shared.message import SessionMessage

        env = get_default_environment() | self._vault.resolve_env(dict(self.config.env))  # secrets: from here on
        command = self.config.command
        if sys.platform == "win32":
            from mcp.os.win32.utilities import get_windows_executable_command

            command = get_windows_executable_command(command)
        with anyio.CancelScope(shield=True):  # a stop arriving mid-spawn must not leave an unowned process
            process = await anyio.open_process(
                [command, *self.config.args], env=env, cwd=self.config.cwd, stderr=subprocess.PIPE,
                start_new_session=sys.platform != "win32",
                creationflags=subprocess.CREATE_NEW_PROCESS_GROUP if sys.platform == "win32" else 0)
        self._pid = process.pid
        to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._read_stdout, process, to_session)
            tasks.start_soon(self._write_stdin, process, from_session)
            tasks.start_soon(self._log_stderr, process)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    await self._end_process(process)
                    for stream in (from_server, to_server, to_session, from_session):
                        await stream.aclose()
                tasks.cancel_scope.cancel()

    async def _read_stdout(self, process: Any, sink: Any) -> None:
        """Hand each stdout line to the session; the end of stdout (or a runaway line) ends the run."""
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        reason = ""
        async with sink:
            try:
                async for line in _lines(process.stdout, MAX_MESSAGE_BYTES):
                    if line is None:
                        reason = f"it sent a message over {MAX_MESSAGE_BYTES // 2**20} MB and was stopped"
                        break
                    line = line.strip()
                    if not line.startswith((b"{", b"[")):
                        if line:
                            log.debug("MCP server %s: not JSON-RPC on stdout: %.200r", self.config.name, line)
                        continue
                    try:
                        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except ValueError as exc:
                        log.warning("MCP server %s sent an unreadable message: %.200s", self.config.name, exc)
                        continue
                    await sink.send(SessionMessage(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                pass  # our own shutdown closed a stream under the read
        if self._lost is not None and not self._lost.is_set():
            self._lost_reason = reason or await self._exit_reason(process)
            self._lost.set()

    async def _exit_reason(self, process: Any) -> str:
        """Why a server's stdout ended, in words: its exit code and last stderr line when there is one."""
        with anyio.move_on_after(1.0):
            while process.returncode is None:
                await anyio.sleep(0.02)
        if process.returncode is None:
            why = "it closed its output"
        elif process.returncode < 0:
            why = f"it was killed by signal {-process.returncode}"
        else:
            why = f"it exited with code {process.returncode}"
        return f"{why}: {self._stderr_tail[-1]}" if self._stderr_tail else why

    async def _write_stdin(self, process: Any, source: Any) -> None:
        async with source:
            try:
                async for message in source:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8"))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass  # the server is gone; the stdout reader reports it

    async def _log_stderr(self, process: Any) -> None:
        """Log the server's stderr line by line, up to STDERR_LOG_BYTES a run; the rest is read and dropped."""
        logged = 0
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for raw in _lines(process.stderr, _STDERR_LINE_BYTES):
                line = "(a line too long to log)" if raw is None else raw.decode("utf-8", "replace").rstrip()
                self._stderr_tail.append(line[:300])
                if logged < STDERR_LOG_BYTES:
                    logged += len(line) + 1
                    log.info("mcp server %s: %s", self.config.name, line)
                    if logged >= STDERR_LOG_BYTES:
                        log.info("mcp server %s: further stderr output is not logged", self.config.name)

    async def _end_process(self, process: Any) -> None:
        """Close stdin, let a running server exit within STOP_GRACE_S, then kill its whole process group."""
        with suppress(Exception):
            await process.stdin.aclose()
        with anyio.move_on_after(STOP_GRACE_S if self._serving else 0.0):
            while process.returncode is None:
                await anyio.sleep(0.02)
        kill_process_group(process.pid)  # also what the server left behind in its group
        with anyio.move_on_after(2.0):
            while process.returncode is None:
                await anyio.sleep(0.02)
        if process.returncode is None:
            log.warning("MCP server %s (pid %d) survived the kill", self.config.name, process.pid)
        with anyio.move_on_after(1.0), suppress(Exception):
            await process.aclose()


def _content_to_data(result: Any) -> tuple[str, Any]:
    texts = [getattr(block, "text", "") for block in result.content if getattr(block, "type", "") == "text"]
    data: Any = result.structured_content if result.structured_content is not None else "\n".join(texts)
    if isinstance(data, dict) and set(data) == {"result"}:
        data = data["result"]
    return "\n".join(texts), data


def _cap(data: Any, limit_bytes: int) -> tuple[Any, bool]:
    """A result no longer than `limit_bytes`: longer text, or the JSON of longer data, is cut and marked."""
    if not isinstance(data, str):
        text = json.dumps(data, ensure_ascii=False, default=str)
        if len(text.encode("utf-8")) <= limit_bytes:
            return data, False
        data = text
    return cap_text(data, limit_bytes)


def mcp_tools(connection: MCPServerConnection, listed: list[Any]) -> list[Tool]:
    """Registry tools for a started server's listing, named "<server>__<tool>"."""
    tools = []
    server = connection.config.name
    for remote in listed:
        annotations = remote.annotations
        idempotent = bool(annotations and (annotations.read_only_hint or annotations.idempotent_hint))
        name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}__{remote.name}")[:64]
        schema = dict(remote.input_schema or {"type": "object", "properties": {}})
        schema.setdefault("type", "object")

        def handler(arguments: dict[str, Any], ctx: ToolContext, _remote: str = remote.name) -> ToolOutput:
            result = connection.call(_remote, arguments, ctx)
            text, data = _content_to_data(result)
            if result.is_error:
                raise ToolError(f"MCP tool {server}/{_remote} reported an error: {text[:500]}")
            data, cut = _cap(data, connection.max_output_bytes)
            note = f" (its output was truncated to {connection.max_output_bytes} bytes)" if cut else ""
            return ToolOutput(summary=f"{server} {_remote} finished{note}", data=data)

        try:
            spec = ToolSpec(name=name, description=f"[MCP server {server}] {remote.description or remote.name}",
                            parameters=schema, permission=connection.config.permission, idempotent=idempotent,
                            source=f"MCP server {server}")
        except Exception as exc:  # one malformed tool must not hide the server's other tools
            log.warning("MCP server %s: skipping tool %s (%s)", server, remote.name, exc)
            continue
        tools.append(Tool(spec, handler))
    return tools
