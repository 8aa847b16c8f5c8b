"""Entry point of the frozen Venus (PyInstaller): `--version`, the bundled default models, then `app.cli.main`.

The bundle is read-only (/opt/venus, an AppImage, Program Files, a .app), so the default models that ship inside
it are offered to the user's models folder (`engine.paths.models_dir()`), where Venus looks for every model and
where later downloads go: linked where the bundle's path is stable (a .deb in /opt/venus, a .app), copied where it
is not (an AppImage mounts at a new path each run; Windows links need privileges).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

BUNDLED_MODELS = "models"  # folder inside the bundle (sys._MEIPASS) that holds the default models


def bundle_root() -> Path | None:
    """The frozen bundle's data folder, or None when running from source."""
    base = getattr(sys, "_MEIPASS", None)
    return Path(base) if base else None


def venus_version() -> str:
    """Venus's version from the packaged metadata (copied into the bundle by the spec)."""
    from importlib import metadata

    try:
        return metadata.version("venus-assistant")
    except metadata.PackageNotFoundError:
        return "unknown"


def _link_mode() -> str:
    if os.name == "nt" or os.environ.get("APPIMAGE"):
        return "copy"
    return "link"


def offer_bundled_models(bundled: Path, user_models: Path, mode: str | None = None) -> list[Path]:
    """Put every bundled model file into the user's models folder; a real file of the user's is never touched.

    A missing file or a symlink (possibly into an older or moved bundle) gets the bundled one; returns the paths set.
    """
    mode = mode or _link_mode()
    done = []
    for src in sorted(p for p in bundled.rglob("*") if p.is_file()):
        dest = user_models / src.relative_to(bundled)
        if dest.is_symlink():
            if mode == "link" and os.readlink(dest) == str(src):
                continue
            dest.unlink()
        elif dest.exists():
            continue  # the user's own (or an earlier copied) file: installs and downloads stay theirs
        dest.parent.mkdir(parents=True, exist_ok=True)
        if mode == "link":
            dest.symlink_to(src)
        else:
            tmp = dest.with_name(dest.name + ".partial")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dest)
        done.append(dest)
    return done


def main(argv: list[str] | None = None) -> int:
    """Run Venus from the bundle."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--version"], ["-V"]):
        print(f"venus {venus_version()}")
        return 0
    root = bundle_root()
    if root is not None and (root / BUNDLED_MODELS).is_dir():
        from engine import paths

        try:
            offer_bundled_models(root / BUNDLED_MODELS, paths.models_dir())
        except OSError as exc:  # a full or read-only home: Venus still starts, and the doctor names the models
            print(f"venus: could not set up the bundled models in {paths.models_dir()}: {exc}", file=sys.stderr)
    from app.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
