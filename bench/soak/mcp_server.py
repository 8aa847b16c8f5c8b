"""The soak's MCP server: a real stdio subprocess the harness starts from the soak's settings file.

Tools: `add` (two integers), `echo` (its text back), `word_count` (words in a text), `wait` (sleeps, so a cancel
can end it). Started as `python mcp_server.py`; it speaks MCP over stdin/stdout until the harness stops it.
"""

from __future__ import annotations

import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("venus-soak")


@server.tool(description="Add two whole numbers and return the sum.")
def add(a: int, b: int) -> int:
    """Return a + b."""
    return a + b


@server.tool(description="Repeat the given text back unchanged.")
def echo(text: str) -> str:
    """Return `text`."""
    return text


@server.tool(description="Count the words in a text.")
def word_count(text: str) -> int:
    """Number of whitespace-separated words in `text`."""
    return len(text.split())


@server.tool(description="Wait for the given number of seconds, then say 'done'.")
def wait(seconds: float) -> str:
    """Block for `seconds` (the harness must be able to cancel it)."""
    time.sleep(seconds)
    return "done"


if __name__ == "__main__":
    server.run("stdio")
