"""The control decision that opens every assistant turn: respond, delegate(tool, arguments), silent, resume.

The model writes it as one JSON line, constrained by a GBNF grammar (in process) or a JSON schema (remote),
so even a 135M model always produces the structure. The grammar only bounds the shape of the arguments;
they are then checked against the tool's own JSON schema, and a failure becomes `ControlDecision.error`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from engine.timeline.events import Action, ControlDecision

MAX_STRING_CHARS = 80  # longest string the grammar lets the model write inside arguments
# The fixed start of every decision line. An in-process backend evaluates it with the prompt in one batch,
# so the model only generates the action word onwards (under a grammar the fixed text costs one step a char).
DECISION_PREFIX = '{"action": "'


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: name, one-line description and the JSON schema of its arguments."""

    name: str  # identifier the model writes, e.g. "set_timer"
    description: str  # one line telling the model when to use it
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})  # JSON schema

    def __post_init__(self) -> None:
        if not self.name or not all(c.isalnum() or c in "_-." for c in self.name):
            raise ValueError(f"tool name {self.name!r} must be non-empty letters, digits, '_', '-' or '.'")
        try:
            jsonschema.validators.validator_for(self.parameters).check_schema(self.parameters)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"tool {self.name!r} has an invalid parameters schema: {exc.message}") from exc

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolSpec:
        """From the harness's plain description {name, description, parameters}."""
        if "name" not in data:
            raise ValueError(f"a tool description needs a 'name': {dict(data)!r}")
        return cls(
            name=str(data["name"]),
            description=str(data.get("description", "")),
            parameters=data.get("parameters") or {"type": "object"},
        )


def as_tool_specs(tools: Iterable[ToolSpec | Mapping[str, Any]]) -> tuple[ToolSpec, ...]:
    """Accept ToolSpec objects or plain dicts; reject duplicate names."""
    specs = tuple(t if isinstance(t, ToolSpec) else ToolSpec.from_dict(t) for t in tools)
    names = [t.name for t in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"tool names must be unique, got {names}")
    return specs


def allowed_actions(tools: Sequence[ToolSpec], *, can_resume: bool) -> tuple[Action, ...]:
    """The actions that make sense now: delegate needs a tool, resume an interrupted answer."""
    actions = [Action.RESPOND, Action.SILENT]
    if can_resume:
        actions.append(Action.RESUME)
    if tools:
        actions.append(Action.DELEGATE)
    return tuple(actions)


def format_decision(action: Action, tool: str = "", arguments: Mapping[str, Any] | None = None) -> str:
    """The canonical one-line form, exactly what the grammar makes the model write."""
    data: dict[str, Any] = {"action": str(action)}
    if action == Action.DELEGATE:
        data["tool"] = tool
        data["arguments"] = dict(arguments or {})
    return json.dumps(data, ensure_ascii=False)


def _literal(text: str) -> str:
    return json.dumps(json.dumps(text))  # a GBNF string literal whose content is the JSON string


def decision_grammar(tools: Sequence[ToolSpec], actions: Sequence[Action], *, after_prefix: bool = False) -> str:
    """GBNF for one decision line in the canonical form of `format_decision`.

    With `after_prefix` the grammar covers only what follows DECISION_PREFIX (already in the context).
    """
    quote = "" if after_prefix else '"'  # the action's opening quote belongs to the prefix
    choices = [json.dumps(f'{quote}{a}"') for a in actions if a != Action.DELEGATE]
    rules = []
    if Action.DELEGATE in actions and tools:
        choices.append("delegate")
        names = " | ".join(_literal(t.name) for t in tools)
        rules += [
            f'delegate ::= "{json.dumps(quote)[1:-1]}delegate\\", \\"tool\\": " tool ", \\"arguments\\": " object',
            f"tool ::= {names}",
            'object ::= "{}" | "{" pair (", " pair){0,7} "}"',
            'pair ::= string ": " value',
            'value ::= string | number | object | array | "true" | "false" | "null"',
            'array ::= "[]" | "[" value (", " value){0,7} "]"',
            f'string ::= "\\"" char{{0,{MAX_STRING_CHARS}}} "\\""',
            'char ::= [^"\\\\\\x00-\\x1f] | "\\\\" ["\\\\nt]',
            'number ::= "-"? ("0" | [1-9] [0-9]{0,11}) ("." [0-9]{1,6})?',
        ]
    opening = "" if after_prefix else '"{\\"action\\": " '
    head = f"root ::= {opening}(" + " | ".join(choices) + ') "}"'
    return "\n".join([head, *rules]) + "\n"


