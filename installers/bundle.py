"""What the frozen Venus carries besides Python code: data files and the default models (used by venus.spec and tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path

# (path in the repository, folder in the bundle): read at run time through __file__ or importlib.resources
DATA_FILES = [
    ("assets/intents", "assets/intents"),
    ("engine/models/manifest.json", "engine/models"),
    ("engine/models/catalog.json", "engine/models"),
    ("engine/timeline/alembic.ini", "engine/timeline"),
    ("engine/timeline/migrations", "engine/timeline/migrations"),
    ("harness/migrations", "harness/migrations"),
]


def bundled_data_files(root: Path) -> list[tuple[Path, str]]:
    """The (source, bundle folder) pairs of every data file; __pycache__ left out."""
    pairs = []
    for rel, dest in DATA_FILES:
        src = root / rel
        if src.is_file():
            pairs.append((src, dest))
            continue
        for path in sorted(src.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                pairs.append((path, str(Path(dest) / path.parent.relative_to(src))))
    return pairs


def default_model_files(root: Path) -> list[str]:
    """Names (relative to the models folder) of every file of the manifest's default models."""
    manifest = json.loads((root / "engine" / "models" / "manifest.json").read_text(encoding="utf-8"))
    return [f["name"] for m in manifest["models"] if m.get("default") for f in m["files"]]


def bundled_model_files(root: Path, models_dir: Path | None = None) -> list[tuple[Path, str]]:
    """The default models as (file in the models folder, bundle folder); a missing one is a clear error."""
    if models_dir is None:
        from engine import paths

        models_dir = Path(os.environ.get("VENUS_MODELS_DIR") or paths.models_dir())
    pairs, missing = [], []
    for name in default_model_files(root):
        src = (models_dir / name).resolve()
        if not src.is_file():
            missing.append(name)
        pairs.append((src, str(Path("models") / Path(name).parent)))
    if missing:
        raise SystemExit(f"default models missing in {models_dir}: {', '.join(missing)}; run `venus models install`")
    return pairs
