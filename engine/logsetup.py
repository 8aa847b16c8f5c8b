"""Logging: a rotating file in the user log folder, and the console only with --verbose."""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys

from engine import paths

_SECRET_PATTERNS = [
    re.compile(r"(?i)(api[_-]?key|token|secret|password|authorization)([\"']?\s*[:=]\s*[\"']?)([^\s\"',}]+)"),
    re.compile(r"(?i)(bearer\s+)([A-Za-z0-9._\-]+)"),
]


class RedactSecrets(logging.Filter):
    """Mask anything that looks like a credential, as a second line of defence behind the keyring."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for pattern in _SECRET_PATTERNS:
            redacted = pattern.sub(lambda m: m.group(1) + (m.group(2) if m.lastindex == 3 else "") + "***", redacted)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def setup_logging(verbose: bool = False) -> logging.Logger:
    """Configure the root logger once; returns it."""
    root = logging.getLogger()
    if getattr(root, "_venus_configured", False):
        return root
    root.setLevel(logging.DEBUG)
    fmt = logging.Formatter("%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s")
    file_handler = logging.handlers.RotatingFileHandler(
        paths.log_dir() / "venus.log", maxBytes=5 * 1024 * 1024, backupCount=3, encoding="utf-8"
    )
    file_handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    file_handler.setFormatter(fmt)
    file_handler.addFilter(RedactSecrets())
    root.addHandler(file_handler)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    console.addFilter(RedactSecrets())
    root.addHandler(console)
    root._venus_configured = True  # type: ignore[attr-defined]
    return root
