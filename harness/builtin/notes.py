"""Notes the user dictates: create, search and read, kept in the harness database."""

from __future__ import annotations

from typing import Any

from harness.store import TaskStore
from harness.tool import InvalidArguments, Permission, Tool, ToolContext, ToolOutput, ToolSpec


class NoteTools:
    """Handlers for the three note tools."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store

    def create(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: save a note."""
        body = arguments["text"]
        title = arguments.get("title") or body.strip().splitlines()[0][:60]
        note_id = self.store.add_note(title, body)
        return ToolOutput(summary=f"Saved the note '{title}'", data={"note_id": note_id, "title": title})

    def search(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: notes containing every word of a query (an empty query lists the newest)."""
        found = self.store.search_notes(arguments.get("query", ""), arguments.get("max_results", 10))
        items = [{"note_id": n["id"], "title": n["title"], "preview": n["body"][:120]} for n in found]
        return ToolOutput(summary=f"{len(items)} note{'s' if len(items) != 1 else ''} found", data={"notes": items})

    def read(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: one note in full."""
        note = self.store.get_note(arguments["note_id"])
        if note is None:
            raise InvalidArguments(f"there is no note {arguments['note_id']}", fix="search the notes for its id")
        return ToolOutput(summary=f"Note '{note['title']}'", data=note)


def note_tools(store: TaskStore) -> list[Tool]:
    """create_note, search_notes and read_note."""
    notes = NoteTools(store)
    return [
        Tool(ToolSpec(
            name="create_note", permission=Permission.ALLOW, description="Save a note for the user.",
            question="save a note: {text}",
            parameters={"type": "object", "additionalProperties": False, "required": ["text"], "properties": {
                "text": {"type": "string", "minLength": 1}, "title": {"type": "string"}}},
            idempotent=False,
        ), notes.create),
        Tool(ToolSpec(
            name="search_notes", permission=Permission.ALLOW, description="Search the user's notes by words they contain.",
            parameters={"type": "object", "additionalProperties": False, "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}}},
        ), notes.search),
        Tool(ToolSpec(
            name="read_note", permission=Permission.ALLOW, description="Read one note in full by its id.",
            parameters={"type": "object", "additionalProperties": False, "required": ["note_id"],
                        "properties": {"note_id": {"type": "integer"}}},
        ), notes.read),
    ]
