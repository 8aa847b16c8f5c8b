"""Settings → Models and the first-run wizard's model step on real widgets: the catalog judged for a given machine,
Get against a real HTTP server on 127.0.0.1 serving the real SmolLM2 GGUF (licence first, progress, Cancel keeps
the partial file, Get again resumes), a wrong hash in one line, and Use this model reloading a running session on
the same conversation."""

import http.server
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox, QWizard  # noqa: E402

from app.settings_catalog import CatalogPanel  # noqa: E402
from app.settings_dialog import SettingsDialog  # noqa: E402
from app.wizard import FirstRunWizard  # noqa: E402
from engine import paths  # noqa: E402
from engine.errors import ModelNotFound  # noqa: E402
from engine.models.advice import MachineFacts  # noqa: E402
from engine.models.catalog import CATALOG_ENV  # noqa: E402
from engine.models.get import is_installed, staging_dir  # noqa: E402
from engine.models.registry import resolve  # noqa: E402
from engine.settings import Settings, load_settings  # noqa: E402

GB = 1_000_000_000
ROOT = Path(__file__).resolve().parents[1]
SMALL = MachineFacts(ram_total_bytes=4 * GB, ram_available_bytes=3 * GB, physical_cores=2, disk_free_bytes=100 * GB)
ROOMY = MachineFacts(16 * GB, 12 * GB, 4, 500 * GB)


@pytest.fixture(scope="module")
def smol_gguf() -> bytes:
    """The default LLM's GGUF (SmolLM2 135M, 98 MB): a real model file to serve."""
    try:
        return resolve("smollm2-135m-instruct-q4_1", "llm").read_bytes()
    except ModelNotFound as exc:
        pytest.skip(f"the default LLM is not installed ({exc}); run `venus models install`")


@dataclass
class Served:
    """What the local server serves, how fast, and the requests it got (path, Range header)."""

    files: dict[str, bytes]
    slow: bool = False  # 256 KiB every 20 ms, so a test can cancel mid-download
    requests: list[tuple[str, str]] = field(default_factory=list)


def _handler(served: Served):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            served.requests.append((self.path, self.headers.get("Range", "")))
            payload = served.files.get(self.path)
            if payload is None:
                self.send_error(404)
                return
            start = int(self.headers["Range"].split("=")[1].split("-")[0]) if self.headers.get("Range") else 0
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(payload) - 1}/{len(payload)}")
            body = memoryview(payload)[start:]
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                at, step = 0, 1 << 18
                while at < len(body):
                    self.wfile.write(body[at:at + step] if served.slow else body[at:])
                    at = at + step if served.slow else len(body)
                    if served.slow:
                        time.sleep(0.02)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client cancelled

    return Handler


def _llm(model_id: str, url: str, size: int, sha256: str | None = None) -> dict:
    return {
        "id": model_id, "kind": "llm", "title": f"Test {model_id}", "publisher": "HuggingFaceTB", "parameters": "135M",
        "files": [{"name": f"{model_id}.gguf", "url": url, "sha256": sha256, "size_bytes": size, "format": "gguf"}],
        "license": {"spdx": "Apache-2.0", "url": "https://www.apache.org/licenses/LICENSE-2.0", "note": "test terms"},
        "ram_bytes": 300_000_000, "vram_bytes": 0, "languages": ["en"], "good_at": "tests", "tool_calls": False,
    }


@pytest.fixture
def local_catalog(smol_gguf, tmp_path, monkeypatch):
    """A catalog served by a real HTTP server on 127.0.0.1, and a models folder holding the installed defaults
    (linked) and nothing else, so a session can open and the test's models install beside them."""
    served = Served({"/smol.gguf": smol_gguf})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    size = len(smol_gguf)
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"schema": 1, "models": [
        _llm("smol", f"{base}/smol.gguf", size),  # no publisher hash: size and format, hash recorded
        _llm("smol-wrong-hash", f"{base}/smol.gguf", size, "0" * 64),
    ]}))
    models = tmp_path / "models"
    models.mkdir()
    for item in paths.models_dir().iterdir():
        if item.name not in ("user-models.json", ".staging"):
            (models / item.name).symlink_to(item)
    monkeypatch.setenv("VENUS_MODELS_DIR", str(models))
    monkeypatch.setenv(CATALOG_ENV, str(catalog))
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("VENUS_DATA_DIR", str(tmp_path / "data"))
    yield served
    httpd.shutdown()


