"""Find files by name and content under the allowed folders, and open files, folders, apps or URLs."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from engine.errors import ToolDenied, ToolError
from harness.sandbox import AllowedRoots
from harness.tool import Permission, Tool, ToolContext, ToolOutput, ToolSpec

MAX_CONTENT_BYTES = 5 * 1024 * 1024  # larger files are matched by name only
SNIPPET_CHARS = 160
OPEN_SCHEMES = ("http", "https", "mailto")


def _matches_name(name: str, pattern: str) -> bool:
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatch(name.lower(), pattern.lower())
    return pattern.lower() in name.lower()


def _content_hit(path: Path, needle: str) -> tuple[int, str] | None:
    """(line number, snippet) of the first line containing `needle`, or None; binary files never match."""
    try:
        if path.stat().st_size > MAX_CONTENT_BYTES:
            return None
        with path.open("rb") as fh:
            head = fh.read(4096)
            if b"\0" in head:
                return None
            data = head + fh.read()
    except OSError:
        return None
    lowered = needle.lower()
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if lowered in line.lower():
            return number, line.strip()[:SNIPPET_CHARS]
    return None


class FileTools:
    """find_files and open; both confined to the allowed folders (URLs and apps aside)."""

    def __init__(self, roots: AllowedRoots) -> None:
        self.roots = roots

    def find(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Walk the allowed folders (or one folder inside them) and return matching files."""
        name, content = arguments.get("name", ""), arguments.get("content", "")
        if not name and not content:
            raise ToolError("find_files needs 'name', 'content' or both", fix="give a file name pattern or text")
        limit = arguments.get("max_results", 20)
        starts = [self.roots.resolve(arguments["folder"])] if arguments.get("folder") else list(self.roots.roots)
        if not starts:
            self.roots.resolve(".")  # raises the clear "no folders are allowed" error
        ctx.progress(0, "listing files")
        candidates = [p for start in starts for p in self.roots.walk_files(start)
                      if not name or _matches_name(p.name, name)]
        matches: list[dict[str, Any]] = []
        step = max(1, len(candidates) // 50)
        for index, path in enumerate(candidates):
            if index % step == 0:
                ctx.progress(100.0 * index / max(1, len(candidates)), f"searched {index} of {len(candidates)} files")
            else:
                ctx.check_cancelled()
            entry: dict[str, Any] = {"path": str(path), "size": path.stat().st_size}
            if content:
                hit = _content_hit(path, content)
                if hit is None:
                    continue
                entry["line"], entry["snippet"] = hit
            matches.append(entry)
            if len(matches) >= limit:
                break
        what = " and ".join(x for x in (f"named like '{name}'" if name else "",
                                         f"containing '{content}'" if content else "") if x)
        count = f"{len(matches)}{'+' if len(matches) >= limit else ''}"
        return ToolOutput(summary=f"Found {count} file{'s' if len(matches) != 1 else ''} {what}",
                          data={"matches": matches, "searched": len(candidates)})

    def open(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Open a URL, a file or folder inside the allowed folders, or an application by name."""
        target = arguments["target"].strip()
        parsed = urlparse(target)
        if parsed.scheme and len(parsed.scheme) > 1:
            if parsed.scheme.lower() not in OPEN_SCHEMES:
                raise ToolDenied(f"will not open a {parsed.scheme}: link", fix=f"only {', '.join(OPEN_SCHEMES)} "
                                 "links are opened")
            _open_with_default(target)
            return ToolOutput(summary=f"Opened {target}", data={"opened": target, "kind": "url"})
        looks_like_path = any(sep in target for sep in ("/", "\\")) or target.startswith(("~", "."))
        if looks_like_path or (self.roots and (self.roots.roots[0] / target).exists()):
            path = self.roots.resolve(target)
            if not path.exists():
                raise ToolError(f"{target!r} does not exist", fix="check the path, e.g. with find_files")
            _open_with_default(str(path))
            kind = "folder" if path.is_dir() else "file"
            return ToolOutput(summary=f"Opened the {kind} {path.name}", data={"opened": str(path), "kind": kind})
        launched = _launch_app(target)
        return ToolOutput(summary=f"Started {target}", data={"opened": launched, "kind": "app"})


def _spawn(argv: list[str]) -> None:
    """Start a launcher detached from Venus; an immediate non-zero exit is an error."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise ToolError(f"could not run {argv[0]}: {exc}", fix=f"install {argv[0]}") from exc
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        return  # still running: some launchers stay until the app exits
    if proc.returncode != 0:
        detail = err.decode(errors="replace").strip()[:300]
        raise ToolError(f"{argv[0]} could not open {argv[-1]!r} (exit {proc.returncode}: {detail})")


def _open_with_default(target: str) -> None:
    if sys.platform == "win32":
        os.startfile(target)  # type: ignore[attr-defined]  # noqa: S606 - the OS default handler
    elif sys.platform == "darwin":
        _spawn(["open", target])
    elif shutil.which("xdg-open"):
        _spawn(["xdg-open", target])
    elif shutil.which("gio"):
        _spawn(["gio", "open", target])
    else:
        raise ToolError("no program to open files with the default application was found",
                        fix="install xdg-utils (xdg-open) or glib (gio)")


def _no_opener() -> str | None:
    if sys.platform in ("win32", "darwin") or shutil.which("xdg-open") or shutil.which("gio"):
        return None
    return "no program to open things with (install xdg-utils)"


def _desktop_dirs() -> list[Path]:
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local/share")
    data_dirs = (os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":")
    return [Path(d) / "applications" for d in [data_home, *data_dirs] if d]


def _find_desktop_entry(app: str) -> Path | None:
    wanted = app.lower().removesuffix(".desktop")
    for folder in _desktop_dirs():
        if not folder.is_dir():
            continue
        for entry in sorted(folder.glob("*.desktop")):
            if entry.stem.lower() == wanted:
                return entry
            for line in entry.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Name=") and line[5:].strip().lower() == wanted:
                    return entry
    return None


def _launch_app(app: str) -> str:
    if sys.platform == "win32":
        os.startfile(app)  # type: ignore[attr-defined]  # noqa: S606
        return app
    if sys.platform == "darwin":
        _spawn(["open", "-a", app])
        return app
    entry = _find_desktop_entry(app)
    if entry is None:
        raise ToolError(f"no installed application called {app!r} was found",
                        fix="say the application's name as shown in the menu")
    if shutil.which("gtk-launch"):
        _spawn(["gtk-launch", entry.name])
    else:
        _spawn(["gio", "launch", str(entry)])
    return str(entry)


def file_tools(roots: AllowedRoots) -> list[Tool]:
    """find_files and open."""
    tools = FileTools(roots)
    return [
        Tool(ToolSpec(
            name="find_files", permission=Permission.ALLOW,
            description="Find files in the user's allowed folders by name (substring or glob like '*.pdf') "
                        "and/or by text they contain.",
            parameters={"type": "object", "additionalProperties": False, "properties": {
                "name": {"type": "string", "description": "part of the file name, or a glob"},
                "content": {"type": "string", "description": "text the file must contain"},
                "folder": {"type": "string", "description": "search only this folder (inside the allowed ones)"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20},
            }},
        ), tools.find),
        Tool(ToolSpec(
            name="open",
            description="Open a file or folder (inside the allowed folders), a web link, or an application by "
                        "name, with the system's default program.",
            parameters={"type": "object", "additionalProperties": False, "required": ["target"],
                        "properties": {"target": {"type": "string", "minLength": 1}}},
            idempotent=False, question="open {target}",
        ), tools.open, _no_opener),
    ]
