"""API keys and MCP secret env values live in the OS keyring, never in settings.json.

Settings hold only a reference, `keyring:<name>`, where a secret belongs; `resolve_env` swaps references for
the stored values when a server is started. Every secret read or stored here is masked in logs from then on,
and `move_to_keyring` turns secrets written in clear in settings into references.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import keyring
from keyring.errors import KeyringError, PasswordDeleteError

from engine.errors import SecretError
from engine.secrets import KEYRING_SERVICE as SERVICE
from engine.secrets import SECRET_PREFIX as SECRET_REF_PREFIX
from engine.secrets import (
    PlaintextSecret,
    find_plaintext_secrets,
    mask_secret,
    mcp_secret_name,
    secret_ref,
    with_keyring_refs,
)

__all__ = ["SECRET_REF_PREFIX", "SERVICE", "PlaintextSecret", "api_key_name", "delete_secret", "find_plaintext_secrets",
           "get_secret", "keyring_usable", "mcp_secret_name", "move_to_keyring", "resolve_env", "secret_ref",
           "set_secret"]


def api_key_name(provider: str) -> str:
    """Keyring name of an API key (e.g. 'remote-llm')."""
    return f"api-key:{provider}"


def _fix() -> str:
    return "start a Secret Service (e.g. gnome-keyring or KWallet) or install a keyring backend, then save again"


def set_secret(name: str, value: str) -> None:
    """Store a secret; raises SecretError naming the fix when no keyring backend works."""
    if not value:
        raise ValueError(f"the secret {name!r} is empty; leave it out instead")
    try:
        keyring.set_password(SERVICE, name, value)
    except KeyringError as exc:
        raise SecretError(f"could not store {name!r} in the OS keyring ({exc})", fix=_fix()) from exc
    mask_secret(value)


def get_secret(name: str) -> str | None:
    """A stored secret, or None when there is none."""
    try:
        value = keyring.get_password(SERVICE, name)
    except KeyringError as exc:
        raise SecretError(f"could not read {name!r} from the OS keyring ({exc})", fix=_fix()) from exc
    if value:
        mask_secret(value)
    return value


def delete_secret(name: str) -> None:
    """Forget a secret (no error when it was not stored)."""
    try:
        keyring.delete_password(SERVICE, name)
    except PasswordDeleteError:
        pass
    except KeyringError as exc:
        raise SecretError(f"could not delete {name!r} from the OS keyring ({exc})", fix=_fix()) from exc


def keyring_usable() -> bool:
    """Whether a real keyring backend (not the 'fail' one) is active."""
    backend = keyring.get_keyring()
    return backend.priority > 0 and "fail" not in type(backend).__module__


def resolve_env(env: dict[str, str]) -> dict[str, str]:
    """Env values with `keyring:` references replaced by their secrets; a missing secret is an error."""
    resolved = {}
    for key, value in env.items():
        if isinstance(value, str) and value.startswith(SECRET_REF_PREFIX):
            name = value[len(SECRET_REF_PREFIX):]
            secret = get_secret(name)
            if secret is None:
                raise SecretError(f"the keyring has no secret {name!r} for env {key}", fix="enter it again in Settings")
            value = secret
        resolved[key] = str(value)
    return resolved


def move_to_keyring(servers: Mapping[str, Any]) -> tuple[dict[str, Any], list[PlaintextSecret]]:
    """Store every secret written in clear in `mcpServers` in the keyring; returns the servers with references
    in their place, and what moved. SecretError (nothing changed in settings) when the keyring refuses one."""
    found = find_plaintext_secrets(servers)
    for secret in found:
        set_secret(secret.keyring_name, secret.value)
    return with_keyring_refs(servers, found), found
