"""User-facing model operations: list with header facts, verify, import in place, download."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.errors import ModelCorrupt, VenusError
from engine.models.download import ProgressCallback, download
from engine.models.gguf import describe, read_gguf
from engine.models.registry import ModelEntry, add_user_entry, all_entries, sha256_file, verify


@dataclass
class ModelStatus:
    """One row of `venus models list`."""

    entry: ModelEntry
    problems: list[str]
    header: str = ""  # from the GGUF header, for LLMs

    @property
    def ok(self) -> bool:
        """True when every file is present and verified."""
        return not self.problems


def status_of(entry: ModelEntry, *, full: bool = True) -> ModelStatus:
    """Check one model; reads the GGUF header of LLMs."""
    problems = verify(entry, full=full)
    header = ""
    if not problems and entry.kind == "llm":
        try:
            header = describe(read_gguf(entry.primary))
        except VenusError as exc:
            problems.append(str(exc))
    return ModelStatus(entry=entry, problems=problems, header=header)


def list_models(*, full: bool = False) -> list[ModelStatus]:
    """All known models with their state."""
    return [status_of(e, full=full) for e in all_entries()]


def _slug(path: Path) -> str:
    return path.stem.lower().replace(" ", "-").replace("_", "-")


def import_model(path: str | os.PathLike, model_id: str | None = None) -> ModelEntry:
    """Register a GGUF the user already has, in place (no copy); validated first."""
    src = Path(path).expanduser().resolve()
    info = read_gguf(src)  # raises a clear error for missing / corrupt files
    entry = {
        "id": model_id or _slug(src),
        "kind": "llm",
        "title": info.name,
        "license": str(info.metadata.get("general.license", "unknown")),
        "origin": "imported",
        "files": [{"name": str(src), "sha256": sha256_file(src), "size": src.stat().st_size}],
    }
    add_user_entry(entry)
    from engine.models.registry import get_entry

    return get_entry(entry["id"])


def download_model(url: str, sha256: str, model_id: str | None = None,
                   progress: ProgressCallback | None = None) -> ModelEntry:
    """Download a GGUF, verify it and register it."""
    dest = download(url, sha256, progress=progress)
    try:
        info = read_gguf(dest)
    except ModelCorrupt:
        raise
    add_user_entry({
        "id": model_id or _slug(dest),
        "kind": "llm",
        "title": info.name,
        "license": str(info.metadata.get("general.license", "unknown")),
        "origin": "downloaded",
        "files": [{"name": dest.name, "sha256": sha256.lower(), "size": dest.stat().st_size}],
    })
    from engine.models.registry import get_entry

    return get_entry(model_id or _slug(dest))