def _dialog(qtbot, tmp_path, settings: Settings | None = None, machine: MachineFacts = ROOMY) -> SettingsDialog:
    dialog = SettingsDialog(settings or Settings(), settings_path=tmp_path / "settings.json", restart=lambda: None)
    qtbot.addWidget(dialog)
    dialog.catalog.machine = machine
    dialog.catalog.getter.measure_speed = False
    dialog.catalog.load()
    qtbot.waitUntil(lambda: dialog.catalog.advice is not None and dialog.catalog.advice.machine == machine, timeout=30000)
    return dialog


def _accept_licence(qtbot, panel: CatalogPanel, model_id: str) -> str:
    """Press Get, read the licence question, accept it; returns the question's text."""
    qtbot.mouseClick(panel.rows[model_id].get_button, Qt.MouseButton.LeftButton)
    box = panel.licence_box
    assert box is not None and box.isVisible()
    text = box.text()
    qtbot.mouseClick(box.button(QMessageBox.StandardButton.Yes), Qt.MouseButton.LeftButton)
    return text


def test_the_models_page_lists_the_catalog_by_kind_with_its_fit_for_this_machine(qtbot, tmp_path, monkeypatch):
    monkeypatch.delenv(CATALOG_ENV, raising=False)
    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "models"))
    dialog = _dialog(qtbot, tmp_path, machine=SMALL)
    panel = dialog.catalog
    assert [panel.tabs.tabText(i) for i in range(panel.tabs.count())] == [
        "Language models", "Speech recognition", "Voices"]
    assert "2 cores, 4.0 GB memory" in panel.summary.text()
    seven_b = panel.rows["qwen2.5-7b-instruct-q4_k_m"]
    assert "✘ too big: needs" in seven_b.details.text() and "of 4.0 GB memory" in seven_b.details.text()
    assert "Apache-2.0" in seven_b.details.text() and "GB" in seven_b.details.text()
    assert not seven_b.get_button.isEnabled() and "Too big" in seven_b.get_button.toolTip()
    recommended = [i for i, r in panel.rows.items() if "★ recommended" in r.title.text()]
    kinds = sorted(panel.rows[i].advice.entry.kind for i in recommended)
    assert kinds == ["asr", "llm", "tts"], recommended
    llm = next(panel.rows[i] for i in recommended if panel.rows[i].advice.entry.kind == "llm")
    assert "✔ fits" in llm.details.text() and "tokens/s" in llm.details.text() and llm.get_button.isEnabled()
    assert panel.lists["llm"].itemAt(0).widget() is llm, "the recommended model comes first"
    assert "good at" in llm.good_at.text().lower()
    assert "qwen2.5-vl-3b-instruct-mmproj-q8_0" not in panel.rows, "a projector comes with its model"
    vision = panel.rows["qwen2.5-vl-3b-instruct-q4_k_m"]
    assert "with its image projector" in vision.details.text()
    assert all(r.advice.entry.kind == "asr" for r in (panel.rows["whisper-base"], panel.rows["whisper-small-en"]))
    assert "★" in panel.rows["piper-en-us-libritts-r-medium"].title.text()
    language = dialog.forms["conversation"].editors["language"]
    language.setCurrentIndex(language.findData("de"))  # answers in German: a German voice, a multilingual whisper
    qtbot.waitUntil(lambda: "★" in panel.rows["piper-de-de-thorsten-medium"].title.text(), timeout=30000)
    assert "★" not in panel.rows["piper-en-us-libritts-r-medium"].title.text()
    assert "★" in panel.rows["whisper-base"].title.text() or "★" in panel.rows["whisper-small"].title.text()


