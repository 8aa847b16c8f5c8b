"""Lists the user keeps by voice: "add milk to my shopping list", "what's on my to-do list?", kept in the harness
database. A list is known by its key, the name without "list", articles or possessives ("my shopping list" and
"the Shopping List" are both "shopping"); a request that names no list means the shopping list."""

from __future__ import annotations

import re
from typing import Any

from harness.store import TaskStore
from harness.tool import InvalidArguments, Permission, Tool, ToolContext, ToolOutput, ToolSpec

DEFAULT_LIST = "shopping"
MAX_ITEMS = 50  # items one call may add or remove
_SPELLINGS = {"todo": "to-do", "to do": "to-do", "to-dos": "to-do", "todos": "to-do", "to dos": "to-do",
              "groceries": "grocery", "grocery shopping": "grocery"}
_NOISE = re.compile(r"\b(?:my|our|the|a|your|list|lists)\b|'s\b|[^\w\s'-]", re.IGNORECASE)


def list_key(name: str) -> str:
    """The list a name denotes: "My Shopping List" -> "shopping", "to do list" -> "to-do", "" -> "shopping"."""
    key = " ".join(_NOISE.sub(" ", name.lower()).split())
    key = _SPELLINGS.get(key, key)
    return key or DEFAULT_LIST


def _items(arguments: dict[str, Any]) -> list[str]:
    items = [" ".join(str(item).split()) for item in arguments["items"]]
    items = [item for item in items if item]
    if not items:
        raise InvalidArguments("'items' holds no words", fix="name at least one thing for the list")
    return items


class ListTools:
    """Handlers for the four list tools."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store

    def add(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: add items to a list (an item already on it is not added twice)."""
        name = list_key(arguments.get("list", ""))
        present = {item.lower() for item in self.store.list_items(name)}
        new, already = [], []
        for item in _items(arguments):
            (already if item.lower() in present else new).append(item)
            present.add(item.lower())
        self.store.add_list_items(name, new)
        return ToolOutput(summary=f"Added {len(new)} to the {name} list",
                          data={"list": name, "added": new, "already": already,
                                "count": len(self.store.list_items(name))})

    def read(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: what is on a list."""
        name = list_key(arguments.get("list", ""))
        items = self.store.list_items(name)
        return ToolOutput(summary=f"{len(items)} on the {name} list",
                          data={"list": name, "items": items, "lists": self.store.list_names()})

    def remove(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: take items off a list; an item not on it is reported, not an error."""
        name = list_key(arguments.get("list", ""))
        removed, missing = [], []
        for item in _items(arguments):
            (removed if self.store.remove_list_item(name, item) else missing).append(item)
        return ToolOutput(summary=f"Removed {len(removed)} from the {name} list",
                          data={"list": name, "removed": removed, "missing": missing,
                                "count": len(self.store.list_items(name))})

    def clear(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Tool: empty a list."""
        name = list_key(arguments.get("list", ""))
        return ToolOutput(summary=f"Emptied the {name} list", data={"list": name, "removed": self.store.clear_list(name)})


def list_tools(store: TaskStore) -> list[Tool]:
    """add_to_list, read_list, remove_from_list and clear_list."""
    lists = ListTools(store)
    name = {"type": "string", "description": "the list's name, e.g. shopping or to-do (empty: the shopping list)"}
    items = {"type": "array", "minItems": 1, "maxItems": MAX_ITEMS, "items": {"type": "string", "minLength": 1}}
    return [
        Tool(ToolSpec(
            name="add_to_list", permission=Permission.ALLOW, description="Add items to one of the user's lists.",
            parameters={"type": "object", "additionalProperties": False, "required": ["items"],
                        "properties": {"list": name, "items": items}},
            idempotent=False,
        ), lists.add),
        Tool(ToolSpec(
            name="read_list", permission=Permission.ALLOW, description="Read what is on one of the user's lists.",
            parameters={"type": "object", "additionalProperties": False, "properties": {"list": name}},
        ), lists.read),
        Tool(ToolSpec(
            name="remove_from_list", permission=Permission.ALLOW, description="Take items off one of the user's lists.",
            parameters={"type": "object", "additionalProperties": False, "required": ["items"],
                        "properties": {"list": name, "items": items}},
            idempotent=False,
        ), lists.remove),
        Tool(ToolSpec(
            name="clear_list", permission=Permission.ASK, description="Empty one of the user's lists.",
            question="empty your {list} list",
            parameters={"type": "object", "additionalProperties": False, "properties": {"list": name}},
            idempotent=False,
        ), lists.clear),
    ]
