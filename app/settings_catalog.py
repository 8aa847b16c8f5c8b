"""Settings → Models, the catalog: models to get, grouped by kind and judged for this machine (engine.models.advice),
each with Get (the licence first, then a download on a worker thread with progress and Cancel), and Use this model
once installed. The first-run wizard shows the same rows, only the recommendation.

Downloads run on Python threads and report through queued signals; nothing here blocks the UI thread. A
cancelled download keeps its partial file (engine.models.get), so Get again resumes it.
"""

from __future__ import annotations

import html
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.settings_audio import run_in_thread
from app.settings_form import help_label
from app.settings_models import PROGRESS_EVERY_S
from engine.errors import VenusError
from engine.models.advice import Advice, MachineFacts
from engine.models.catalog import Catalog, CatalogEntry

KINDS = (("llm", "Language models"), ("asr", "Speech recognition"), ("tts", "Voices"))  # projectors come with their LLM
FIT_MARKS = {"fits": "✔ fits", "tight": "⚠ tight", "too big": "✘ too big"}


@dataclass(frozen=True)
class CatalogAdvice:
    """The catalog judged for a machine (engine.models.advice), or the problem that kept it from being read."""

    catalog: Catalog | None
    machine: MachineFacts | None
    rows: tuple[Advice, ...]
    problem: str = ""

    def recommended(self, kind: str) -> Advice | None:
        """The row recommended for `kind` ("llm": the text model, not the camera's), or None."""
        return next((r for r in self.rows if r.recommended and r.entry.kind == kind and not r.entry.projector), None)


def read_advice(language: str = "en", machine: MachineFacts | None = None) -> CatalogAdvice:
    """Load the catalog in use and judge it for `machine` (default: this one); slow (probes the GPU), so call it
    on a worker thread."""
    from engine.models.advice import advise
    from engine.models.catalog import load_catalog

    try:
        catalog = load_catalog()
        machine = machine or MachineFacts.this()
        return CatalogAdvice(catalog, machine, tuple(advise(catalog, machine, language=language)))
    except (VenusError, OSError, ValueError) as exc:
        return CatalogAdvice(None, machine, (), f"The model catalog could not be read: {exc}")


def describe_advice(row: Advice) -> str:
    """One line about a catalog model: size, licence, fit with its reason, speed."""
    e = row.entry
    size = f"{e.size_bytes / 1e9:.1f} GB" if e.size_bytes >= 1e9 else f"{e.size_bytes / 1e6:.0f} MB"
    parts = [size + ("" if e.exact else " (about)"), e.license.spdx + (f" ({e.license.note})" if e.license.note else ""),
             f"{FIT_MARKS[row.fit.value]}: {row.reason}"]
    if row.speed_text():
        parts.append(row.speed_text())
    if e.projector:
        parts.append("with its image projector")
    return " · ".join(parts)


def one_line(problem: BaseException | str) -> str:
    """An error as one line (the message and its fix)."""
    return " ".join(str(problem).split())


