"""Venus's error hierarchy: each error has a stable code and a message that names the fix."""

from __future__ import annotations


class VenusError(Exception):
    """Base of every error Venus raises on purpose; `code` is stable and safe to match on."""

    code = "venus-error"

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.fix = fix
        super().__init__(f"{message} — {fix}" if fix else message)


class ConfigError(VenusError):
    """A settings file or value is invalid."""

    code = "config-invalid"


class ModelNotFound(VenusError):
    """A model file is missing from the models folder."""

    code = "model-not-found"


class ModelCorrupt(VenusError):
    """A model file exists but is truncated, has the wrong checksum or is not the format it claims."""

    code = "model-corrupt"


class DownloadError(VenusError):
    """A model download failed or its checksum did not match."""

    code = "download-failed"


class AudioDeviceError(VenusError):
    """An audio device is missing, busy or failed mid-stream."""

    code = "audio-device-lost"


class CameraError(VenusError):
    """A camera is missing or stopped delivering frames."""

    code = "camera-lost"


class BackendError(VenusError):
    """An LLM backend (in-process or remote) failed."""

    code = "backend-failed"


class ToolError(VenusError):
    """A tool call was invalid, denied or failed."""

    code = "tool-failed"


class ToolDenied(ToolError):
    """A tool call was refused by its permission level or by the user."""

    code = "tool-denied"


class SecretError(VenusError):
    """The OS keyring is unavailable or a secret is missing."""

    code = "secret-unavailable"


class StorageError(VenusError):
    """The conversation database cannot be opened, read or written."""

    code = "storage-failed"


class DatabaseCorrupt(StorageError):
    """The database file is not SQLite, is truncated or fails its integrity check; it is left untouched."""

    code = "database-corrupt"


class DatabaseTooNew(StorageError):
    """The database was written by a newer Venus whose schema this version does not know."""

    code = "database-too-new"


class ConversationNotFound(StorageError):
    """No conversation with the requested id is stored."""

    code = "conversation-not-found"