def test_get_shows_the_licence_then_progress_cancel_keeps_the_part_and_get_again_resumes(qtbot, tmp_path,
                                                                                            local_catalog):
    served = local_catalog
    served.slow = True
    dialog = _dialog(qtbot, tmp_path)
    dialog.show()
    dialog.show_page("Models")
    panel, row = dialog.catalog, dialog.catalog.rows["smol"]
    assert row.get_button.isVisible() and not row.use_button.isVisible() and "installed" not in row.title.text()
    question = _accept_licence(qtbot, panel, "smol")
    assert "Apache-2.0" in question and "https://www.apache.org/licenses/LICENSE-2.0" in question
    assert "download 98 MB?" in question and "test terms" in question and "Accept" in panel.licence_box.button(QMessageBox.StandardButton.Yes).text()
    qtbot.waitUntil(lambda: row.progress.value() >= 3, timeout=30000)
    assert row.progress.isVisible() and row.cancel_button.isVisible() and not row.get_button.isVisible()
    assert re.search(r"Getting… [\d.]+ of 98\.\d MB", row.status.text()), row.status.text()
    first = row.progress.value()
    qtbot.waitUntil(lambda: row.progress.value() > first, timeout=30000)  # it moves
    with qtbot.waitSignal(panel.getter.finished, timeout=30000) as ended:
        qtbot.mouseClick(row.cancel_button, Qt.MouseButton.LeftButton)
    assert ended.args[:2] == ["smol", "cancelled"]
    assert "partial download is kept" in row.status.text() and row.get_button.isVisible()
    part = staging_dir("smol") / "smol.gguf.part"
    kept = part.stat().st_size
    assert kept > 0 and not is_installed("smol")

    served.slow = False
    with qtbot.waitSignal(panel.installed, timeout=60000):
        _accept_licence(qtbot, panel, "smol")
    assert served.requests[-1] == ("/smol.gguf", f"bytes={kept}-"), "resumed where Cancel left it"
    assert is_installed("smol") and resolve("smol").stat().st_size == len(served.files["/smol.gguf"])
    assert row.status.text() == "Installed." and row.use_button.isVisible() and not row.get_button.isVisible()
    qtbot.waitUntil(lambda: "· installed" in row.title.text(), timeout=30000)


def test_a_wrong_hash_is_one_line_with_the_fix(qtbot, tmp_path, local_catalog):
    dialog = _dialog(qtbot, tmp_path)
    panel, row = dialog.catalog, dialog.catalog.rows["smol-wrong-hash"]
    with qtbot.waitSignal(panel.getter.finished, timeout=60000) as ended:
        _accept_licence(qtbot, panel, "smol-wrong-hash")
    assert ended.args[1] == "failed"
    line = row.status.text()
    assert "checksum mismatch" in line and "expected " + "0" * 64 in line and "\n" not in line
    assert line.endswith("check the checksum, or the URL points to a different file")
    assert not row.get_button.isHidden() and row.progress.isHidden() and not is_installed("smol-wrong-hash")


def test_use_this_model_switches_the_running_session_in_place(qtbot, tmp_path, local_catalog):
    """Get, then Use this model: llm.model is saved through the dialog's save, and a running session reloads it on
    the same conversation, which goes on."""
    from app.session_controller import SessionController
    from engine.timeline import Timeline
    from engine.timeline.events import Kind

    settings = Settings()
    settings.llm.n_threads = 1
    controller = SessionController(Timeline(), settings, persist=False, harness=False)
    try:
        timeline = controller.timeline
        controller.send_text("What time is it?")
        qtbot.waitUntil(lambda: bool(timeline.events(kinds=[Kind.ASSISTANT_TURN_END])), timeout=30000)
        dialog = _dialog(qtbot, tmp_path, settings)
        dialog.catalog.getter.measure_speed = True
        dialog.settings_saved.connect(controller.apply_settings)  # as the main window does
        panel, row = dialog.catalog, dialog.catalog.rows["smol"]
        with qtbot.waitSignal(panel.installed, timeout=120000):
            _accept_licence(qtbot, panel, "smol")
        assert re.fullmatch(r"Installed; on this machine: [\d.]+ tokens/s \((fast|ok|slow)\)\.", row.status.text()), \
            row.status.text()
        dialog.show()
        with qtbot.waitSignal(dialog.settings_saved, timeout=60000) as saved:
            qtbot.mouseClick(row.use_button, Qt.MouseButton.LeftButton)
        assert saved.args[0].llm.model == "smol" and not dialog.isVisible()
        assert load_settings(tmp_path / "settings.json").settings.llm.model == "smol"
        assert controller.settings.llm.model == "smol" and controller.timeline is timeline
        notice = [e for e in timeline.events() if getattr(e, "code", "") == "settings-saved"][-1]
        assert re.fullmatch(r"Settings saved; Venus reloaded the language model in [\d.]+ s", notice.text), notice.text
        ends = len(timeline.events(kinds=[Kind.ASSISTANT_TURN_END]))
        controller.send_text("Tell me about the moon.")  # the conversation goes on, on the new model
        qtbot.waitUntil(lambda: len(timeline.events(kinds=[Kind.ASSISTANT_TURN_END])) > ends, timeout=60000)
        assert "in use" in row.title.text() and not row.use_button.isEnabled()
    finally:
        controller.close()