def decision_schema(tools: Sequence[ToolSpec], actions: Sequence[Action]) -> dict[str, Any]:
    """The same constraint as a JSON schema, for servers that take `response_format`."""
    simple = [str(a) for a in actions if a != Action.DELEGATE]
    variants: list[dict[str, Any]] = [
        {"type": "object", "properties": {"action": {"enum": simple}}, "required": ["action"]}
    ]
    if Action.DELEGATE in actions and tools:
        variants.append({
            "type": "object",
            "properties": {
                "action": {"const": "delegate"},
                "tool": {"enum": [t.name for t in tools]},
                "arguments": {"type": "object"},
            },
            "required": ["action", "tool", "arguments"],
        })
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


def parse_decision(text: str, tools: Sequence[ToolSpec], actions: Sequence[Action] | None = None) -> ControlDecision:
    """Read the model's decision line; anything malformed or invalid comes back with `error` set, never raised."""
    line = text.strip()
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return ControlDecision(action=Action.RESPOND, error=f"the decision {line[:120]!r} is not valid JSON ({exc.msg})")
    if not isinstance(data, dict):
        return ControlDecision(action=Action.RESPOND, error=f"the decision {line[:120]!r} is not a JSON object")
    try:
        action = Action(data.get("action"))
    except ValueError:
        return ControlDecision(action=Action.RESPOND, error=f"unknown action {data.get('action')!r}")
    if actions is not None and action not in actions:
        return ControlDecision(action=action, error=f"action {action} is not allowed now")
    if action != Action.DELEGATE:
        return ControlDecision(action=action)
    name, arguments = data.get("tool"), data.get("arguments", {})
    by_name = {t.name: t for t in tools}
    if name not in by_name:
        known = ", ".join(by_name) or "none"
        return ControlDecision(action=action, tool=str(name or ""), error=f"no tool named {name!r} (tools: {known})")
    if not isinstance(arguments, dict):
        return ControlDecision(action=action, tool=name, error=f"arguments for {name} must be a JSON object")
    problems = sorted(
        jsonschema.validators.validator_for(by_name[name].parameters)(by_name[name].parameters).iter_errors(arguments),
        key=lambda e: list(e.path),
    )
    if problems:
        where = ".".join(str(p) for p in problems[0].path)
        detail = f"{where}: {problems[0].message}" if where else problems[0].message
        return ControlDecision(action=action, tool=name, arguments=arguments,
                               error=f"invalid arguments for {name}: {detail}")
    return ControlDecision(action=action, tool=name, arguments=arguments)


def describe_actions(tools: Sequence[ToolSpec]) -> str:
    """Instructions for the system prompt: the decision format and the tools."""
    lines = [
        "Start every reply with one JSON line that chooses what to do, then the words to say:",
        '{"action": "respond"} to answer the user;',
        '{"action": "silent"} when the speech was not meant for you or needs no answer;',
        '{"action": "resume"} to continue an answer the user interrupted;',
    ]
    if tools:
        lines.append('{"action": "delegate", "tool": NAME, "arguments": {...}} to start a background task.')
        lines.append("Tools:")
        for tool in tools:
            lines.append(f"- {tool.name}({_signature(tool.parameters)}): {_first_sentence(tool.description)}")
    return "\n".join(lines)


def _signature(schema: dict[str, Any]) -> str:
    # A compact argument list ("expression: string, max_results?: integer"): the grammar enforces the exact
    # schema, so the prompt only has to tell the model what exists (full JSON schemas cost ~4x the tokens).
    required = set(schema.get("required", ()))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "value") if isinstance(prop, dict) else "value"
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return ", ".join(parts)


def _first_sentence(text: str) -> str:
    head = text.strip().split(". ")[0].rstrip(".")
    return head + "."
