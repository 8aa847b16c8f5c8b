"""File tools stay inside the folders the user allowed: no `..`, no symlink, no absolute path escapes."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from engine.errors import ToolDenied


class AllowedRoots:
    """The folders file tools may touch, resolved once (symlinks followed) at construction."""

    def __init__(self, folders: Iterable[str | Path]) -> None:
        roots = []
        for folder in folders:
            path = Path(folder).expanduser()
            if not path.is_dir():
                raise ValueError(f"allowed folder {folder!s} does not exist or is not a folder; "
                                 "fix harness.allowed_folders in settings")
            roots.append(path.resolve(strict=True))
        self.roots: tuple[Path, ...] = tuple(roots)

    def __bool__(self) -> bool:
        return bool(self.roots)

    def contains(self, path: Path) -> bool:
        """True when the fully resolved `path` lies inside one of the roots."""
        resolved = path.resolve(strict=False)
        return any(resolved == root or resolved.is_relative_to(root) for root in self.roots)

    def resolve(self, user_path: str) -> Path:
        """Turn a path from the model into a real path inside a root; ToolDenied if it would escape.

        Relative paths are taken from the first root. The check runs on the resolved path, so `..` parts and
        symlinks pointing outside are refused.
        """
        if not self.roots:
            raise ToolDenied("no folders are allowed for file tools",
                             fix="add a folder under Settings → Tools → Allowed folders")
        raw = Path(os.path.expanduser(user_path))
        candidate = raw if raw.is_absolute() else self.roots[0] / raw
        if not self.contains(candidate):
            allowed = ", ".join(str(r) for r in self.roots)
            raise ToolDenied(f"{user_path!r} is outside the allowed folders ({allowed})",
                             fix="ask for a path inside an allowed folder, or allow its folder in Settings")
        return candidate.resolve(strict=False)

    def walk_files(self, start: Path) -> Iterator[Path]:
        """Every regular file under `start` whose real location is inside a root; symlinks are not followed."""
        for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
            base = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (base / d).is_symlink())
            for name in sorted(filenames):
                path = base / name
                if path.is_symlink() and not self.contains(path):
                    continue  # a link pointing outside the allowed folders is invisible
                if path.is_file():
                    yield path
