"""The model part of Settings: the installed models as choices (size, fits in memory), GGUF import and download.
The catalog of models to get is app/settings_catalog.py.

Importing hashes the file and downloading streams it, so both run on worker threads; results come back as
signals. The registry (engine.models) does the real work and names the file in every error.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.errors import VenusError

PROGRESS_EVERY_S = 0.1  # at most ten progress updates a second reach the UI
MEMORY_HEADROOM = 1.3  # a GGUF needs about its file size plus a third for the context and the runtime


def available_memory() -> int | None:
    """Bytes of memory free for a new model now, or None when the system does not say."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:
        return None


def model_choices(kind: str, memory: int | None = None) -> tuple[list[tuple[str, str]], str]:
    """The registry's models of `kind` as dropdown items ("title · 98 MB · installed"), and a problem if any.

    A model whose files are missing says "not installed"; an LLM larger than the free memory says so too.
    """
    from engine.models import all_entries, verify

    try:
        entries = [e for e in all_entries() if e.kind == kind]
    except VenusError as exc:
        return [], str(exc)
    memory = available_memory() if memory is None else memory
    items = []
    for entry in entries:
        size = sum(f.size or 0 for f in entry.files) or sum(p.stat().st_size for p in entry.paths() if p.exists())
        notes = [f"{size / 1e6:,.0f} MB" if size else "", "installed" if not verify(entry, full=False) else "not installed"]
        if kind == "llm" and memory and size * MEMORY_HEADROOM > memory:
            notes.append(f"too big for the {memory / 1e9:.1f} GB free")
        items.append((" · ".join([entry.title, *filter(None, notes)]), entry.id))
    return items, ""


class ModelsPanel(QWidget):
    """Import or download a language model; `model_chosen(id)` selects it in the Model dropdown."""

    model_chosen = Signal(str)  # a registry id
    _imported = Signal(str, str)  # (model id, problem)
    _progress = Signal(int, int)  # (bytes so far, total or -1)
    _downloaded = Signal(str, str)  # (model id, problem)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.import_button = QPushButton("Import GGUF…")
        self.import_button.setAccessibleName("Import a GGUF model file")
        self.import_button.clicked.connect(self._choose_file)
        self.url, self.sha256 = QLineEdit(), QLineEdit()
        self.url.setAccessibleName("Download URL of a GGUF model")
        self.url.setPlaceholderText("https://…/model.gguf")
        self.sha256.setAccessibleName("Expected sha256 of the download")
        self.sha256.setPlaceholderText("64 hex digits")
        self.download_button = QPushButton("Download")
        self.download_button.setAccessibleName("Download the model")
        self.download_button.clicked.connect(lambda: self.start_download(self.url.text().strip(), self.sha256.text().strip()))
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Download progress")
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Model status")
        self._imported.connect(self._on_imported)
        self._progress.connect(self._on_progress)
        self._downloaded.connect(self._on_downloaded)
        self.busy = False

        form = QFormLayout()
        form.addRow("A GGUF on this computer", self.import_button)
        form.addRow("Download URL", self.url)
        form.addRow("sha256", self.sha256)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        row = QHBoxLayout()
        row.addWidget(self.download_button)
        row.addWidget(self.progress, 1)
        layout.addLayout(row)
        layout.addWidget(self.status)

    def _set_busy(self, busy: bool, text: str = "") -> None:
        self.busy = busy
        for button in (self.import_button, self.download_button):
            button.setEnabled(not busy)
        if text:
            self.status.setText(text)

    # ---- import -----------------------------------------------------------------------------------------------

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import a GGUF model", "", "GGUF models (*.gguf)")
        if path:
            self.start_import(Path(path))

    def start_import(self, path: Path) -> threading.Thread:
        """Check and register a GGUF in place (on a worker thread: it is hashed)."""
        self._set_busy(True, f"Checking {path}…")

        def run() -> None:
            from engine.models.manage import import_model

            try:
                self._imported.emit(import_model(path).id, "")
            except (VenusError, OSError) as exc:
                self._imported.emit("", str(exc))

        thread = threading.Thread(target=run, name="venus-model-import", daemon=True)
        thread.start()
        return thread

    def _on_imported(self, model_id: str, problem: str) -> None:
        self._set_busy(False, problem or f"Imported as {model_id!r} and chosen as the model.")
        if model_id:
            self.model_chosen.emit(model_id)

    # ---- download -----------------------------------------------------------------------------------------------

    def start_download(self, url: str, sha256: str) -> threading.Thread | None:
        """Download, verify and register a GGUF on a worker thread, with progress on the bar."""
        if not url.startswith(("http://", "https://")):
            self.status.setText("Enter an http(s) URL of a .gguf file to download.")
            return None
        self._set_busy(True, f"Downloading {url}…")
        self.progress.setValue(0)
        last = [0.0]

        def report(done: int, total: int | None) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY_S or (total is not None and done >= total):
                last[0] = now
                self._progress.emit(done, -1 if total is None else total)

        def run() -> None:
            from engine.models.manage import download_model

            try:
                self._downloaded.emit(download_model(url, sha256, progress=report).id, "")
            except (VenusError, ValueError, OSError) as exc:
                self._downloaded.emit("", str(exc))

        thread = threading.Thread(target=run, name="venus-model-download", daemon=True)
        thread.start()
        return thread

    def _on_progress(self, done: int, total: int) -> None:
        if total > 0:
            self.progress.setRange(0, 100)
            self.progress.setValue(min(100, done * 100 // total))
            self.status.setText(f"Downloading… {done / 1e6:.1f} of {total / 1e6:.1f} MB")
        else:
            self.progress.setRange(0, 0)  # unknown size: a busy bar
            self.status.setText(f"Downloading… {done / 1e6:.1f} MB")

    def _on_downloaded(self, model_id: str, problem: str) -> None:
        self.progress.setRange(0, 100)
        if model_id:
            self.progress.setValue(100)
        self._on_imported(model_id, problem)
        if model_id:
            self.status.setText(f"Downloaded and verified as {model_id!r}, and chosen as the model.")