def test_the_wizard_recommends_from_the_catalog_and_can_get_it(qtbot, tmp_path, local_catalog):
    """The model step shows the catalog's recommendation for this machine; Get (licence, progress) installs it and
    it is chosen; Finish saves it. Skipping the Get still finishes."""
    wizard = FirstRunWizard(Settings(), settings_path=tmp_path / "settings.json")
    qtbot.addWidget(wizard)
    page = wizard.models
    page.catalog.machine = ROOMY
    page.catalog.getter.measure_speed = False
    wizard.show()
    while wizard.currentPage() is not page:
        wizard.next()
    qtbot.waitUntil(lambda: page.recommendation is not None and page.catalog.advice is not None
                    and page.catalog.advice.machine == ROOMY, timeout=30000)
    assert page.model() == "smollm2-135m-instruct-q4_1", "an installed model is chosen until another is got"
    assert "Test smol" in page.catalog_note.text() and "recommends" in page.catalog_note.text()
    assert "no model catalog" not in page.catalog_note.text()
    row = page.catalog.rows["smol"]
    assert "★ recommended" in row.title.text() and row.get_button.isVisible()
    assert "smol-wrong-hash" not in page.catalog.rows, "the page offers the recommendation, not the whole catalog"
    with qtbot.waitSignal(page.catalog.installed, timeout=60000):
        _accept_licence(qtbot, page.catalog, "smol")
    assert page.model() == "smol" and "Test smol" in page.model_box.currentText()
    wizard.next()
    _finish(wizard)
    assert load_settings(tmp_path / "settings.json").settings.llm.model == "smol"


def test_the_wizard_finishes_when_the_get_is_skipped_or_cancelled(qtbot, tmp_path, local_catalog):
    served = local_catalog
    served.slow = True
    wizard = FirstRunWizard(Settings(), settings_path=tmp_path / "settings.json")
    qtbot.addWidget(wizard)
    page = wizard.models
    page.catalog.machine = ROOMY
    wizard.show()
    while wizard.currentPage() is not page:
        wizard.next()
    qtbot.waitUntil(lambda: "smol" in page.catalog.rows, timeout=30000)
    _accept_licence(qtbot, page.catalog, "smol")
    row = page.catalog.rows["smol"]
    qtbot.waitUntil(lambda: row.progress.value() >= 2, timeout=30000)
    with qtbot.waitSignal(page.catalog.getter.finished, timeout=30000):
        qtbot.mouseClick(row.cancel_button, Qt.MouseButton.LeftButton)
    _finish(wizard)
    saved = load_settings(tmp_path / "settings.json").settings
    assert saved.ui.first_run_done and saved.llm.model == "smollm2-135m-instruct-q4_1"


def _finish(wizard) -> None:
    while wizard.currentPage() is not wizard.summary:
        wizard.next()
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted


def _advice(model_id: str, kind: str, projector: str | None = None):
    from engine.models.advice import Advice, Fit
    from engine.models.catalog import CatalogEntry

    entry = CatalogEntry.model_validate({
        "id": model_id, "kind": kind, "title": f"Test {model_id}", "publisher": "test", "projector": projector,
        "files": [{"name": f"{model_id}.bin", "url": "https://huggingface.co/o/r/resolve/main/x.bin", "size_bytes": 1,
                   "format": "json"}],
        "license": {"spdx": "MIT", "url": "https://opensource.org/license/mit"}, "ram_bytes": 1, "vram_bytes": 0,
        "languages": ["en"], "good_at": "tests"})
    return Advice(entry, Fit.FITS, "fits", installed=True)


def test_use_this_model_sets_the_setting_of_its_kind(qtbot, tmp_path, monkeypatch):
    """A speech model goes to asr.model, a voice to a Piper tts voice, a multimodal model with its projector to the
    camera; each is saved at once (installed models of the registry stand for catalog ones)."""
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    path = tmp_path / "settings.json"
    settings = Settings()
    settings.tts.engine, settings.tts.voice = "espeak", "en-us"
    dialog = SettingsDialog(settings, settings_path=path, restart=lambda: None)
    qtbot.addWidget(dialog)
    assert dialog.use_model(_advice("piper-en-us-joe-medium", "tts"))
    saved = load_settings(path).settings
    assert (saved.tts.engine, saved.tts.voice) == ("piper", "piper-en-us-joe-medium")
    assert dialog.use_model(_advice("whisper-tiny-en", "asr"))
    assert load_settings(path).settings.asr.model == "whisper-tiny-en"
    assert dialog.use_model(_advice("vision-3b", "llm", projector="vision-3b-mmproj"))
    camera = load_settings(path).settings.camera
    assert (camera.multimodal_model, camera.multimodal_projector) == ("vision-3b", "vision-3b-mmproj")
    assert load_settings(path).settings.llm.model == Settings().llm.model, "the conversation's model is kept"
