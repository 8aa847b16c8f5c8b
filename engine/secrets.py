"""Secrets in text: every secret Venus reads is remembered once and masked wherever text leaves the process.

The masker is process-wide (`PROCESS_REDACTOR`): the remote LLM's API key, MCP env and header values from the
keyring and anything the settings dialog stores all join it, and `install_log_redaction` makes every log
record, traceback and chained cause go through it. Settings hold only `keyring:NAME` references; secrets
written there in clear are found by `find_plaintext_secrets` so that doctor and the settings dialog can warn
and move them into the keyring.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

KEYRING_SERVICE = "venus"  # every Venus secret is stored under this service name
SECRET_PREFIX = "keyring:"  # an `env` or `headers` value "keyring:NAME" means "the secret NAME from the keyring"
MASK = "«secret»"
MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words


class Redactor:
    """Remembers secret values and replaces them wherever they would leave the process in text."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def add(self, value: str) -> None:
        """Start masking `value` (values shorter than 4 characters would mask ordinary text and are refused)."""
        if len(value) < MIN_SECRET_LENGTH:
            raise ValueError("a secret shorter than 4 characters cannot be masked safely; use a longer one")
        with self._lock:
            self._values.add(value)

    @property
    def active(self) -> bool:
        """True once at least one secret is known."""
        return bool(self._values)

    def scrub_text(self, text: str) -> str:
        """`text` with every known secret replaced by a mask."""
        with self._lock:
            values = sorted(self._values, key=len, reverse=True)
        for value in values:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def scrub(self, data: Any) -> Any:
        """A copy of JSON-like `data` with secrets masked in every string (keys included)."""
        if not self._values:
            return data
        if isinstance(data, str):
            return self.scrub_text(data)
        if isinstance(data, dict):
            return {self.scrub(k): self.scrub(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return type(data)(self.scrub(v) for v in data)
        return data


PROCESS_REDACTOR = Redactor()  # secrets are process-wide: one redactor serves the engine, harness and app

_installed: set[int] = set()
_traceback_formatter = logging.Formatter()


def install_log_redaction(redactor: Redactor) -> None:
    """Mask known secrets in every log record of the process: message, traceback (chained causes too), stack."""
    if id(redactor) in _installed:
        return
    _installed.add(id(redactor))
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if redactor.active:
            _scrub_record(record, redactor)
        return record

    logging.setLogRecordFactory(factory)


def _scrub_record(record: logging.LogRecord, redactor: Redactor) -> None:
    try:
        message = record.getMessage()
    except (TypeError, ValueError):  # bad arguments: logging reports that itself when the record is emitted
        return
    clean = redactor.scrub_text(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[1] is not None:
        # formatted once, whole: the traceback of every __cause__ and __context__ is in this text too, and
        # Formatter.format uses a preset exc_text instead of formatting the exception again
        record.exc_text = redactor.scrub_text(_traceback_formatter.formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redactor.scrub_text(record.stack_info)


def mask_secret(value: str) -> bool:
    """Mask `value` in this process from now on, logs included; False when it is too short to mask safely."""
    if len(value) < MIN_SECRET_LENGTH:
        return False
    PROCESS_REDACTOR.add(value)
    install_log_redaction(PROCESS_REDACTOR)
    return True


def secret_ref(name: str) -> str:
    """What settings store in place of the secret called `name`."""
    return f"{SECRET_PREFIX}{name}"


def mcp_secret_name(server: str, key: str, place: Literal["env", "headers"] = "env") -> str:
    """Keyring name of one secret env value (or HTTP header) of an MCP server."""
    return f"mcp:{server}:{key}" if place == "env" else f"mcp:{server}:header:{key}"


# ---- secrets written in clear in settings -------------------------------------------------------------------

# names of env variables and headers that carry credentials (GITHUB_TOKEN, OPENAI_API_KEY, Authorization, ...)
_SECRET_KEY = re.compile(
    r"(?i)(^|[_-])(api[_-]?key|key|token|secret|password|passwd|pwd|auth|authorization|credentials?|cookie)($|[_-])"
)
# values that are credentials whatever they are called: bearer tokens and the common provider key prefixes
_SECRET_VALUE = re.compile(r"^(Bearer\s+\S{8,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-\S{10,})$")


@dataclass(frozen=True)
class PlaintextSecret:
    """A secret written in clear in the settings: where it is, and the keyring name it moves to."""

    server: str  # the MCP server it belongs to
    place: Literal["env", "headers"]  # an environment variable, or an HTTP header
    key: str  # the variable or header name
    value: str = field(repr=False)  # the secret itself (kept out of repr)

    @property
    def where(self) -> str:
        """The setting's path, e.g. harness.mcp_servers.github.env.GITHUB_TOKEN."""
        return f"harness.mcp_servers.{self.server}.{self.place}.{self.key}"

    @property
    def keyring_name(self) -> str:
        """The name it is stored under in the keyring."""
        return mcp_secret_name(self.server, self.key, self.place)


def looks_secret(key: str, value: str) -> bool:
    """Whether an env variable or header `key` = `value` holds a credential written in clear."""
    if not value or value.startswith(SECRET_PREFIX):
        return False
    return bool(_SECRET_KEY.search(key) or _SECRET_VALUE.match(value.strip()))


def find_plaintext_secrets(servers: Mapping[str, Any]) -> list[PlaintextSecret]:
    """Every env or header value of the `mcpServers` mapping that looks like a credential and is not a reference."""
    found = []
    for server, spec in servers.items():
        if not isinstance(spec, Mapping):
            continue
        for place in ("env", "headers"):
            values = spec.get(place) or {}
            if not isinstance(values, Mapping):
                continue
            for key, value in values.items():
                if isinstance(key, str) and isinstance(value, str) and looks_secret(key, value):
                    found.append(PlaintextSecret(server, place, key, value))
    return found


def plaintext_warning(found: list[PlaintextSecret]) -> str:
    """One sentence naming the settings that hold a secret in clear ('' when none)."""
    if not found:
        return ""
    return (f"{len(found)} secret(s) written in clear in the settings file: "
            f"{', '.join(secret.where for secret in found)}; they belong in the keyring")


def with_keyring_refs(servers: Mapping[str, Any], moved: list[PlaintextSecret]) -> dict[str, Any]:
    """A copy of `servers` where each moved secret still written in clear is replaced by its `keyring:` reference."""
    result = {name: dict(spec) if isinstance(spec, Mapping) else spec for name, spec in servers.items()}
    for secret in moved:
        spec = result.get(secret.server)
        if not isinstance(spec, dict) or not isinstance(spec.get(secret.place), Mapping):
            continue
        values = dict(spec[secret.place])
        if values.get(secret.key) == secret.value:
            values[secret.key] = secret_ref(secret.keyring_name)
            spec[secret.place] = values
    return result
