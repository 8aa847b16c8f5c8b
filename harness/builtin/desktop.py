"""Desktop tools: clipboard, screenshot with OCR, and system status (battery, CPU, memory, disk)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from engine.errors import ToolError
from harness.tool import Permission, Tool, ToolContext, ToolOutput, ToolSpec

MAX_CLIPBOARD_CHARS = 20_000
MIN_OCR_CONFIDENCE = 0.5


def _clipboard_commands() -> tuple[list[str], list[str]]:
    """(read argv, write argv) for this desktop; ToolError naming what to install when none is present."""
    if sys.platform == "darwin":
        return ["pbpaste"], ["pbcopy"]
    if sys.platform == "win32":
        ps = ["powershell", "-NoProfile", "-NonInteractive", "-Command"]
        return ps + ["Get-Clipboard -Raw"], ps + ["Set-Clipboard -Value ([Console]::In.ReadToEnd())"]
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        return ["wl-paste", "--no-newline"], ["wl-copy"]
    if os.environ.get("DISPLAY"):
        if shutil.which("xclip"):
            return ["xclip", "-selection", "clipboard", "-o"], ["xclip", "-selection", "clipboard", "-i"]
        if shutil.which("xsel"):
            return ["xsel", "--clipboard", "--output"], ["xsel", "--clipboard", "--input"]
    raise ToolError("no clipboard program is available on this desktop",
                    fix="install xclip or xsel (X11) or wl-clipboard (Wayland)")


def _clipboard_missing() -> str | None:
    try:
        _clipboard_commands()
    except ToolError as exc:
        return str(exc)  # it names what to install
    return None


def _no_screen() -> str | None:
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return "no graphical display to take a screenshot of"
    return None


def read_clipboard(ctx: ToolContext) -> str:
    """The clipboard's text ('' when it holds no text)."""
    argv, _ = _clipboard_commands()
    result = ctx.run_process(argv, timeout_s=10)
    if result.returncode != 0:
        if "target" in result.stderr.lower() or not result.stderr.strip():
            return ""  # xclip says "target STRING not available" for an empty or non-text clipboard
        raise ToolError(f"{argv[0]} could not read the clipboard: {result.stderr.strip()[:200]}")
    return result.stdout


