"""The model registry: the shipped manifest plus models the user imported or downloaded.

A model is a list of files under the models folder (or, for imported models, linked in place), each with a
sha256. `resolve()` answers "where is model X?" and raises a clear error naming the fix when it is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from engine import paths
from engine.errors import ModelCorrupt, ModelNotFound

_HASH_CACHE_LOCK = threading.Lock()


@dataclass(frozen=True)
class ModelSource:
    """One piece of a file inside a PyPI wheel; several pieces are concatenated in order."""

    package: str  # a pip requirement pinned with ==
    member: str  # path inside the wheel


@dataclass(frozen=True)
class ModelFile:
    """One file of a model, relative to the models folder (or absolute for an imported model)."""

    name: str
    sha256: str | None
    size: int | None
    sources: tuple[ModelSource, ...] = ()


@dataclass(frozen=True)
class ModelEntry:
    """A model Venus knows about."""

    id: str
    kind: str  # llm / asr / vad / turn / tts / vision / speaker
    title: str
    license: str
    files: tuple[ModelFile, ...]
    default: bool = False
    origin: str = "manifest"  # manifest / imported / downloaded
    # LLMs only: whether the model writes its control decisions and tool calls well enough to be trusted with
    # them (measured); None = not measured, and the settings' "auto" then keeps tool calls on
    tool_calls: bool | None = None
    extra: dict = field(default_factory=dict)

    def paths(self, root: Path | None = None) -> list[Path]:
        """Absolute paths of the model's files."""
        root = root or paths.models_dir()
        return [Path(f.name) if os.path.isabs(f.name) else root / f.name for f in self.files]

    @property
    def primary(self) -> Path:
        """The path to hand to the loader: the file for single-file models, the folder for ASR models."""
        first = self.paths()[0]
        return first.parent if self.kind == "asr" and len(self.files) > 1 else first


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file, streamed."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _entry_from_dict(d: dict, origin: str) -> ModelEntry:
    files = tuple(
        ModelFile(
            name=f["name"],
            sha256=f.get("sha256"),
            size=f.get("size"),
            sources=tuple(ModelSource(**s) for s in f.get("sources", ())),
        )
        for f in d["files"]
    )
    return ModelEntry(
        id=d["id"], kind=d["kind"], title=d.get("title", d["id"]), license=d.get("license", "unknown"),
        files=files, default=d.get("default", False), origin=origin, tool_calls=d.get("tool_calls"),
        extra=dict(d.get("extra", {})),  # e.g. a catalog model's languages and catalog id
    )


def manifest_entries() -> list[ModelEntry]:
    """The models that ship with Venus (by reference to PyPI packages)."""
    raw = json.loads(resources.files("engine.models").joinpath("manifest.json").read_text(encoding="utf-8"))
    return [_entry_from_dict(d, "manifest") for d in raw["models"]]


def _user_index_path() -> Path:
    return paths.models_dir() / "user-models.json"


def user_entries() -> list[ModelEntry]:
    """Models the user imported or downloaded; a broken index is reported, never fatal."""
    index = _user_index_path()
    if not index.exists():
        return []
    try:
        raw = json.loads(index.read_text(encoding="utf-8"))
        return [_entry_from_dict(d, d.get("origin", "imported")) for d in raw.get("models", [])]
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelCorrupt(f"the model index {index} is unreadable ({exc})", fix="delete it and import the models again") from exc


