"""Model registry: shipped models (from PyPI wheels), imported and downloaded ones, GGUF inspection."""

from engine.models.registry import (
    ModelEntry,
    ModelFile,
    all_entries,
    default_model,
    get_entry,
    resolve,
    sha256_file,
    verify,
)

__all__ = ["ModelEntry", "ModelFile", "all_entries", "default_model", "get_entry", "resolve", "sha256_file", "verify"]
