"""Venus harness: background tasks, tools, MCP servers and permissions. No Qt, no engine internals."""

from harness.executor import ExecutorOptions, TaskExecutor
from harness.harness import Harness
from harness.mcp_bridge import MCPServerConfig, MCPServerConnection
from harness.replies import Reply, interpret_reply
from harness.sandbox import AllowedRoots
from harness.secrets import KEYRING_SERVICE, SECRET_PREFIX, Redactor, SecretVault
from harness.store import TaskRecord, TaskState, TaskStore
from harness.tool import (
    InvalidArguments,
    Permission,
    TaskCancelled,
    Tool,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolSpec,
)

__all__ = [
    "KEYRING_SERVICE", "SECRET_PREFIX", "AllowedRoots", "ExecutorOptions", "Harness", "InvalidArguments",
    "MCPServerConfig", "MCPServerConnection", "Permission", "Redactor", "Reply", "SecretVault", "TaskCancelled",
    "TaskExecutor", "TaskRecord", "TaskState", "TaskStore", "Tool", "ToolContext", "ToolOutput", "ToolRegistry",
    "ToolSpec", "interpret_reply",
]
