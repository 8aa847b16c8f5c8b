"""Subprocesses a task can kill: each runs in its own process group, killed whole on cancel or timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.errors import ToolError

OUTPUT_LIMIT = 64 * 1024  # bytes of stdout/stderr kept per stream


class ProcessTimeout(ToolError):
    """A subprocess ran past its own time limit and was killed."""

    code = "timeout"


@dataclass(frozen=True)
class ProcessResult:
    """What a finished subprocess left: exit code and (capped) output."""

    returncode: int
    stdout: str
    stderr: str
    truncated: bool  # True when output beyond OUTPUT_LIMIT was dropped


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        if sys.platform == "win32":
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], capture_output=True, check=False)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        proc.kill()


def _decode(data: bytes | None) -> tuple[str, bool]:
    data = data or b""
    return data[:OUTPUT_LIMIT].decode("utf-8", errors="replace"), len(data) > OUTPUT_LIMIT


def run_isolated(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    input_bytes: bytes | None = None,
    timeout_s: float | None = None,
    env: Mapping[str, str] | None = None,
    cancel_event: threading.Event | None = None,
) -> ProcessResult:
    """Run `argv` to completion in a new process group; kill the whole group when `cancel_event` is set.

    Raises `harness.tool.TaskCancelled` after a cancel, `ProcessTimeout` after its own `timeout_s`.
    """
    from harness.tool import TaskCancelled  # local import: tool.py imports this module

    flags = subprocess.CREATE_NEW_PROCESS_GROUP if sys.platform == "win32" else 0
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if input_bytes is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=sys.platform != "win32", creationflags=flags,
        )
    except OSError as exc:
        raise ToolError(f"could not start {argv[0]!r}: {exc.strerror or exc}",
                        fix=f"check that {argv[0]} is installed and on PATH") from exc
    waited = 0.0
    step = 0.05
    pending_input = input_bytes
    while True:
        try:
            out, err = proc.communicate(input=pending_input, timeout=step)
            break
        except subprocess.TimeoutExpired:
            pending_input = None  # already handed over; retrying must not send it twice
            waited += step
            if cancel_event is not None and cancel_event.is_set():
                _kill_group(proc)
                proc.communicate()
                raise TaskCancelled("subprocess killed") from None
            if timeout_s is not None and waited >= timeout_s:
                _kill_group(proc)
                proc.communicate()
                raise ProcessTimeout(f"{argv[0]} ran longer than {timeout_s:g} s and was killed") from None
    stdout, cut_out = _decode(out)
    stderr, cut_err = _decode(err)
    return ProcessResult(proc.returncode, stdout, stderr, cut_out or cut_err)
