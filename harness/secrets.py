"""Secrets live only in the OS keyring; whatever the harness fetched is scrubbed from logs, rows and events.

The masker itself lives in engine.secrets (the engine masks the remote API key too); its names are re-exported here.
"""

from __future__ import annotations

import keyring
import keyring.errors

from engine.errors import SecretError
from engine.secrets import (
    KEYRING_SERVICE,
    MASK,
    MIN_SECRET_LENGTH,
    PROCESS_REDACTOR,
    SECRET_PREFIX,
    Redactor,
    install_log_redaction,
    looks_secret,
)

__all__ = ["KEYRING_SERVICE", "MASK", "PROCESS_REDACTOR", "SECRET_PREFIX", "Redactor", "SecretVault",
           "install_log_redaction"]


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
                              fix=f"add it in Settings → MCP servers, or run: keyring set {self.service} {name}")
        self.redactor.add(value)
        return value

    def delete(self, name: str) -> None:
        """Remove a secret; missing ones are ignored."""
        try:
            keyring.delete_password(self.service, name)
        except keyring.errors.PasswordDeleteError:
            pass

    def resolve_env(self, env: dict[str, str]) -> dict[str, str]:
        """Replace every "keyring:NAME" value with the secret NAME; other values pass unchanged.

        A credential written in clear (a *_TOKEN variable, an Authorization header, an "sk-..." value) is
        masked too: settings warn about it, but until it is moved into the keyring it must not reach a log.
        """
        resolved = {}
        for key, value in env.items():
            if value.startswith(SECRET_PREFIX):
                value = self.fetch(value[len(SECRET_PREFIX):])
            elif looks_secret(key, value) and len(value) >= MIN_SECRET_LENGTH:
                self.redactor.add(value)
            resolved[key] = value
        return resolved
