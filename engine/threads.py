"""Default CPU thread counts for the model kernels, each overridable from the environment.

Every model runs on few threads so that the microphone, the voice and the UI keep a core; a power user (or a test
run that wants other kernels' reduction order) can change the defaults without editing settings:

    VENUS_THREADS_CT2   CTranslate2 (faster-whisper)       default 1
    VENUS_THREADS_ONNX  onnxruntime (VAD, voice, OCR, turn) default 1
    VENUS_THREADS_LLM   llama.cpp decode when the setting is 0 (choose) default: physical cores - 1, 1..8

An explicit value in settings or options still wins; a malformed variable is an error that names it.
"""

from __future__ import annotations

import os

_KINDS = {"ct2": 1, "onnx": 1}


def env_threads(kind: str) -> int | None:
    """The count set in VENUS_THREADS_<KIND>, or None when unset; ValueError names a malformed one."""
    name = f"VENUS_THREADS_{kind.upper()}"
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number of threads, got {raw!r}") from None
    if not 1 <= value <= 256:
        raise ValueError(f"{name} must be within 1..256, got {value}")
    return value


def default_threads(kind: str) -> int:
    """Threads for a kernel of `kind` ("ct2" or "onnx"): the environment's count, else the built-in default."""
    return env_threads(kind) or _KINDS[kind]