class ModelGetter(QObject):
    """Gets catalog models on worker threads (a multimodal model with its projector), then measures their speed.

    `progress(id, done, total)` and `finished(id, outcome, text)` arrive on the UI thread; outcome is
    "installed", "cancelled" (the partial download is kept: getting it again resumes) or "failed".
    """

    progress = Signal(str, int, int)  # (model id, bytes so far, bytes in all)
    finished = Signal(str, str, str)  # (model id, outcome, what to tell the user)

    def __init__(self, parent: QObject | None = None, measure_speed: bool = True) -> None:
        super().__init__(parent)
        self.measure_speed = measure_speed
        self._cancels: dict[str, threading.Event] = {}

    def busy(self, model_id: str) -> bool:
        """True while `model_id` is being fetched."""
        return model_id in self._cancels

    def start(self, catalog: Catalog, model_id: str) -> threading.Thread:
        """Fetch, check, register and (when `measure_speed`) probe `model_id` on a worker thread."""
        cancel = self._cancels[model_id] = threading.Event()
        measure = self.measure_speed

        def run() -> None:
            from engine.models.download import DownloadCancelled
            from engine.models.get import entries_to_get, get_model
            from engine.models.probe import run_probe

            try:
                entries = entries_to_get(catalog, model_id)
                sizes = {f.name: f.size_bytes for e in entries for f in e.files}
                done: dict[str, int] = {}
                last = [0.0]

                def report(f, have: int, total: int | None) -> None:
                    done[f.name] = have
                    if total:
                        sizes[f.name] = total
                    now = time.monotonic()
                    if now - last[0] >= PROGRESS_EVERY_S:
                        last[0] = now
                        self._emit(self.progress, model_id, sum(done.values()), sum(sizes.values()))

                installed = [get_model(e, progress=report, cancel=cancel) for e in entries]
                self._emit(self.progress, model_id, sum(sizes.values()), sum(sizes.values()))
                text = "Installed."
                if measure and installed:
                    try:
                        text = f"Installed; on this machine: {run_probe(installed[0]).describe()}."
                    except Exception as exc:  # the model is installed either way; the probe only measures it
                        text = f"Installed; its speed could not be measured ({one_line(exc)})."
                self._finish(model_id, "installed", text)
            except DownloadCancelled:
                self._finish(model_id, "cancelled", "Cancelled; the partial download is kept, and Get resumes it.")
            except (VenusError, OSError, ValueError) as exc:
                self._finish(model_id, "failed", one_line(exc))

        thread = threading.Thread(target=run, name=f"venus-get-{model_id}", daemon=True)
        thread.start()
        return thread

    def cancel(self, model_id: str) -> None:
        """Stop fetching `model_id` after the current block; the partial file stays to resume."""
        if model_id in self._cancels:
            self._cancels[model_id].set()

    def cancel_all(self) -> None:
        """Stop every download (the window showing them closes); each keeps its partial file."""
        for cancel in list(self._cancels.values()):
            cancel.set()

    def _finish(self, model_id: str, outcome: str, text: str) -> None:
        self._cancels.pop(model_id, None)
        self._emit(self.finished, model_id, outcome, text)

    @staticmethod
    def _emit(signal: Any, *args: Any) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:  # the window was closed while the download ran: nobody is listening
            pass


def licence_question(parent: QWidget, entry: CatalogEntry, size_bytes: int) -> QMessageBox:
    """The licence, shown before anything is downloaded: its name, its terms in a line and where to read it."""
    e = entry
    size = f"{size_bytes / 1e6:,.0f} MB"
    note = f" ({e.license.note})" if e.license.note else ""
    box = QMessageBox(QMessageBox.Icon.Question, "Licence", "", QMessageBox.StandardButton.Yes
                      | QMessageBox.StandardButton.Cancel, parent)
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(f"<b>{html.escape(e.title)}</b> by {html.escape(e.publisher)} is licensed under "
                f"<b>{html.escape(e.license.spdx)}</b>{html.escape(note)}.<br>Read it at "
                f"<a href=\"{html.escape(e.license.url)}\">{html.escape(e.license.url)}</a>.<br><br>"
                f"Accept the licence and download {size}?")
    box.setAccessibleName(f"Licence of {e.title}")
    box.button(QMessageBox.StandardButton.Yes).setText("Accept and get")
    box.setWindowModality(Qt.WindowModality.WindowModal)
    return box