def add_user_entry(entry: dict) -> None:
    """Record an imported/downloaded model in the user index (atomic rewrite)."""
    index = _user_index_path()
    raw = {"models": []}
    if index.exists():
        raw = json.loads(index.read_text(encoding="utf-8"))
    raw["models"] = [m for m in raw["models"] if m["id"] != entry["id"]] + [entry]
    fd, tmp = tempfile.mkstemp(dir=index.parent, prefix=".user-models-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(raw, fh, indent=2)
    os.replace(tmp, index)


def all_entries() -> list[ModelEntry]:
    """Shipped and user models; a user model with the same id overrides the shipped one."""
    merged = {e.id: e for e in manifest_entries()}
    for e in user_entries():
        merged[e.id] = e
    return list(merged.values())


def get_entry(model_id: str) -> ModelEntry:
    """The entry for an id, or ModelNotFound listing what exists."""
    for e in all_entries():
        if e.id == model_id:
            return e
    known = ", ".join(e.id for e in all_entries())
    if _in_catalog(model_id):
        raise ModelNotFound(f"model {model_id!r} is in the catalog but not downloaded",
                            fix=f"run `venus models get {model_id}` (or choose one of: {known})")
    raise ModelNotFound(f"no model with id {model_id!r}", fix=f"choose one of: {known}, or `venus models import PATH`")


def _in_catalog(model_id: str) -> bool:
    try:
        from engine.models.catalog import load_catalog

        return any(m.id == model_id for m in load_catalog().models)
    except Exception:  # a broken catalog must not hide the real error: the model is missing
        return False


def tool_calls_capability(model: str) -> bool | None:
    """Whether an LLM (an id, or a path to one of its files) is trusted with tool calls; None if not measured."""
    name = Path(model).expanduser().name
    try:
        entries = all_entries()
    except ModelCorrupt:  # a broken user index is reported where models are listed; the manifest still knows
        entries = manifest_entries()
    for e in entries:
        if e.kind == "llm" and (e.id == model or any(Path(f.name).name == name for f in e.files)):
            return e.tool_calls
    return None


def verify(entry: ModelEntry, *, full: bool = True) -> list[str]:
    """Problems with a model's files (empty when fine). `full=False` checks presence and size only."""
    problems = []
    for f, path in zip(entry.files, entry.paths(), strict=True):
        if not path.exists():
            problems.append(f"{path} is missing")
            continue
        size = path.stat().st_size
        if f.size is not None and size != f.size:
            problems.append(f"{path} has {size} bytes, expected {f.size} (truncated or replaced)")
            continue
        if full and f.sha256 and _cached_sha256(path) != f.sha256:
            problems.append(f"{path} has the wrong sha256 (corrupt)")
    return problems


def _stamp_of(path: Path) -> tuple[Path, str]:
    stat = path.stat()
    return path.with_name(f".{path.name}.sha256"), f"{stat.st_size}:{stat.st_mtime_ns}"


def remember_sha256(path: Path, digest: str) -> None:
    """Record a digest just computed while writing `path` (a download), so verifying it does not hash it again."""
    stamp, key = _stamp_of(path)
    try:
        stamp.write_text(f"{key} {digest}\n")
    except OSError:
        pass


def known_sha256(path: Path) -> str:
    """sha256 of a file, from the stamp beside it when the file has not changed since (hashed otherwise)."""
    return _cached_sha256(path)


def _cached_sha256(path: Path) -> str:
    # Hashing 250 MB takes a while; remember the digest per (size, mtime) beside the file.
    stamp, key = _stamp_of(path)
    with _HASH_CACHE_LOCK:
        try:
            cached_key, digest = stamp.read_text().split()
            if cached_key == key:
                return digest
        except (OSError, ValueError):
            pass
        digest = sha256_file(path)
        try:
            stamp.write_text(f"{key} {digest}\n")
        except OSError:
            pass  # read-only folder of an imported model: just do not cache
        return digest


def resolve(model: str, kind: str | None = None, *, check: bool = True) -> Path:
    """Path to load for a model id, or for a path the user gave directly. Raises with the fix if unusable."""
    candidate = Path(model).expanduser()
    if candidate.suffix in {".gguf", ".onnx"} or candidate.is_absolute() or os.sep in model:
        if not candidate.exists():
            raise ModelNotFound(f"model file {candidate} does not exist", fix="check the path in settings")
        return candidate
    entry = get_entry(model)
    if kind and entry.kind != kind:
        raise ModelNotFound(f"model {model!r} is a {entry.kind} model, not {kind}", fix="pick a model of the right kind")
    if check:
        problems = verify(entry, full=False)
        if problems:
            fix = "run `venus models install`" if entry.origin == "manifest" else "import or download it again"
            raise ModelNotFound(f"model {model!r} is not usable: {'; '.join(problems)}", fix=fix)
    return entry.primary


def default_model(kind: str) -> ModelEntry:
    """The default model of a kind."""
    for e in manifest_entries():
        if e.kind == kind and e.default:
            return e
    raise ModelNotFound(f"no default {kind} model in the manifest")
