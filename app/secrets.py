"""API keys and MCP secret env values live in the OS keyring, never in settings.json.

Settings hold only a reference, `keyring:<name>`, where a secret belongs; `resolve_env` swaps references for
the stored values when a server is started.
"""

from __future__ import annotations

import keyring
from keyring.errors import KeyringError, PasswordDeleteError

from engine.errors import SecretError

SERVICE = "venus"
SECRET_REF_PREFIX = "keyring:"


def api_key_name(provider: str) -> str:
    """Keyring name of an API key (e.g. 'remote-llm')."""
    return f"api-key:{provider}"


def mcp_secret_name(server: str, env_key: str) -> str:
    """Keyring name of one secret env value of an MCP server."""
    return f"mcp:{server}:{env_key}"


def secret_ref(name: str) -> str:
    """What the settings file stores in place of the secret."""
    return f"{SECRET_REF_PREFIX}{name}"


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


def get_secret(name: str) -> str | None:
    """A stored secret, or None when there is none."""
    try:
        return keyring.get_password(SERVICE, name)
    except KeyringError as exc:
        raise SecretError(f"could not read {name!r} from the OS keyring ({exc})", fix=_fix()) from exc


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