class CatalogRow(QFrame):
    """One catalog model: what it is, its fit and speed here, and Get / Cancel / Use this model."""

    def __init__(self, advice: Advice, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.advice = advice
        e = advice.entry
        self.title = QLabel()
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.good_at = help_label(f"Good at: {e.good_at}" + (f" · {', '.join(e.languages)}" if e.languages else ""))
        self.get_button = QPushButton("Get")
        self.get_button.setAccessibleName(f"Get {e.title}")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName(f"Cancel getting {e.title}")
        self.use_button = QPushButton("Use this model")
        self.use_button.setAccessibleName(f"Use {e.title}")
        self.progress = QProgressBar()
        self.progress.setAccessibleName(f"Progress getting {e.title}")
        self.progress.setRange(0, 100)
        self.status = QLabel()
        self.status.setAccessibleName(f"Status of {e.title}")
        self.status.setWordWrap(True)
        self.in_use = False
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        for button in (self.get_button, self.cancel_button, self.use_button):
            top.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.details)
        layout.addWidget(self.good_at)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        self.show_advice(advice)
        self.set_busy(False)

    def show_advice(self, advice: Advice) -> None:
        """Show a fresh judgement (after an install: installed, its measured speed)."""
        self.advice = advice
        marks = (" · ★ recommended for this machine" if advice.recommended else "") + \
                (" · in use" if self.in_use else " · installed" if advice.installed else "")
        self.title.setText(f"<b>{html.escape(advice.entry.title)}</b>{marks}")
        self.details.setText(describe_advice(advice))
        self.set_busy(False)

    def set_in_use(self, in_use: bool) -> None:
        """Mark the model the settings name now."""
        self.in_use = in_use
        self.show_advice(self.advice)

    def set_busy(self, busy: bool) -> None:
        """Downloading: the progress bar and Cancel; otherwise Get (not installed) or Use this model (installed)."""
        installed = self.advice.installed
        self.get_button.setVisible(not busy and not installed)
        self.get_button.setEnabled(self.advice.fit.value != "too big")
        self.get_button.setToolTip("" if self.get_button.isEnabled() else f"Too big for this machine: {self.advice.reason}")
        self.cancel_button.setVisible(busy)
        self.use_button.setVisible(not busy and installed)
        self.use_button.setEnabled(not self.in_use)
        self.progress.setVisible(busy)
        self.status.setVisible(bool(self.status.text()) or busy)

    def show_progress(self, done: int, total: int) -> None:
        """Bytes so far of all the model's files."""
        self.progress.setValue(min(100, done * 100 // total) if total else 0)
        self.status.setText(f"Getting… {done / 1e6:.1f} of {total / 1e6:.1f} MB")

    def show_status(self, text: str) -> None:
        """One line under the row: the outcome, or an error with its fix."""
        self.status.setText(text)
        self.status.setVisible(bool(text))


class CatalogPanel(QWidget):
    """The catalog grouped by kind, judged for this machine; Get shows the licence first, then downloads on a
    worker thread with progress and Cancel; `use_requested(advice)` asks the owner to switch to an installed one.
    `machine` (MachineFacts) stands for this computer when set (tests, "what if"); `only_recommended` shows just
    the recommendation of each kind (the first-run wizard)."""

    use_requested = Signal(object)  # Advice of an installed model
    installed = Signal(str)  # a model id, once got
    loaded = Signal()  # the catalog was read (again) and judged: `advice` is up to date
    _read = Signal(int, object)  # (generation, CatalogAdvice) from the worker thread

    def __init__(self, parent: QWidget | None = None, kinds: tuple[tuple[str, str], ...] = KINDS,
                 only_recommended: bool = False) -> None:
        super().__init__(parent)
        self.kinds = kinds
        self.only_recommended = only_recommended
        self.machine: MachineFacts | None = None
        self.language = "en"
        self.in_use: set[str] = set()
        self.advice: CatalogAdvice | None = None
        self.rows: dict[str, CatalogRow] = {}
        self.licence_box: QMessageBox | None = None
        self.getter = ModelGetter(self)
        self.getter.progress.connect(self._on_progress)
        self.getter.finished.connect(self._on_finished)
        self._generation = 0
        self._read.connect(self._show)
        self.summary = QLabel("Reading the model catalog…")
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("This machine and the catalog")
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Models by kind")
        self.lists: dict[str, QVBoxLayout] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        for kind, title in kinds:
            content = QWidget()
            column = QVBoxLayout(content)
            column.setContentsMargins(0, 0, 0, 0)
            column.addStretch(1)
            self.lists[kind] = column
            if len(kinds) == 1:  # one short list (the wizard's recommendation): no tabs, no scrolling
                layout.addWidget(content)
                continue
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setWidget(content)
            self.tabs.addTab(scroll, title)
        self.tabs.setMinimumHeight(320)
        if len(kinds) > 1:
            layout.addWidget(self.tabs, 1)

    def load(self, language: str | None = None) -> threading.Thread:
        """Read the catalog and judge it for this machine (or `machine`) on a worker thread."""
        self.language = language or self.language
        self._generation += 1
        generation, language, machine = self._generation, self.language, self.machine
        return run_in_thread("venus-catalog", lambda: read_advice(language, machine),
                             lambda found: self._read.emit(generation, found))

    def _show(self, generation: int, found: CatalogAdvice) -> None:
        if generation != self._generation:  # an older reading (another machine, before an install)
            return
        self.advice = found
        if found.problem:
            self.summary.setText(found.problem)
            self.loaded.emit()
            return
        self.summary.setText(f"This machine: {found.machine.describe()}. ★ marks the model recommended for it; "
                             "the licence is shown before anything is downloaded.")
        order = {r.entry.id: i for i, r in enumerate(found.rows)}
        rows = sorted(found.rows, key=lambda r: (not r.recommended, not r.installed, order[r.entry.id]))
        for row in rows:
            shown = self.rows.get(row.entry.id)
            if shown is not None:
                shown.show_advice(row)
                if self.getter.busy(row.entry.id):
                    shown.set_busy(True)
                continue
            if row.entry.kind not in self.lists or (self.only_recommended and not row.recommended) or \
                    (row.entry.kind == "llm" and row.entry.projector and self.only_recommended):
                continue
            shown = self.rows[row.entry.id] = CatalogRow(row)
            shown.in_use = row.entry.id in self.in_use
            shown.show_advice(row)
            shown.get_button.clicked.connect(lambda _=False, i=row.entry.id: self.get(i))
            shown.cancel_button.clicked.connect(lambda _=False, i=row.entry.id: self.cancel(i))
            shown.use_button.clicked.connect(lambda _=False, i=row.entry.id: self.use(i))
            column = self.lists[row.entry.kind]
            column.insertWidget(column.count() - 1, shown)
        self.loaded.emit()

    def set_in_use(self, ids: set[str]) -> None:
        """The ids the settings name now (marked "in use"; their Use button is off)."""
        self.in_use = set(ids)
        for model_id, row in self.rows.items():
            row.set_in_use(model_id in self.in_use)

    def get(self, model_id: str) -> QMessageBox:
        """Ask about the licence (Accept starts the download); returns the question, shown window-modal."""
        entry = self.rows[model_id].advice.entry
        projector = self.advice.catalog.get(entry.projector).size_bytes if entry.projector else 0
        self.licence_box = licence_question(self, entry, entry.size_bytes + projector)
        self.licence_box.accepted.connect(lambda: self.start_get(model_id))
        self.licence_box.open()
        return self.licence_box

    def start_get(self, model_id: str) -> threading.Thread:
        """Download without asking (the licence was accepted)."""
        row = self.rows[model_id]
        row.show_status("Starting…")
        row.set_busy(True)
        return self.getter.start(self.advice.catalog, model_id)

    def cancel(self, model_id: str) -> None:
        """Stop the download; the partial file stays, and Get resumes it."""
        self.rows[model_id].show_status("Cancelling…")
        self.getter.cancel(model_id)

    def use(self, model_id: str) -> None:
        """Ask the owner to switch to the installed model."""
        self.use_requested.emit(self.rows[model_id].advice)

    def _on_progress(self, model_id: str, done: int, total: int) -> None:
        if model_id in self.rows:
            self.rows[model_id].show_progress(done, total)

    def _on_finished(self, model_id: str, outcome: str, text: str) -> None:
        row = self.rows.get(model_id)
        if row is None:
            return
        if outcome == "installed":
            row.show_advice(replace(row.advice, installed=True))
            self.installed.emit(model_id)
            self.load()  # the measured speed, and the fit of an installed model (no more disk needed)
        else:
            row.set_busy(False)
        row.show_status(text)
