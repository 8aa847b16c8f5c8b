"""Resumable model downloads: HTTP Range requests into a `.part` file, sha256 check, atomic rename.

A dropped connection is retried from where it stopped; a wrong checksum deletes the partial file so nothing
half-written is ever left where a model is expected.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from engine import paths
from engine.errors import DownloadError

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int | None], None]  # (bytes so far, total bytes or None)

_HEX = frozenset("0123456789abcdef")


class DownloadCancelled(DownloadError):
    """The download was cancelled on request; the `.part` file is kept, so the same call resumes it."""

    code = "download-cancelled"


class ChecksumFormatError(DownloadError, ValueError):
    """The expected checksum given is not a sha256 (64 hex digits); nothing was downloaded."""

    code = "download-bad-checksum"


def parse_sha256(text: str) -> str:
    """`text` as a lower-case sha256 hex digest, or a ChecksumFormatError saying what is wrong with it."""
    digest = text.strip().lower()
    if len(digest) != 64 or not set(digest) <= _HEX:
        bad = sorted(set(digest) - _HEX)
        what = f"{len(digest)} characters" if len(digest) != 64 else f"not hex ({''.join(bad)!r})"
        raise ChecksumFormatError(f"--sha256 must be 64 hex digits, got {text!r} ({what})",
                                  fix="copy the file's full sha256 from where you found the download")
    return digest


def _check_url(url: str) -> None:
    try:
        scheme = httpx.URL(url).scheme
    except httpx.InvalidURL as exc:
        raise DownloadError(f"{url!r} is not a valid URL ({exc})", fix="give an http:// or https:// address") from exc
    if scheme not in ("http", "https"):
        raise DownloadError(f"{url!r} is not an http:// or https:// URL", fix="give the download's web address")


@dataclass(frozen=True)
class DownloadOptions:
    """How hard to try."""

    retries: int = 5  # reconnect attempts after a dropped connection
    backoff_s: float = 0.5  # first wait between attempts; doubles each time
    timeout_s: float = 30.0  # per read
    chunk_bytes: int = 1 << 16

    def __post_init__(self) -> None:
        if self.retries < 0 or self.backoff_s < 0 or self.timeout_s <= 0 or self.chunk_bytes <= 0:
            raise ValueError("DownloadOptions: retries/backoff must be >= 0, timeout and chunk size > 0")


def _hash_existing(part: Path) -> hashlib._Hash:
    digest = hashlib.sha256()
    with open(part, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest


def download(
    url: str,
    sha256: str | None,
    dest: Path | None = None,
    *,
    progress: ProgressCallback | None = None,
    options: DownloadOptions = DownloadOptions(),
    cancel: threading.Event | None = None,
) -> Path:
    """Download `url` to `dest` (default: models folder + the URL's file name), resuming and verifying.

    `sha256=None` skips the checksum (the caller checks size and format); setting `cancel` stops the download
    between blocks with DownloadCancelled, keeping the `.part` file for the next call to resume.
    """
    sha256 = parse_sha256(sha256) if sha256 is not None else None
    _check_url(url)
    name = url.rstrip("/").rsplit("/", 1)[-1].split("?")[0] or "model.bin"
    dest = dest or paths.models_dir() / name
    part = dest.with_name(dest.name + ".part")
    try:
        return _fetch(url, sha256, dest, part, progress, options, cancel)
    except OSError as exc:  # the disk, not the network: full, read-only, no permission
        raise DownloadError(f"cannot write {exc.filename or part}: {exc.strerror or exc}",
                            fix=f"free space or choose another models folder (VENUS_MODELS_DIR); now {dest.parent}") from exc


def _fetch(url: str, sha256: str | None, dest: Path, part: Path, progress: ProgressCallback | None,
           options: DownloadOptions, cancel: threading.Event | None = None) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = _hash_existing(part) if part.exists() else hashlib.sha256()
    have = part.stat().st_size if part.exists() else 0
    total: int | None = None
    attempt = 0
    while True:
        headers = {"Range": f"bytes={have}-"} if have else {}
        try:
            with httpx.stream("GET", url, headers=headers, timeout=options.timeout_s, follow_redirects=True) as resp:
                if resp.status_code == 416 and have:  # we already have everything
                    total = have
                    break
                if resp.status_code not in (200, 206):
                    raise DownloadError(f"{url} answered HTTP {resp.status_code}", fix="check the URL")
                if resp.status_code == 200 and have:  # server ignored Range: start over
                    have, digest = 0, hashlib.sha256()
                    part.unlink(missing_ok=True)
                length = resp.headers.get("content-length")
                total = have + int(length) if length is not None else None
                with open(part, "ab") as out:
                    for block in resp.iter_bytes(options.chunk_bytes):
                        if cancel is not None and cancel.is_set():
                            raise DownloadCancelled(f"download of {url} cancelled; {have} bytes kept in {part}",
                                                    fix="run the same download again to resume")
                        out.write(block)
                        digest.update(block)
                        have += len(block)
                        if progress:
                            progress(have, total)
                if total is not None and have < total:
                    raise httpx.RemoteProtocolError("connection closed before the end of the body")
                break
        except (httpx.TransportError, httpx.RemoteProtocolError) as exc:
            attempt += 1
            if attempt > options.retries:
                raise DownloadError(
                    f"download of {url} failed after {options.retries} retries ({exc}); {have} bytes kept in {part}",
                    fix="run the same command again to resume",
                ) from exc
            log.info("download interrupted at %d bytes (%s); resuming", have, exc)
            time.sleep(options.backoff_s * 2 ** (attempt - 1))
    if sha256 is not None and digest.hexdigest() != sha256:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"checksum mismatch: {url} has sha256 {digest.hexdigest()}, expected {sha256}; the download was deleted",
            fix="check the checksum, or the URL points to a different file",
        )
    os.replace(part, dest)
    from engine.models.registry import remember_sha256

    remember_sha256(dest, digest.hexdigest())  # so the registry need not hash the file again
    return dest


def text_progress(stream) -> ProgressCallback:  # pragma: no cover - cosmetic
    """A progress bar on a text stream (stderr)."""
    last = [0.0]

    def report(done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and (total is None or done < total):
            return
        last[0] = now
        if total:
            filled = int(30 * done / total)
            stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done / 1e6:7.1f}/{total / 1e6:.1f} MB")
        else:
            stream.write(f"\r{done / 1e6:7.1f} MB")
        stream.flush()

    return report
