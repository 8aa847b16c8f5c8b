"""Subprocesses a task can kill: each runs in its own process group, killed whole on cancel or timeout.

Their output is read as it comes and capped, so a command printing gigabytes costs no more memory than the cap.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from engine.errors import ToolError

OUTPUT_LIMIT = 64 * 1024  # bytes of stdout/stderr kept per stream
_CHUNK = 64 * 1024  # bytes read from a pipe at a time
_POLL_S = 0.05  # how often a running subprocess is checked for cancel and timeout


class ProcessTimeout(ToolError):
    """A subprocess ran past its own time limit and was killed."""

    code = "timeout"


@dataclass(frozen=True)
class ProcessResult:
    """What a finished subprocess left: exit code and (capped) output."""

    returncode: int
    stdout: str
    stderr: str
    truncated: bool  # True when output beyond OUTPUT_LIMIT was dropped (the text then ends with a marker)


def truncation_marker(dropped_bytes: int) -> str:
    """The line that ends capped output, so a reader (the user or the model) sees something is missing."""
    return f"\n[output truncated: {dropped_bytes} more bytes not shown]"


def cap_text(text: str, limit_bytes: int) -> tuple[str, bool]:
    """`text` cut to at most `limit_bytes` of UTF-8 plus a visible truncation marker; True when it was cut."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit_bytes:
        return text, False
    kept = data[:limit_bytes].decode("utf-8", errors="ignore")  # a character split by the cut is dropped
    return kept + truncation_marker(len(data) - limit_bytes), True


def kill_process_group(pid: int) -> None:
    """Kill the process group led by `pid` (on Windows: the process tree); quiet when it is already gone."""
    try:
        if sys.platform == "win32":
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(pid)], capture_output=True, check=False)
        else:
            os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the process and everything left in its group (even after the leader exited), then reap it."""
    kill_process_group(proc.pid)
    if proc.poll() is None:
        proc.kill()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class _CappedReader:
    """Reads a pipe to its end on its own thread, keeping the first `limit` bytes and counting the rest."""

    def __init__(self, pipe: IO[bytes], limit: int) -> None:
        self._limit = limit
        self._kept = bytearray()
        self._dropped = 0
        self._thread = threading.Thread(target=self._pump, args=(pipe,), name="venus-process-output", daemon=True)
        self._thread.start()

    def wait(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the pipe's end (every process holding it exited); True once reached."""
        self._thread.join(max(0.0, timeout_s))
        return not self._thread.is_alive()

    def result(self, timeout_s: float = 5.0) -> tuple[str, bool]:
        """The kept text, with a truncation marker when bytes were dropped, and whether any were."""
        self._thread.join(timeout_s)
        text = bytes(self._kept).decode("utf-8", errors="replace")
        if self._dropped:
            text += truncation_marker(self._dropped)
        return text, self._dropped > 0

    def _pump(self, pipe: IO[bytes]) -> None:
        with pipe:
            while chunk := os.read(pipe.fileno(), _CHUNK):
                room = max(0, self._limit - len(self._kept))
                self._kept += chunk[:room]
                self._dropped += len(chunk) - min(room, len(chunk))


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write `data` to a child's stdin and close it; a child that stops reading is not an error."""
    try:
        with pipe:
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass


def _finished(proc: subprocess.Popen[bytes], out: _CappedReader, err: _CappedReader, step_s: float) -> bool:
    """Wait up to `step_s` for the process to exit and its pipes to close (a background child may hold them)."""
    deadline = time.monotonic() + step_s
    try:
        proc.wait(timeout=step_s)
    except subprocess.TimeoutExpired:
        return False
    return out.wait(deadline - time.monotonic()) and err.wait(deadline - time.monotonic())


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

    Output past OUTPUT_LIMIT per stream is read and dropped, and the kept text ends with a truncation marker.
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
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _CappedReader(proc.stdout, OUTPUT_LIMIT), _CappedReader(proc.stderr, OUTPUT_LIMIT)
    if input_bytes is not None and proc.stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, input_bytes), name="venus-process-input", daemon=True).start()
    started = time.monotonic()
    while not _finished(proc, out, err, _POLL_S):
        if cancel_event is not None and cancel_event.is_set():
            _kill_group(proc)
            raise TaskCancelled("subprocess killed")
        if timeout_s is not None and time.monotonic() - started >= timeout_s:
            _kill_group(proc)
            raise ProcessTimeout(f"{argv[0]} ran longer than {timeout_s:g} s and was killed")
    stdout, cut_out = out.result()
    stderr, cut_err = err.result()
    return ProcessResult(proc.returncode, stdout, stderr, cut_out or cut_err)
