"""Logging: a rotating file in the user log folder, and the console only for warnings (everything with --verbose).

Every line is masked twice before it is written: known secrets (engine.secrets) and anything that looks like a
credential. The mask covers the whole formatted line, so tracebacks and their chained causes are masked too.

Libraries are kept off the console: their INFO chatter is Venus's DEBUG, ALSA's messages (underruns, probing
absent cards), which it prints from C, go to the file through its error handler, and OpenCV's C++ warnings
(cameras that cannot be opened; Venus says that itself, with the fix) are turned down before OpenCV loads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import logging.handlers
import os
import re
import sys
import threading
import time

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


# Libraries whose INFO lines are start-up chatter or per-call detail (alembic's "Context impl SQLiteImpl.",
# faster-whisper's "Processing audio with duration", httpx's every request): DEBUG to Venus, whose own modules
# log what matters of the same events. Their warnings and errors keep their level.
QUIET_LIBRARIES = frozenset({"alembic", "faster_whisper", "httpx", "httpcore"})
ALSA_REPEAT_S = 5.0  # the same ALSA message (an underrun) is written at most once per this many seconds


class LibraryLevels(logging.Filter):
    """A handler filter that lowers the INFO records of QUIET_LIBRARIES to DEBUG, then applies the handler's level.

    It has to sit on the handlers: a logger's level would hide the records from the file even with --verbose.
    """

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a lowered record the handler's level does not take."""
        if record.levelno < logging.WARNING and record.name.partition(".")[0] in QUIET_LIBRARIES:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return self.handler.level <= logging.DEBUG
        return True


_ALSA_HANDLER_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                                      ctypes.c_char_p)
_alsa_handler = None  # the installed C callback; kept referenced for the life of the process
_alsa_last: dict[tuple[bytes, int], tuple[float, int]] = {}  # (file, line) -> (last written, repeats since)
_alsa_lock = threading.Lock()


def _on_alsa_error(file: bytes | None, line: int, function: bytes | None, err: int, fmt: bytes | None) -> None:
    # ALSA's handler is variadic: the message's arguments cannot be read from Python, so its format is logged
    now = time.monotonic()
    key = (file or b"", line)
    with _alsa_lock:
        last, repeats = _alsa_last.get(key, (float("-inf"), 0))
        if now - last < ALSA_REPEAT_S:
            _alsa_last[key] = (last, repeats + 1)
            return
        _alsa_last[key] = (now, 0)
    text = (fmt or b"").decode(errors="replace")
    more = f" (and {repeats} more in {ALSA_REPEAT_S:.0f} s)" if repeats else ""
    where = f"{(file or b'?').decode(errors='replace')}:{line}:({(function or b'?').decode(errors='replace')})"
    logging.getLogger("alsa").info("ALSA lib %s %s%s%s", where, text, f" [error {err}]" if err else "", more)


def route_alsa_errors() -> bool:
    """Send ALSA's messages (printed to stderr from C) to the log file; False where there is no ALSA (not Linux)."""
    global _alsa_handler
    if _alsa_handler is not None:
        return True
    name = ctypes.util.find_library("asound") if sys.platform.startswith("linux") else None
    if name is None:
        return False
    try:
        asound = ctypes.CDLL(name)  # the library PortAudio loads too: one handler for the whole process
        handler = _ALSA_HANDLER_TYPE(_on_alsa_error)
        asound.snd_lib_error_set_handler(handler)
    except (OSError, AttributeError):
        return False
    _alsa_handler = handler
    return True


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
    file_handler.addFilter(LibraryLevels(file_handler))
    root.addHandler(file_handler)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if verbose else logging.WARNING)
    console.setFormatter(RedactingFormatter("%(levelname)s %(name)s: %(message)s"))
    console.addFilter(LibraryLevels(console))
    root.addHandler(console)
    route_alsa_errors()
    if not verbose:  # read once when OpenCV loads; an explicit value (for debugging a camera) wins
        os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
    root._venus_configured = True  # type: ignore[attr-defined]
    return root