def write_clipboard(text: str) -> None:
    """Put `text` on the clipboard. The X11 helpers stay alive to serve it, so their output is not captured."""
    _, argv = _clipboard_commands()
    try:
        proc = subprocess.run(argv, input=text.encode("utf-8"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10, start_new_session=True, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"{argv[0]} could not write the clipboard: {exc}") from exc
    if proc.returncode != 0:
        raise ToolError(f"{argv[0]} could not write the clipboard (exit {proc.returncode})")
    if argv[0] in ("xclip", "xsel"):
        _wait_until_owned(text)


def _wait_until_owned(text: str, timeout_s: float = 3.0) -> None:
    """xclip/xsel take the X selection in a forked child; wait until a read returns what was written."""
    read_argv, _ = _clipboard_commands()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = subprocess.run(read_argv, capture_output=True, timeout=5, check=False)
        if done.stdout.decode("utf-8", errors="replace") == text:
            return
        time.sleep(0.05)
    raise ToolError(f"{read_argv[0]} did not take over the clipboard within {timeout_s:g} s")


class _Ocr:
    """RapidOCR loaded on first use (its ONNX models ship inside the wheel) and shared by all tasks."""

    _engine: Any = None
    _lock = threading.Lock()

    @classmethod
    def read(cls, image_bgr: Any) -> list[dict[str, Any]]:
        with cls._lock:
            if cls._engine is None:
                from rapidocr import RapidOCR

                cls._engine = RapidOCR(params={
                    "Global.log_level": "warning",
                    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                })
            output = cls._engine(image_bgr)
        found = zip(output.boxes, output.txts, output.scores, strict=True) if output.boxes is not None else ()
        lines = []
        for box, text, confidence in found:
            if float(confidence) >= MIN_OCR_CONFIDENCE:
                xs, ys = [p[0] for p in box], [p[1] for p in box]
                lines.append({"text": text, "confidence": round(float(confidence), 3),
                              "box": [int(min(xs)), int(min(ys)), int(max(xs)), int(max(ys))]})
        return sorted(lines, key=lambda line: (line["box"][1] // 10, line["box"][0]))


def screenshot_text(monitor: int = 1, ctx: ToolContext | None = None) -> dict[str, Any]:
    """Grab a monitor (1 = primary, 0 = all) and return its size and the text OCR found on it."""
    import mss
    import numpy as np

    try:
        with (getattr(mss, "MSS", None) or mss.mss)() as grabber:  # mss 10 renamed the class
            if monitor >= len(grabber.monitors):
                raise ToolError(f"there is no monitor {monitor}; this desktop has {len(grabber.monitors) - 1}")
            shot = grabber.grab(grabber.monitors[monitor])
    except mss.exception.ScreenShotError as exc:
        raise ToolError(f"could not take a screenshot: {exc}",
                        fix="Venus needs a graphical session (and on macOS the Screen Recording permission)") from exc
    image = np.asarray(shot)[:, :, :3]  # BGRA → BGR, what OCR expects
    if ctx is not None:
        ctx.progress(30, "reading the text on the screen")
    lines = _Ocr.read(np.ascontiguousarray(image))
    return {"width": shot.width, "height": shot.height, "lines": lines,
            "text": "\n".join(line["text"] for line in lines)}


def system_status() -> dict[str, Any]:
    """Battery, CPU, memory and disk figures from psutil."""
    battery = psutil.sensors_battery() if hasattr(psutil, "sensors_battery") else None
    memory = psutil.virtual_memory()
    disk = psutil.disk_usage(str(Path.home()))
    return {
        "battery": None if battery is None else {
            "percent": round(battery.percent, 1), "plugged_in": battery.power_plugged,
            "minutes_left": None if battery.secsleft in (psutil.POWER_TIME_UNLIMITED, psutil.POWER_TIME_UNKNOWN)
            else int(battery.secsleft // 60)},
        "cpu_percent": psutil.cpu_percent(interval=0.3),
        "cpu_count": psutil.cpu_count(),
        "memory": {"percent": memory.percent, "available_gb": round(memory.available / 1e9, 2),
                   "total_gb": round(memory.total / 1e9, 2)},
        "disk": {"path": str(Path.home()), "percent": disk.percent, "free_gb": round(disk.free / 1e9, 2),
                 "total_gb": round(disk.total / 1e9, 2)},
    }


def _status_line(status: dict[str, Any]) -> str:
    parts = [f"CPU at {status['cpu_percent']:.0f}%", f"memory {status['memory']['percent']:.0f}% used",
             f"{status['disk']['free_gb']:.0f} GB free on disk"]
    if status["battery"]:
        parts.insert(0, f"battery at {status['battery']['percent']:.0f}%")
    return ", ".join(parts)


def _clipboard_read(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    text = read_clipboard(ctx)
    cut = len(text) > MAX_CLIPBOARD_CHARS
    return ToolOutput(summary="The clipboard is empty" if not text else f"The clipboard holds {len(text)} characters",
                      data={"text": text[:MAX_CLIPBOARD_CHARS], "truncated": cut})


def _clipboard_write(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    write_clipboard(arguments["text"])
    return ToolOutput(summary="Copied to the clipboard", data={"characters": len(arguments["text"])})


def _screenshot(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    result = screenshot_text(arguments.get("monitor", 1), ctx)
    count = len(result["lines"])
    return ToolOutput(summary=f"Read {count} line{'s' if count != 1 else ''} of text on the screen", data=result)


def _system(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    status = system_status()
    return ToolOutput(summary=_status_line(status), data=status)


def desktop_tools() -> list[Tool]:
    """read_clipboard, write_clipboard, read_screen and system_status."""
    empty = {"type": "object", "additionalProperties": False, "properties": {}}
    return [
        Tool(ToolSpec(name="read_clipboard", permission=Permission.ALLOW, description="Read the text on the clipboard.",
                      parameters=empty), _clipboard_read, _clipboard_missing),
        Tool(ToolSpec(
            name="write_clipboard", description="Put text on the clipboard.", idempotent=False,
            question="put this on the clipboard: {text}",
            parameters={"type": "object", "additionalProperties": False, "required": ["text"],
                        "properties": {"text": {"type": "string", "maxLength": MAX_CLIPBOARD_CHARS}}},
        ), _clipboard_write, _clipboard_missing),
        Tool(ToolSpec(
            name="read_screen", permission=Permission.ALLOW,
            description="Take a screenshot and read the text visible on the screen (OCR).",
            parameters={"type": "object", "additionalProperties": False, "properties": {
                "monitor": {"type": "integer", "minimum": 0, "default": 1,
                            "description": "1 = main screen, 0 = all screens"}}},
        ), _screenshot, _no_screen),
        Tool(ToolSpec(name="system_status", permission=Permission.ALLOW,
                      description="Battery, CPU, memory and disk usage of this computer.", parameters=empty), _system),
    ]
