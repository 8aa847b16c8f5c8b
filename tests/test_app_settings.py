"""The settings dialog on real widgets: pages for people, populated choices, the tools and MCP pages, live apply
and the restart action, a round trip to a real file, pydantic messages, secrets in a real keyring, and the
screenshots of every page (docs/screenshots/settings-*.png)."""

import functools
import hashlib
import http.server
import json
import os
import re
import struct
import sys
import textwrap
import threading
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import keyring  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QComboBox  # noqa: E402

from app.controller import TimelineController  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.secrets import SERVICE, keyring_usable  # noqa: E402
from app.settings_dialog import SettingsDialog  # noqa: E402
from app.settings_fields import CUSTOM, PAGES, all_specs  # noqa: E402
from app.settings_form import combo_values, select_value  # noqa: E402
from engine.settings import Settings, load_settings  # noqa: E402
from engine.timeline import Timeline  # noqa: E402

needs_keyring = pytest.mark.skipif(
    not keyring_usable(),
    reason="no OS keyring backend; .ci/run starts gnome-keyring under dbus-run-session for these tests",
)

MCP_SERVER = textwrap.dedent("""
    import json, os, sys
    request = json.loads(sys.stdin.readline())
    if os.environ.get("TOKEN") != "s3cret":
        sys.exit("TOKEN env missing")
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"],
                      "result": {"serverInfo": {"name": "tiny-files", "version": "1.0"}}}), flush=True)
""")


ROOT = Path(__file__).resolve().parents[1]
ECHO_SERVER = ROOT / "tests" / "fixtures" / "mcp_echo_server.py"
needs_pulse = pytest.mark.skipif(os.environ.get("VENUS_TEST_AUDIO") != "pulse",
                                 reason="needs the PulseAudio test server (.ci/run, scripts/run-tests.sh)")


