"""Venus's built-in desktop tools, each cross-platform (Windows, macOS, Linux)."""

from __future__ import annotations

from harness.builtin.calc import calculate, calculator_tools, convert
from harness.builtin.clock import clock_tool
from harness.builtin.desktop import (
    desktop_tools,
    read_clipboard,
    screenshot_text,
    system_status,
    write_clipboard,
)
from harness.builtin.files import FileTools, file_tools
from harness.builtin.lists import list_key, list_tools
from harness.builtin.notes import note_tools
from harness.builtin.reminders import ReminderService, reminder_tools
from harness.builtin.shell import shell_tool
from harness.sandbox import AllowedRoots
from harness.store import TaskStore
from harness.tool import Tool


def builtin_tools(roots: AllowedRoots, store: TaskStore, reminders: ReminderService) -> list[Tool]:
    """Every built-in tool, ready to register."""
    return [
        *file_tools(roots), *reminder_tools(reminders), *note_tools(store), *list_tools(store), *desktop_tools(),
        *calculator_tools(), clock_tool(), shell_tool(roots),
    ]


__all__ = [
    "FileTools", "ReminderService", "builtin_tools", "calculate", "calculator_tools", "clock_tool", "convert", "desktop_tools",
    "file_tools", "list_key", "list_tools", "note_tools", "read_clipboard", "reminder_tools", "screenshot_text", "shell_tool",
    "system_status", "write_clipboard",
]
