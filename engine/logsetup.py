"""Logging: a rotating file in the user log folder, and the console only with --verbose.

Every line is masked twice before it is written: known secrets (engine.secrets) and anything that looks like a
credential. The mask covers the whole formatted line, so tracebacks and their chained causes are masked too.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys

from engine import paths
from engine.secrets import PROCESS_REDACTOR, install_log_redaction

_SECRET_PATTERNS = [
    re.compile(r"(?i)(api[_-]?key|token|secret|password|authorization)([\"']?\s*[:=]\s*[\"']?)([^\s\"',}]+)"),
    re.compile(r"(?i)(bearer\s+)([A-Za-z0-9._\-]+)"),
]


def redact_text(text: str) -> str:
    """`text` with known secrets and credential-looking values (api_key=..., Bearer ...) masked."""
    text = PROCESS_REDACTOR.scrub_text(text)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + (m.group(2) if m.lastindex == 3 else "") + "***", text)
    return text


class RedactingFormatter(logging.Formatter):
    """Formats a record, then masks secrets in the whole result: message, traceback, causes and stack."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))


def setup_logging(verbose: bool = False) -> logging.Logger:
    """Configure the root logger once; returns it."""
    root = logging.getLogger()
    if getattr(root, "_venus_configured", False):
        return root
    install_log_redaction(PROCESS_REDACTOR)  # other handlers (Qt, tests, libraries') get masked records too
    root.setLevel(logging.DEBUG)
    file_handler = logging.handlers.RotatingFileHandler(
        paths.log_dir() / "venus.log", maxBytes=5 * 1024 * 1024, backupCount=3, encoding="utf-8"
    )
    file_handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    file_handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"))
    root.addHandler(file_handler)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if verbose else logging.WARNING)
    console.setFormatter(RedactingFormatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(console)
    root._venus_configured = True  # type: ignore[attr-defined]
    return root
