"""MCP servers in the usual `mcpServers` shape; their tools join the registry with a permission level.

Built on the `mcp` 2.x client (`mcp.Client`), pinned to `>=2.3,<3` on purpose: 2.0 replaced 1.x's
ClientSession-first API, so a future 3.x may again change what this module calls.
Secrets: an `env` (or `headers`) value written "keyring:NAME" is read from the OS keyring at spawn time, handed
to the server process only, and masked everywhere the harness writes text.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.errors import ToolError
from harness.secrets import SecretVault
from harness.tool import Permission, TaskCancelled, Tool, ToolContext, ToolOutput, ToolSpec

log = logging.getLogger(__name__)

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


class MCPServerConnection:
    """A running MCP server: its own thread and asyncio loop hold the client session."""

    def __init__(self, config: MCPServerConfig, vault: SecretVault) -> None:
        self.config = config
        self._vault = vault
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._tools: list[Any] = []
        self._thread = threading.Thread(target=self._thread_main, name=f"venus-mcp-{config.name}", daemon=True)
        self._stderr_thread: threading.Thread | None = None
        self._errlog: Any = None

    def start(self) -> list[Any]:
        """Spawn or connect, and return the server's tool list; ToolError with the reason on failure."""
        self._thread.start()
        if not self._ready.wait(self.config.start_timeout_s):
            self.stop()
            raise ToolError(f"MCP server {self.config.name!r} did not answer within {self.config.start_timeout_s:g} s",
                            fix="check its command in Settings → Tools → MCP servers")
        if self._error is not None:
            raise ToolError(f"MCP server {self.config.name!r} could not start: {self._error}",
                            fix="check its command, arguments and secrets in Settings → Tools → MCP servers")
        return self._tools

    def call(self, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> Any:
        """Call a tool on the server from a worker thread; a cancelled task abandons the call."""
        if self._loop is None or self._client is None:
            raise ToolError(f"MCP server {self.config.name!r} is not running", fix="restart it from Settings")
        future = asyncio.run_coroutine_threadsafe(self._client.call_tool(tool, arguments), self._loop)
        while True:
            try:
                return future.result(timeout=0.1)
            except concurrent.futures.TimeoutError:
                if ctx.cancelled:
                    future.cancel()
                    raise TaskCancelled(ctx.task_id) from None

    def stop(self) -> None:
        """Close the session; a local server process is terminated by the transport."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                pass
        self._thread.join(timeout=10)

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to start(); the thread must not die silently
            self._error = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) and exc.exceptions else exc
            log.warning("MCP server %s stopped: %s", self.config.name, self._error)
        finally:
            self._ready.set()

    async def _main(self) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self.config.url:
            transport: Any = self._http_transport()
        else:
            env = self._vault.resolve_env(dict(self.config.env))  # secrets exist only from here on, in memory
            params = StdioServerParameters(command=self.config.command, args=list(self.config.args), env=env,
                                           cwd=self.config.cwd)
            self._errlog = self._stderr_pipe()
            transport = stdio_client(params, errlog=self._errlog)
        try:
            async with Client(transport) as client:
                self._client = client
                listing = await client.list_tools()
                self._tools = list(listing.tools)
                self._ready.set()
                await self._stop.wait()
        finally:
            self._client = None
            if self._errlog is not None:
                self._errlog.close()  # lets the stderr reader see the end of the stream

    def _http_transport(self) -> Any:
        from mcp.client.streamable_http import streamable_http_client

        if not self.config.headers:
            return streamable_http_client(self.config.url)
        import httpx2

        headers = self._vault.resolve_env(dict(self.config.headers))
        return streamable_http_client(self.config.url, http_client=httpx2.AsyncClient(headers=headers))

    def _stderr_pipe(self) -> Any:
        """A pipe for the server's stderr, read line by line into the (secret-masking) log."""
        read_fd, write_fd = os.pipe()
        name = self.config.name

        def pump() -> None:
            with os.fdopen(read_fd, "r", encoding="utf-8", errors="replace") as reader:
                for line in reader:
                    log.info("mcp server %s: %s", name, line.rstrip())

        self._stderr_thread = threading.Thread(target=pump, name=f"venus-mcp-{name}-stderr", daemon=True)
        self._stderr_thread.start()
        return os.fdopen(write_fd, "w")


def _content_to_data(result: Any) -> tuple[str, Any]:
    texts = [getattr(block, "text", "") for block in result.content if getattr(block, "type", "") == "text"]
    data: Any = result.structured_content if result.structured_content is not None else "\n".join(texts)
    if isinstance(data, dict) and set(data) == {"result"}:
        data = data["result"]
    return "\n".join(texts), data


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
            return ToolOutput(summary=f"{server} {_remote} finished", data=data)

        try:
            spec = ToolSpec(name=name, description=f"[MCP server {server}] {remote.description or remote.name}",
                            parameters=schema, permission=connection.config.permission, idempotent=idempotent)
        except Exception as exc:  # one malformed tool must not hide the server's other tools
            log.warning("MCP server %s: skipping tool %s (%s)", server, remote.name, exc)
            continue
        tools.append(Tool(spec, handler))
    return tools
