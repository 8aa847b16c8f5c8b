"""Venus harness: background tasks, tools, MCP servers and permissions. No Qt, no engine internals."""