class Restarts:
    """Stands in for restarting Venus: counts the requests."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


@pytest.fixture
def dialog(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("VENUS_DATA_DIR", str(tmp_path / "data"))
    dlg = SettingsDialog(Settings(), settings_path=tmp_path / "settings.json", restart=Restarts())
    qtbot.addWidget(dlg)
    return dlg


def _items(box: QComboBox) -> list[str]:
    return [box.itemText(i) for i in range(box.count())]


def _choose(box: QComboBox, value) -> None:
    index = box.findData(value)
    assert index >= 0, (value, combo_values(box))
    box.setCurrentIndex(index)


def test_settings_round_trip_to_disk(qtbot, dialog, tmp_path):
    forms = dialog.forms
    forms["llm"].editors["n_ctx"].setValue(8192)
    forms["llm"].editors["temperature"].setValue(0.2)
    forms["conversation"].editors["assistant_name"].setText("Vega")
    forms["conversation"].editors["household_names"].setText("Anna,  Tom , ")
    _choose(forms["ui"].editors["theme"], "dark")
    forms["tts"].editors["rate"].setValue(1.25)
    forms["tts"].editors["volume"].setValue(80)  # shown in percent
    forms["camera"].editors["enabled"].setChecked(True)
    select_value(forms["audio"].editors["input_device"], 3)  # a device index set by hand stays selectable
    qtbot.waitUntil(lambda: bool(dialog.tools.levels), timeout=30000)
    dialog.tools.set_level("open", "allow")
    dialog.tools.add_folder(str(tmp_path))
    dialog.mcp.editor.setPlainText(json.dumps({"files": {"command": "mcp-files", "args": ["--root", "/tmp"]}}))
    with qtbot.waitSignal(dialog.settings_saved) as saved:
        assert dialog.save()
    loaded = load_settings(tmp_path / "settings.json")
    assert loaded.problem is None
    s = loaded.settings
    assert s == saved.args[0]
    assert (s.llm.n_ctx, s.llm.temperature, s.conversation.assistant_name, s.ui.theme) == (8192, 0.2, "Vega", "dark")
    assert (s.tts.rate, s.tts.volume, s.camera.enabled, s.audio.input_device) == (1.25, 0.8, True, 3)
    assert s.conversation.household_names == ["Anna", "Tom"]
    assert s.harness.permissions == {"open": "allow"} and s.harness.allowed_folders == [str(tmp_path)]
    assert s.harness.mcp_servers["files"]["args"] == ["--root", "/tmp"]
    assert s.llm.top_p == Settings().llm.top_p  # untouched fields keep their values


def test_invalid_values_show_pydantic_messages_and_save_nothing(dialog, tmp_path):
    dialog.forms["llm"].editors["top_p"].setValue(0.0)  # top_p must be > 0
    dialog.tools.add_folder(str(tmp_path / "does-not-exist"))
    assert not dialog.save()
    message = dialog.error.text()
    assert "llm.top_p: Input should be greater than 0" in message
    assert "does-not-exist is not an existing folder" in message
    assert dialog.current_page() == "Advanced"  # where Top-p is
    assert not (tmp_path / "settings.json").exists()


def test_bad_mcp_json_names_the_line(dialog, tmp_path):
    dialog.mcp.editor.setPlainText('{\n  "files": {"command": "x",}\n}')
    assert not dialog.save()
    assert "harness.mcp_servers: invalid JSON at line 2" in dialog.error.text()
    dialog.mcp.editor.setPlainText('{"files": {"args": []}}')
    assert not dialog.save()
    assert 'harness.mcp_servers.files: needs a "command"' in dialog.error.text()
    assert dialog.current_page() == "MCP servers"
    assert not (tmp_path / "settings.json").exists()


def _tiny_gguf(path, name="Tiny test model"):
    """A minimal valid GGUF v3: no tensors, one metadata string."""
    def string(text):
        data = text.encode()
        return struct.pack("<Q", len(data)) + data

    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + string("general.name") + struct.pack("<I", 8) + string(name)
    path.write_bytes(header + b"\0" * (-len(header) % 32))  # the data section starts 32-byte aligned
    return path


@pytest.fixture
def models_dir(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    monkeypatch.setenv("VENUS_MODELS_DIR", str(folder))  # the user's model index is written here, not in the real one
    return folder


def test_import_gguf_registers_the_file_and_names_a_bad_one(qtbot, dialog, tmp_path, models_dir):
    fake = tmp_path / "notes.gguf"
    fake.write_bytes(b"PK\x03\x04 this is a zip file, not a model at all")
    dialog.models.start_import(fake)
    qtbot.waitUntil(lambda: not dialog.models.busy, timeout=10000)
    assert "not a GGUF file" in dialog.models.status.text() and str(fake) in dialog.models.status.text()
    assert dialog.model_field.currentData() == Settings().llm.model
    model = _tiny_gguf(tmp_path / "Tiny_Model.gguf")
    with qtbot.waitSignal(dialog.models.model_chosen, timeout=10000) as chosen:
        dialog.models.start_import(model)
    assert chosen.args == ["tiny-model"] and dialog.model_field.currentData() == "tiny-model"
    assert "Tiny test model" in dialog.model_field.currentText() and "installed" in dialog.model_field.currentText()
    assert dialog.save()
    assert load_settings(tmp_path / "settings.json").settings.llm.model == "tiny-model"


def test_download_manager_shows_progress_and_verifies(qtbot, dialog, tmp_path, models_dir):
    served = tmp_path / "served"
    served.mkdir()
    model = _tiny_gguf(served / "downloaded-tiny.gguf", name="Downloaded tiny")
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/downloaded-tiny.gguf"
    try:
        dialog.models.start_download(url, "0" * 64)
        qtbot.waitUntil(lambda: not dialog.models.busy, timeout=20000)
        assert "expected 0000" in dialog.models.status.text()
        assert not (models_dir / "downloaded-tiny.gguf").exists()
        with qtbot.waitSignal(dialog.models.model_chosen, timeout=20000) as chosen:
            dialog.models.start_download(url, digest)
        assert chosen.args == ["downloaded-tiny"]
        assert dialog.models.progress.value() == 100 and "verified" in dialog.models.status.text()
        assert (models_dir / "downloaded-tiny.gguf").read_bytes() == model.read_bytes()
        assert dialog.model_field.currentData() == "downloaded-tiny"
    finally:
        server.shutdown()


def test_model_choice_lists_registry_llms_with_the_current_one_selected(qtbot, dialog):
    box: QComboBox = dialog.model_field
    qtbot.waitUntil(lambda: box.count() > 1, timeout=10000)
    assert "smollm2-135m-instruct-q4_1" in combo_values(box) and "whisper-tiny-en" not in combo_values(box)
    assert box.currentData() == Settings().llm.model
    assert re.fullmatch(r"SmolLM2 135M Instruct \(Q4_1\) · \d+ MB · installed", box.currentText()), box.currentText()
    asr = dialog.forms["asr"].editors["model"]
    qtbot.waitUntil(lambda: "Whisper" in asr.currentText(), timeout=10000)
    assert asr.currentData() == "whisper-tiny-en"


def test_a_model_too_big_for_the_free_memory_says_so(models_dir):
    from app.settings_models import model_choices

    items, problem = model_choices("llm", memory=150_000_000)  # SmolLM2 fits, Gemma 3 270M does not
    labels = dict((value, label) for label, value in items)
    assert problem == "" and "too big" not in labels["smollm2-135m-instruct-q4_1"]
    assert "too big for the 0.1 GB free" in labels["gemma3-270m-q4_k_m"]


def test_mcp_test_button_starts_the_server_with_its_secret(qtbot, dialog, tmp_path):
    script = tmp_path / "tiny_server.py"
    script.write_text(MCP_SERVER)
    dialog.mcp.editor.setPlainText(json.dumps({"files": {"command": sys.executable, "args": [str(script)]}}))
    with qtbot.waitSignal(dialog.mcp.test_finished, timeout=20000) as failed:
        dialog.mcp.test_server("files")
    assert failed.args[1] is False and "TOKEN env missing" in failed.args[2]
    dialog.mcp.add_secret("files", "TOKEN", "s3cret")
    assert json.loads(dialog.mcp.editor.toPlainText())["files"]["env"]["TOKEN"] == "keyring:mcp:files:TOKEN"
    with qtbot.waitSignal(dialog.mcp.test_finished, timeout=20000) as passed:
        dialog.mcp.test_server("files")
    assert passed.args[1] is True and "tiny-files 1.0" in passed.args[2]
    qtbot.waitUntil(lambda: "✔" in dialog.mcp.result.text())


@needs_keyring
def test_secrets_reach_the_keyring_and_never_the_file(dialog, tmp_path):
    dialog.mcp.editor.setPlainText(json.dumps({"files": {"command": "mcp-files"}}))
    dialog.mcp.add_secret("files", "TOKEN", "mcp-secret-value-123")
    dialog.api_keys.fields["remote-llm"].setText("sk-test-key-456")
    assert dialog.save(), dialog.error.text()
    try:
        text = (tmp_path / "settings.json").read_text()
        assert "mcp-secret-value-123" not in text and "sk-test-key-456" not in text
        assert json.loads(text)["harness"]["mcp_servers"]["files"]["env"]["TOKEN"] == "keyring:mcp:files:TOKEN"
        assert keyring.get_password(SERVICE, "mcp:files:TOKEN") == "mcp-secret-value-123"
        assert keyring.get_password(SERVICE, "api-key:remote-llm") == "sk-test-key-456"
    finally:
        keyring.delete_password(SERVICE, "mcp:files:TOKEN")
        keyring.delete_password(SERVICE, "api-key:remote-llm")


def test_saved_settings_apply_to_the_running_window_without_restart(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    timeline = Timeline()
    controller = TimelineController(timeline)
    window = MainWindow(Settings(), timeline, controller, settings_path=tmp_path / "settings.json")
    qtbot.addWidget(window)
    try:
        window.open_settings()
        dialog = window.settings_dialog
        dialog.forms["conversation"].editors["assistant_name"].setText("Vega")
        _choose(dialog.forms["ui"].editors["theme"], "dark")
        assert dialog.save() and not dialog.isVisible()  # nothing here needs a restart: the dialog closed
        assert window.windowTitle().endswith("Vega")
        qtbot.waitUntil(lambda: window.palette().window().color().lightness() < 80)  # the dark palette is in force
        qtbot.waitUntil(lambda: controller.settings.conversation.assistant_name == "Vega", timeout=5000)
    finally:
        window.shutdown()


def test_every_settings_control_is_named_and_reachable_by_keyboard(dialog):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QLineEdit, QPlainTextEdit

    controls = [w for cls in (QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox, QPlainTextEdit)
                for w in dialog.findChildren(cls) if w.parent() is not None and not isinstance(w.parent(), QComboBox)]
    # leave out Qt's own parts: a spin box's inner line edit, a table's corner button, tab-bar scrollers
    controls = [c for c in controls if not isinstance(c.parent(), QAbstractSpinBox) and not c.objectName().startswith("qt_")
                and type(c).__name__ != "QToolButton"]
    unnamed = [c.objectName() or type(c).__name__ for c in controls
               if not (c.accessibleName() or (isinstance(c, QAbstractButton) and c.text()))]
    assert len(controls) > 60 and unnamed == []
    assert all(c.focusPolicy() & Qt.FocusPolicy.TabFocus for c in controls if not isinstance(c, QAbstractButton) or c.text())


def test_camera_test_button_reads_a_picture_from_the_chosen_device(qtbot, dialog, tmp_path):
    import cv2
    import numpy as np

    video = tmp_path / "camera.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for _ in range(3):
        writer.write(np.full((48, 64, 3), 128, np.uint8))
    writer.release()
    dialog.forms["camera"].editors["device"].setCurrentText(str(video))
    with qtbot.waitSignal(dialog.check_finished, timeout=20000) as done:
        dialog.test_camera()
    assert done.args[0] == "camera" and done.args[1].ok
    assert dialog.camera_status.text().startswith("✔") and "64×48" in dialog.camera_status.text()
    dialog.forms["camera"].editors["device"].setCurrentText(str(tmp_path / "unplugged.avi"))
    with qtbot.waitSignal(dialog.check_finished, timeout=20000):
        dialog.test_camera()
    assert dialog.camera_status.text().startswith("✘") and "unplugged.avi" in dialog.camera_status.text()


@needs_pulse
def test_microphone_test_shows_the_level_it_heard(qtbot, dialog):
    from app.device_checks import SystemDeviceChecks

    qtbot.waitUntil(lambda: "Looking" not in dialog.device_status.text(), timeout=20000)  # the device probe is done
    player = threading.Thread(target=SystemDeviceChecks().play_test_tone, args=(None, 440.0, 2.5))
    player.start()
    try:
        with qtbot.waitSignal(dialog.check_finished, timeout=20000) as done:
            dialog.test_microphone()
    finally:
        player.join()
    assert done.args[0] == "microphone" and done.args[1].ok, done.args[1].message
    assert dialog.mic_level.value() > 30 and dialog.device_status.text().startswith("✔")


# ---- pages for people --------------------------------------------------------------------------------------


def test_every_field_has_a_human_place_label_and_help():
    shown = {spec.key for spec in all_specs()}
    schema = {f"{section}.{name}" for section, info in Settings.model_fields.items() if section != "schema_version"
              for name in info.annotation.model_fields}
    assert schema - shown - set(CUSTOM) == set()  # nothing is left to a raw dump
    assert shown & set(CUSTOM) == set() and len(shown) == len(all_specs())  # each field shown once
    for spec in all_specs():
        assert spec.help and "_" not in spec.label and not spec.label.lower().startswith("number of"), spec
    units = {spec.key: spec.unit for spec in all_specs()}
    assert (units["llm.n_ctx"], units["llm.remote_timeout_s"], units["audio.echo_guard_margin_db"]) == ("tokens", "s", "dB")
    assert len(PAGES) <= 10 and "first_run_done" not in str(all_specs())


def test_pages_show_labels_units_and_help_under_each_field(qtbot, dialog):
    from PySide6.QtWidgets import QLabel

    dialog.show_page("Models")
    assert dialog.current_page() == "Models" and dialog.nav.currentItem().text() == "Models"
    n_ctx = dialog.forms["llm"].editors["n_ctx"]
    assert n_ctx.accessibleName() == "Context length" and n_ctx.text() == "4096 tokens"
    assert dialog.forms["llm"].editors["remote_timeout_s"].suffix() == " s"
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    assert "Context length" in texts and "How much of the conversation the model can see at once." in texts
    assert "Server timeout" in texts and not any("_" in t and " " not in t for t in texts if t)
    volume = dialog.forms["tts"].editors["volume"]
    assert volume.value() == 100 and volume.suffix() == " %"
    threads = dialog.forms["llm"].editors["n_threads"]
    assert threads.value() == 0 and threads.text() == "Automatic"  # 0 means "choose for me", and says so
    gpu = dialog.forms["llm"].editors["n_gpu_layers"]
    gpu.setValue(-1)
    assert gpu.text() == "All layers" and dialog.collect()[0]["llm"]["n_gpu_layers"] == -1
    qtbot.waitUntil(lambda: "Looking" not in dialog.device_status.text(), timeout=20000)
    camera = dialog.forms["camera"].editors["device"]
    assert camera.currentText() == "First camera (0)" and dialog.collect()[0]["camera"]["device"] == 0
    server = dialog.forms["llm"].editors["remote_url"]
    assert not server.isEnabled()  # the server's fields wait until the model runs on a server
    _choose(dialog.forms["llm"].editors["backend"], "remote")
    assert server.isEnabled()


def test_choices_are_populated_with_the_current_values_selected(qtbot, dialog):
    voice = dialog.forms["tts"].editors["voice"]
    qtbot.waitUntil(lambda: voice.count() > 1, timeout=20000)
    assert voice.currentData() == "piper:piper-en-us-joe-medium" and "Piper" in voice.currentText()
    assert "espeak:en-us" in combo_values(voice)  # espeak-ng's voices are listed too
    assert dialog.forms["tts"].editors["espeak_voice"].currentData() == "en-us"
    for key in ("asr.language", "conversation.language"):
        section, name = key.split(".")
        box = dialog.forms[section].editors[name]
        assert box.currentText() == "English (en)" and {"de", "fr", "ja"} <= set(combo_values(box))
    qtbot.waitUntil(lambda: "Looking" not in dialog.device_status.text(), timeout=20000)
    for name in ("input_device", "output_device"):
        box = dialog.forms["audio"].editors[name]
        assert box.currentText() == "System default" and box.currentData() is None
    if os.environ.get("VENUS_TEST_AUDIO") == "pulse":  # the test server's devices are listed by name
        assert dialog.input_box.count() > 1 and "found" in dialog.device_status.text()
    dialog.select_voice("espeak", "de")
    raw, problems = dialog.collect()
    assert problems == [] and (raw["tts"]["engine"], raw["tts"]["voice"]) == ("espeak", "de")
    _choose(dialog.forms["asr"].editors["language"], "de")
    assert not dialog.save()  # whisper-tiny-en hears English only: said before anything is written
    assert "whisper-tiny-en understands English only" in dialog.error.text() and dialog.current_page() == "General"


def test_voice_preview_speaks_the_chosen_voice(qtbot, dialog):
    voice = dialog.forms["tts"].editors["voice"]
    qtbot.waitUntil(lambda: voice.count() > 1, timeout=20000)
    dialog.select_voice("espeak", "en-us")
    dialog.forms["tts"].editors["rate"].setValue(1.5)
    play = os.environ.get("VENUS_TEST_AUDIO") == "pulse"
    with qtbot.waitSignal(dialog.check_finished, timeout=30000) as done:
        if play:  # a click, as the user previews it
            qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
        else:
            dialog.preview_voice(play=False)
    which, result = done.args
    assert which == "voice" and result.ok, result.message
    seconds = float(re.search(r"([\d.]+) s of speech", result.message).group(1))
    assert 1.0 < seconds < 6.0
    assert dialog.voice_status.text().startswith("✔") and dialog.preview_button.isEnabled()
    if play:
        assert result.message.startswith("Played")


@needs_pulse
def test_live_level_meter_follows_the_microphone(qtbot, dialog):
    from app.device_checks import SystemDeviceChecks

    dialog.show()
    dialog.show_page("Audio devices")
    qtbot.waitUntil(lambda: dialog.monitor.running, timeout=20000)
    player = threading.Thread(target=SystemDeviceChecks().play_test_tone, args=(None, 440.0, 2.0))
    player.start()
    try:
        qtbot.waitUntil(lambda: dialog.mic_level.value() > 30, timeout=10000)
    finally:
        player.join()
    dialog.show_page("General")
    assert not dialog.monitor.running  # the microphone is closed when its page is not shown


def test_tools_page_lists_every_tool_and_a_permission_applies_at_once(qtbot, tmp_path, monkeypatch):
    from app.session_controller import SessionController

    monkeypatch.setenv("VENUS_DATA_DIR", str(tmp_path / "data"))
    settings = Settings()
    settings.harness.mcp_servers = {"echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}
    controller = SessionController(Timeline(), settings, persist=False)
    try:
        assert controller.session.harness.wait_mcp_started(60)
        from app.main_window import MainWindow

        window = MainWindow(settings, controller.timeline, controller, settings_path=tmp_path / "settings.json")
        qtbot.addWidget(window)
        window.open_settings()  # the window hands the dialog the running harness's tools (no second MCP start)
        dialog = window.settings_dialog
        assert dialog.tools.rows == controller.describe_tools()
        dialog.show_page("Tools")
        table = dialog.tools.table
        rows = {table.item(r, 0).text(): [table.item(r, c).text() for c in range(1, 4)] for r in range(table.rowCount())}
        assert rows["calculate"][1:] == ["built-in", "Yes"] and rows["calculate"][0].startswith("Evaluate")
        assert rows["echo__add"][:2] == ["Add two integers.", "MCP server echo"]
        for row in controller.describe_tools():  # availability on this machine, with the reason when not
            assert rows[row["name"]][2] == ("Yes" if row["available"] else f"No: {row['why']}")
        assert dialog.tools.levels["open"].currentText() == "Ask first (default)"
        assert dialog.tools.levels["run_shell_command"].currentData() == "off"
        assert "2 MCP" not in dialog.tools.status.text() and "1 MCP server(s)" in dialog.tools.status.text()
        assert set(dialog.tools.filter("echo")) == {n for n in rows if n.startswith("echo__")}  # by server too
        assert dialog.tools.filter("clipboard") == ["read_clipboard", "write_clipboard"]
        assert table.isRowHidden(list(rows).index("calculate"))
        qtbot.keyClicks(dialog.tools.search, "x")
        dialog.tools.search.clear()
        assert not any(table.isRowHidden(r) for r in range(table.rowCount()))
        dialog.tools.set_level("calculate", "off")
        dialog.tools.set_level("echo__add", "allow")
        with qtbot.waitSignal(dialog.settings_saved) as saved:
            assert dialog.save()
        assert saved.args[0].harness.permissions == {"calculate": "off", "echo__add": "allow"}
        assert not dialog.isVisible() and dialog.restart_reasons == []  # permissions need no restart
        controller.apply_settings(saved.args[0])  # what the window's bridge does with a saved dialog
        offered = [tool["name"] for tool in controller.session.harness.tool_specs()]
        assert "calculate" not in offered and "echo__add" in offered
        levels = {row["name"]: row["level"] for row in controller.describe_tools()}
        assert levels["calculate"] == "off" and levels["echo__add"] == "allow"
        notice = [e for e in controller.timeline.events() if getattr(e, "code", "") == "settings-saved"][-1]
        assert "tool permissions apply now" in notice.text
    finally:
        controller.close()


def test_tools_page_without_a_session_asks_a_throwaway_harness(qtbot, dialog):
    assert TimelineController().describe_tools() is None  # no harness: the dialog gets tools=None
    qtbot.waitUntil(lambda: bool(dialog.tools.levels), timeout=30000)
    assert {"calculate", "open", "run_shell_command"} <= set(dialog.tools.levels)
    assert "tools, 0 MCP server(s)" in dialog.tools.status.text()
    shell = next(r for r in range(dialog.tools.table.rowCount()) if dialog.tools.table.item(r, 0).text() == "run_shell_command")
    box = dialog.tools.table.cellWidget(shell, 4)
    assert [box.itemData(i) for i in range(box.count())] == ["ask", "off"]  # the shell may ask, never just run
    raw, problems = dialog.collect()
    assert problems == [] and raw["harness"]["permissions"] == {}  # defaults are not written out


def test_mcp_servers_as_a_form_with_import_and_export(qtbot, dialog, tmp_path):
    mcp = dialog.mcp
    name = mcp.add_server()
    assert mcp.server_list.currentItem().text() == name == "new-server"
    mcp.name_edit.setText("files")
    mcp.name_edit.editingFinished.emit()
    mcp.command_edit.setText("mcp-files")
    mcp.command_edit.editingFinished.emit()
    mcp.args_edit.setText("--root '/home/me/My Documents'")
    mcp.args_edit.editingFinished.emit()
    qtbot.keyClicks(mcp.env_edit, "LOG_LEVEL=debug")  # typed: the JSON follows each key, the cursor stays put
    assert mcp.env_edit.toPlainText() == "LOG_LEVEL=debug"
    mcp.permission_box.setCurrentIndex(mcp.permission_box.findData("allow"))
    assert mcp.parsed() == {"files": {"command": "mcp-files", "args": ["--root", "/home/me/My Documents"],
                                      "env": {"LOG_LEVEL": "debug"}, "permission": "allow"}}
    assert json.loads(mcp.editor.toPlainText()) == mcp.parsed()  # the JSON box follows the form
    mcp.add_secret("files", "TOKEN", "s3cret-value-for-files")
    assert mcp.env_edit.toPlainText().splitlines() == ["LOG_LEVEL=debug", "TOKEN=keyring:mcp:files:TOKEN"]

    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp"}}}))
    assert mcp.import_json(claude) == ["web"]
    assert mcp.server_list.currentItem().text() == "web" and mcp.url_edit.text() == "http://127.0.0.1:9/mcp"
    assert mcp.kind_box.currentData() == "url" and not mcp.command_edit.isEnabled()
    exported = tmp_path / "exported.json"
    mcp.export_json(exported)
    data = json.loads(exported.read_text())["mcpServers"]
    assert set(data) == {"files", "web"} and data["files"]["env"]["TOKEN"] == "keyring:mcp:files:TOKEN"
    assert "s3cret-value-for-files" not in exported.read_text()  # secrets stay in the keyring
    mcp.server_list.setCurrentRow(0)
    _choose(mcp.kind_box, "url")  # files becomes a web server: the form follows at once
    assert mcp.url_edit.isEnabled() and not mcp.args_edit.isEnabled()
    assert "command" not in mcp.parsed()["files"] and mcp.parsed()["files"]["url"] == ""
    _choose(mcp.kind_box, "command")
    mcp.command_edit.setText("mcp-files")
    mcp.command_edit.editingFinished.emit()
    mcp.remove_server("web")
    assert [mcp.server_list.item(i).text() for i in range(mcp.server_list.count())] == ["files"]
    mcp.add_server()
    assert not dialog.save()  # a blank server is named before anything is written
    assert "new-server: fill in the program to start" in dialog.error.text()
    assert dialog.current_page() == "MCP servers" and not (tmp_path / "settings.json").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="no mcpServers"):
        mcp.import_json(bad)


def test_a_model_change_offers_one_restart_action(qtbot, dialog):
    dialog.reloads_live = False  # a controller that cannot reopen the engine itself
    dialog.forms["llm"].editors["n_ctx"].setValue(8192)
    dialog.forms["tts"].editors["rate"].setValue(1.2)
    dialog.show()
    with qtbot.waitSignal(dialog.settings_saved):
        assert dialog.save()
    assert dialog.isVisible() and dialog.restart_bar.isVisible()  # saved; the dialog stays to offer the restart
    assert dialog.restart_reasons == ["the language model"]  # the voice's speed applies live
    assert "the language model after a restart" in dialog.restart_note.text()
    qtbot.mouseClick(dialog.restart_button, Qt.MouseButton.LeftButton)
    assert dialog.restart.count == 1 and not dialog.isVisible()


def test_settings_pages_screenshots(qtbot, tmp_path, monkeypatch):
    """Every page rendered under the test display; VENUS_UPDATE_SCREENSHOT=1 (or a missing file) writes docs/."""
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from app.theme import apply_theme

    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("VENUS_DATA_DIR", str(tmp_path / "data"))
    apply_theme(QApplication.instance(), "light")  # the same look whichever test changed the theme before
    settings = Settings()
    settings.harness.mcp_servers = {"echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}
    dialog = SettingsDialog(settings, settings_path=tmp_path / "settings.json", restart=Restarts())
    qtbot.addWidget(dialog)
    voice = dialog.forms["tts"].editors["voice"]
    qtbot.waitUntil(lambda: bool(dialog.tools.levels) and voice.count() > 1, timeout=60000)
    assert any(name.startswith("echo__") for name in dialog.tools.levels)  # the server's tools are listed
    qtbot.waitUntil(lambda: "Looking" not in dialog.device_status.text(), timeout=20000)
    qtbot.waitUntil(lambda: bool(dialog.catalog.rows), timeout=30000)  # the Models page shows the catalog
    dialog.mcp.editor.setPlainText(json.dumps({  # as a reader would write them, without this machine's paths
        "echo": {"command": "python3", "args": ["mcp_echo_server.py"]},
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/Documents"],
                  "env": {"LOG_LEVEL": "info"}}}, indent=2))
    dialog.resize(900, 650)
    dialog.show()
    folder = ROOT / "docs" / "screenshots"
    update = os.environ.get("VENUS_UPDATE_SCREENSHOT") == "1"
    for title in dialog.page_titles:
        dialog.show_page(title)
        qtbot.wait(50)
        slug = title.lower().replace(" ", "-")
        shot = tmp_path / f"settings-{slug}.png"
        assert dialog.grab().save(str(shot))
        image = QImage(str(shot))
        assert (image.width(), image.height()) == (900, 650)
        assert len({image.pixel(x, y) for x in range(0, 900, 37) for y in range(0, 650, 29)}) > 4  # not blank
        if update or not (folder / shot.name).exists():
            folder.mkdir(exist_ok=True)
            (folder / shot.name).write_bytes(shot.read_bytes())
    assert len(list(folder.glob("settings-*.png"))) >= len(PAGES)


def test_a_new_voice_applies_to_the_running_session_at_once(qtbot, tmp_path):
    import numpy as np
    import soundfile as sf

    from app.session_controller import SessionController
    from engine.timeline.events import Kind
    from engine.tts import EspeakSynthesizer

    quiet = tmp_path / "quiet.wav"
    sf.write(quiet, np.zeros(16000 * 60, np.float32), 16000)
    settings = Settings()
    settings.llm.n_threads = 1
    controller = SessionController(None, settings, mic=quiet, speaker=tmp_path / "venus-said.wav", persist=False)
    try:
        dialog = SettingsDialog(settings, settings_path=tmp_path / "settings.json", tools=controller.describe_tools(),
                                restart=Restarts())
        qtbot.addWidget(dialog)
        qtbot.waitUntil(lambda: dialog.forms["tts"].editors["voice"].count() > 1, timeout=20000)
        dialog.select_voice("espeak", "en-us")
        dialog.forms["tts"].editors["rate"].setValue(1.3)
        with qtbot.waitSignal(dialog.settings_saved) as saved:
            assert dialog.save()
        assert dialog.restart_reasons == []  # nothing waits for a restart
        controller.apply_settings(saved.args[0])
        assert isinstance(controller.session.speech.synthesizer, EspeakSynthesizer)
        notice = [e for e in controller.timeline.events() if getattr(e, "code", "") == "settings-saved"][-1]
        assert notice.text == "Settings saved; tool permissions and the voice apply now"
        controller.send_text("What time is it?")  # answered by a local intent, spoken in the new voice
        qtbot.waitUntil(lambda: bool(controller.timeline.events(kinds=[Kind.SPEECH_SPAN])), timeout=30000)
        assert controller.session.speech.synthesizer._wpm == int(175 * 1.3)
    finally:
        controller.close()


def test_restart_venus_starts_the_app_again_after_it_quit(tmp_path):
    script = tmp_path / "app.py"
    log = tmp_path / "runs.txt"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication
        from app.settings_dialog import restart_venus
        log = Path({str(log)!r})
        runs = log.read_text().count("run") + 1 if log.exists() else 1
        log.write_text(log.read_text() + f"run {{runs}} {{sys.argv[1:]}}\\n" if log.exists() else "run 1 " + str(sys.argv[1:]) + "\\n")
        app = QApplication(sys.argv[:1])
        if runs == 1:
            QTimer.singleShot(0, restart_venus)
        else:
            QTimer.singleShot(0, app.quit)
        app.exec()
        print("quit cleanly", runs)
    """))
    import subprocess

    done = subprocess.run([sys.executable, str(script), "--flag"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == ["run 1 ['--flag']", "run 2 ['--flag']"]  # same arguments again
    assert done.stdout.split("\n")[:2] == ["quit cleanly 1", "quit cleanly 2"]  # the first run ended normally first


def test_a_model_change_reloads_the_running_engine_on_the_same_conversation(qtbot, tmp_path):
    from app.session_controller import SessionController
    from engine.timeline.events import Kind

    settings = Settings()
    settings.llm.n_threads = 1
    controller = SessionController(Timeline(), settings, persist=False, harness=False)
    try:
        timeline, backend = controller.timeline, controller.session.shared.backend
        dialog = SettingsDialog(settings, settings_path=tmp_path / "settings.json", restart=Restarts(), reloads_live=True)
        qtbot.addWidget(dialog)
        dialog.forms["llm"].editors["n_ctx"].setValue(2048)
        dialog.show()
        with qtbot.waitSignal(dialog.settings_saved) as saved:
            assert dialog.save()
        assert not dialog.isVisible() and dialog.restart.count == 0  # the controller reloads: no restart asked
        controller.apply_settings(saved.args[0])
        assert controller.timeline is timeline and controller.session.shared.backend is not backend
        assert controller.session.shared.backend.n_ctx == 2048  # the new context length is in force
        notice = [e for e in timeline.events() if getattr(e, "code", "") == "settings-saved"][-1]
        assert re.fullmatch(r"Settings saved; Venus reloaded the language model in [\d.]+ s", notice.text), notice.text
        controller.send_text("What time is it?")  # the conversation goes on, on the reloaded engine
        qtbot.waitUntil(lambda: bool(timeline.events(kinds=[Kind.ASSISTANT_TURN_END])), timeout=30000)

        broken = saved.args[0].model_copy(deep=True)
        broken.llm.model = "no-such-model"
        controller.apply_settings(broken)
        failed = [e for e in timeline.events() if getattr(e, "code", "") == "settings-not-applied"]
        assert failed and "no-such-model" in failed[0].text and "went back to the previous ones" in failed[0].text
        assert controller.settings.llm.model == Settings().llm.model  # what runs is what worked before
        ends = len(timeline.events(kinds=[Kind.ASSISTANT_TURN_END]))
        controller.send_text("What time is it?")
        qtbot.waitUntil(lambda: len(timeline.events(kinds=[Kind.ASSISTANT_TURN_END])) > ends, timeout=30000)

        renamed = controller.settings.model_copy(deep=True)
        renamed.conversation.assistant_name = "Vega"
        controller.apply_settings(renamed)  # the runtime listens for her name over her voice: it gets the new one
        assert controller.runtime.settings.conversation.assistant_name == "Vega"
        notice = [e for e in timeline.events() if getattr(e, "code", "") == "settings-saved"][-1]
        assert notice.text.startswith("Settings saved; Venus reloaded her name in")
    finally:
        controller.close()


def test_mcp_test_button_reaches_a_server_by_url(qtbot, dialog):
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(ECHO_SERVER), "--http", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        qtbot.waitUntil(listening, timeout=30000)
        dialog.mcp.add_server("web", {"url": f"http://127.0.0.1:{port}/mcp"})
        with qtbot.waitSignal(dialog.mcp.test_finished, timeout=30000) as passed:
            qtbot.mouseClick(dialog.mcp.test_button, Qt.MouseButton.LeftButton)
        assert passed.args[:2] == ["web", True] and "answered with 5 tool(s)" in passed.args[2], passed.args
        assert "add" in passed.args[2] and "echo" in passed.args[2]
    finally:
        server.terminate()
        server.wait(timeout=10)
    dialog.mcp.add_server("gone", {"url": f"http://127.0.0.1:{port}/mcp"})
    with qtbot.waitSignal(dialog.mcp.test_finished, timeout=60000) as failed:
        dialog.mcp.test_server("gone")
    assert failed.args[1] is False and "could not start" in failed.args[2], failed.args


def test_the_fields_of_a_page_start_in_one_column_across_its_groups(qtbot, dialog):
    # Found on a screenshot: on General the fields of "You and Venus", "Language" and "Appearance" began at three
    # different places, each group sizing its labels alone
    dialog.resize(900, 700)
    dialog.show()
    dialog.show_page("General")
    qtbot.waitExposed(dialog)
    editors = [dialog.forms["conversation"].editors["assistant_name"], dialog.forms["asr"].editors["language"]]
    theme = [e for form in dialog.forms.values() for name, e in form.editors.items() if name == "theme"]
    assert theme, "no theme field on General"
    lefts = {editor.mapTo(dialog, editor.rect().topLeft()).x() for editor in [*editors, theme[0]]}
    assert len(lefts) == 1, lefts
