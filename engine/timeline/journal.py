"""Journals of events the database refused: JSON-lines files that wait outside it until it takes them again.

The writer thread moves its oldest unwritten events into a journal when too many pile up in memory, and saves
the rest there at close. A journal goes beside the database or, when that disk refuses it too, into the next
folder (by default the temp folder). The writer reads journals back, and deletes them, once the database
accepts writes again; the next Venus to open the same database does the same with any that were left.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from engine.timeline.db import dumps_payload

log = logging.getLogger(__name__)

Row = dict[str, Any]  # conversation_id, seq, t_ms, kind, and payload as JSON text: one events row
_KEYS = ("conversation_id", "seq", "t_ms", "kind")

_open_journals: set[Path] = set()  # journals a writer in this process is still using
_open_lock = threading.Lock()


def default_folders(db_path: Path) -> tuple[Path, ...]:
    """Where journals go: beside the database, else in the temp folder (often another disk)."""
    return (db_path.parent, Path(tempfile.gettempdir()) / "venus-unsaved")


def _line(row: Row) -> bytes:
    head = json.dumps({key: row[key] for key in _KEYS}, ensure_ascii=False)
    return f'{head[:-1]}, "payload": {row["payload"]}}}\n'.encode()


def _parse(line: bytes) -> Row:
    data = json.loads(line)
    return {**{key: data[key] for key in _KEYS}, "payload": dumps_payload(data["payload"])}


def _owner_alive(path: Path) -> bool:
    """Whether the process that named the journal (…-<pid>.jsonl) still runs, so it may still be writing it."""
    with _open_lock:
        if path in _open_journals:
            return True
    pid = path.stem.rsplit("-", 1)[-1]
    return pid.isdigit() and int(pid) != os.getpid() and psutil.pid_exists(int(pid))


@dataclass
class _File:
    path: Path
    rows: int  # lines not yet read back (a damaged line counts until it is skipped)
    offset: int = 0  # bytes already read back


class Journal:
    """Rows waiting outside the database in one or more journal files, read back oldest file first.

    Used only by the writer thread.
    """

    def __init__(self, db_path: Path, folders: Sequence[Path]) -> None:
        self._db = db_path
        self._folders = tuple(folders)
        self._key = hashlib.sha1(str(db_path.resolve()).encode()).hexdigest()[:8]
        self._files: list[_File] = []
        self._writing: _File | None = None  # the file append() added to last
        self._reading: tuple[_File, int, int, int] | None = None  # the last read(): file, offset, lines, damaged
        self.lost = 0  # rows that were in a journal but could not be read back

    @property
    def waiting(self) -> int:
        """Rows in journals, not yet read back into the database."""
        return sum(f.rows for f in self._files)

    @property
    def files(self) -> tuple[Path, ...]:
        """The journal files holding waiting rows."""
        return tuple(f.path for f in self._files)

    def adopt_leftovers(self) -> int:
        """Queue for reading back the journals an earlier Venus left for this database; returns their rows.

        Journals of a Venus still running (on the same database) are left to it.
        """
        found: set[Path] = set(self._db.parent.glob(f"{self._db.name}.unsaved-*.jsonl"))
        for folder in self._folders[1:]:
            found.update(folder.glob(f"{self._db.name}.unsaved-{self._key}-*.jsonl"))
        adopted = 0
        for path in sorted(found, key=_mtime):
            if _owner_alive(path) or path in self.files:
                continue
            try:
                with path.open("rb") as fh:
                    rows = sum(1 for line in fh if line.strip())
            except OSError as exc:
                log.error("cannot read the unsaved events in %s: %s", path, exc)
                continue
            self._files.append(_File(path, rows))
            self._own(path)
            adopted += rows
        if adopted:
            log.warning("%d events an earlier run could not save are waiting in %s", adopted, self.files)
        return adopted

    def append(self, rows: list[Row]) -> Path:
        """Add rows to the journal, trying each folder in turn; raises OSError when none takes them."""
        data = b"".join(_line(row) for row in rows)
        problems = []
        for folder in self._folders:
            target = self._writing if self._writing and self._writing.path.parent == folder else None
            path = target.path if target else folder / self._new_name(folder)
            try:
                _append_bytes(path, data)
            except OSError as exc:
                problems.append(f"{folder}: {exc.strerror or exc}")
                continue
            if target is None:
                target = _File(path, 0)
                self._files.append(target)
                self._own(path)
            target.rows += len(rows)
            self._writing = target
            return path
        raise OSError("; ".join(problems))

    def read(self, limit: int) -> list[Row]:
        """Up to `limit` waiting rows, oldest file first; `commit()` once they are in the database."""
        while self._files:
            file = self._files[0]
            try:
                rows, offset, lines, damaged = _read_rows(file.path, file.offset, limit)
            except OSError as exc:  # deleted or unreadable meanwhile: what it held cannot be saved
                log.error("%d unsaved events in %s cannot be read back: %s", file.rows, file.path, exc)
                self.lost += file.rows
                self._forget(file)
                continue
            self._reading = (file, offset, lines, damaged)
            if rows:
                return rows
            if lines:  # only damaged lines: move past them
                self.commit()
                continue
            self.lost += file.rows  # the end of the file before its count: a line was cut off
            self._reading = None
            self._finish(file)
        return []

    def commit(self) -> None:
        """The rows of the last `read()` are in the database: move past them, deleting a finished file."""
        if self._reading is None:
            return
        file, offset, lines, damaged = self._reading
        self._reading = None
        file.offset = offset
        file.rows = max(0, file.rows - lines)
        self.lost += damaged
        if file.rows == 0 and file.offset >= _size(file.path):
            self._finish(file)

    def close(self) -> None:
        """Stop using the journal files; the rows still in them wait for the next Venus."""
        for file in self._files:
            self._disown(file.path)

    # ---- files ------------------------------------------------------------------------------------------------

    def _new_name(self, folder: Path) -> str:
        key = "" if folder == self._db.parent else f"{self._key}-"
        return f"{self._db.name}.unsaved-{key}{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.jsonl"

    def _finish(self, file: _File) -> None:
        try:
            file.path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not delete the written journal %s: %s", file.path, exc)
        self._forget(file)

    def _forget(self, file: _File) -> None:
        self._files.remove(file)
        self._disown(file.path)
        if self._writing is file:
            self._writing = None

    @staticmethod
    def _own(path: Path) -> None:
        with _open_lock:
            _open_journals.add(path)

    @staticmethod
    def _disown(path: Path) -> None:
        with _open_lock:
            _open_journals.discard(path)


def _append_bytes(path: Path, data: bytes) -> None:
    """Append `data` whole or not at all: a failed write is cut off again, a new file removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    with path.open("ab") as fh:
        start = fh.tell()
        try:
            fh.write(data)
            fh.flush()
        except OSError:
            try:
                fh.truncate(start)
                if not existed:
                    path.unlink()
            except OSError:
                pass
            raise


def _read_rows(path: Path, offset: int, limit: int) -> tuple[list[Row], int, int, int]:
    """Rows from byte `offset` on: (rows, the offset after them, lines consumed, damaged lines skipped)."""
    rows: list[Row] = []
    lines = damaged = 0
    with path.open("rb") as fh:
        fh.seek(offset)
        while len(rows) < limit:
            line = fh.readline()
            if not line.endswith(b"\n"):
                break  # the end, or a line half-written by a process that stopped mid-line
            offset += len(line)
            if not line.strip():
                continue
            lines += 1
            try:
                rows.append(_parse(line))
            except (ValueError, KeyError, TypeError) as exc:
                log.error("skipped a damaged line in %s: %s", path, exc)
                damaged += 1
    return rows, offset, lines, damaged


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
