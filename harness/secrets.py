"""Secrets live only in the OS keyring; whatever the harness fetched is scrubbed from logs, rows and events."""

from __future__ import annotations

import logging
import threading
from typing import Any

import keyring
import keyring.errors

from engine.errors import SecretError

KEYRING_SERVICE = "venus"  # every Venus secret is stored under this service name
SECRET_PREFIX = "keyring:"  # an `env` value "keyring:NAME" in settings means "the secret NAME from the keyring"
MASK = "«secret»"


class Redactor:
    """Remembers secret values and replaces them wherever they would leave the process in text."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def add(self, value: str) -> None:
        """Start masking `value` (values shorter than 4 characters would mask ordinary text and are refused)."""
        if len(value) < 4:
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


_installed: set[int] = set()


def install_log_redaction(redactor: Redactor) -> None:
    """Mask known secrets in every log record of the process, whatever logger or handler it goes through."""
    if id(redactor) in _installed:
        return
    _installed.add(id(redactor))
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if redactor.active:
            message = record.getMessage()
            clean = redactor.scrub_text(message)
            if clean != message:
                record.msg, record.args = clean, None
            if record.exc_info and record.exc_info[1] is not None:
                text = redactor.scrub_text(str(record.exc_info[1]))
                if text != str(record.exc_info[1]):
                    record.msg, record.exc_info = f"{record.msg} ({text})", None
        return record

    logging.setLogRecordFactory(factory)


PROCESS_REDACTOR = Redactor()  # secrets are process-wide: one redactor serves every Harness in the process


class SecretVault:
    """Reads and writes secrets in the OS keyring (Secret Service, Keychain, Credential Locker)."""

    def __init__(self, redactor: Redactor, service: str = KEYRING_SERVICE) -> None:
        self.redactor = redactor
        self.service = service

    def store(self, name: str, value: str) -> None:
        """Save a secret under `name`; it is masked from then on."""
        try:
            keyring.set_password(self.service, name, value)
        except keyring.errors.KeyringError as exc:
            raise SecretError(f"could not save secret {name!r} in the OS keyring ({type(exc).__name__})",
                              fix="unlock or install a keyring (GNOME Keyring, KWallet, macOS Keychain)") from exc
        self.redactor.add(value)

    def fetch(self, name: str) -> str:
        """The secret called `name`; SecretError names it and the fix when it is missing."""
        try:
            value = keyring.get_password(self.service, name)
        except keyring.errors.KeyringError as exc:
            raise SecretError(f"the OS keyring is unavailable while reading secret {name!r} ({type(exc).__name__})",
                              fix="unlock or install a keyring (GNOME Keyring, KWallet, macOS Keychain)") from exc
        if value is None:
            raise SecretError(f"secret {name!r} is not in the keyring (service {self.service!r})",
                              fix=f"add it in Settings → Tools → Secrets, or run: keyring set {self.service} {name}")
        self.redactor.add(value)
        return value

    def delete(self, name: str) -> None:
        """Remove a secret; missing ones are ignored."""
        try:
            keyring.delete_password(self.service, name)
        except keyring.errors.PasswordDeleteError:
            pass

    def resolve_env(self, env: dict[str, str]) -> dict[str, str]:
        """Replace every "keyring:NAME" value with the secret NAME; other values pass unchanged."""
        return {key: self.fetch(value[len(SECRET_PREFIX):]) if value.startswith(SECRET_PREFIX) else value
                for key, value in env.items()}
