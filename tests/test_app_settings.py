"""The settings dialog on real widgets: round trip to a real file, pydantic messages, secrets in a real keyring."""

import functools
import hashlib
import http.server
import json
import os
import struct
import sys
import textwrap
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import keyring  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QComboBox  # noqa: E402

from app.controller import TimelineController  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.secrets import SERVICE, keyring_usable  # noqa: E402
from app.settings_dialog import SettingsDialog  # noqa: E402
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


@pytest.fixture
def dialog(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    dlg = SettingsDialog(Settings(), settings_path=tmp_path / "settings.json")
    qtbot.addWidget(dlg)
    return dlg


def test_settings_round_trip_to_disk(qtbot, dialog, tmp_path):
    forms = dialog.forms
    forms["llm"].editors["n_ctx"].setValue(8192)
    forms["llm"].editors["temperature"].setValue(0.2)
    forms["conversation"].editors["assistant_name"].setText("Vega")
    forms["conversation"].editors["household_names"].setText("Anna,  Tom , ")
    forms["ui"].editors["theme"].setCurrentText("dark")
    forms["tts"].editors["rate"].setValue(1.25)
    forms["camera"].editors["enabled"].setChecked(True)
    forms["audio"].editors["input_device"].setCurrentText("3")
    dialog.tools.add_permission("delete_files", "ask")
    dialog.tools.add_folder(str(tmp_path))
    dialog.mcp.editor.setPlainText(json.dumps({"files": {"command": "mcp-files", "args": ["--root", "/tmp"]}}))
    with qtbot.waitSignal(dialog.settings_saved) as saved:
        assert dialog.save()
    loaded = load_settings(tmp_path / "settings.json")
    assert loaded.problem is None
    s = loaded.settings
    assert s == saved.args[0]
    assert (s.llm.n_ctx, s.llm.temperature, s.conversation.assistant_name, s.ui.theme) == (8192, 0.2, "Vega", "dark")
    assert (s.tts.rate, s.camera.enabled, s.audio.input_device) == (1.25, True, 3)
    assert s.conversation.household_names == ["Anna", "Tom"]
    assert s.harness.permissions == {"delete_files": "ask"} and s.harness.allowed_folders == [str(tmp_path)]
    assert s.harness.mcp_servers["files"]["args"] == ["--root", "/tmp"]
    assert s.llm.top_p == Settings().llm.top_p  # untouched fields keep their values


def test_invalid_values_show_pydantic_messages_and_save_nothing(dialog, tmp_path):
    dialog.forms["llm"].editors["top_p"].setValue(0.0)  # top_p must be > 0
    dialog.tools.add_folder(str(tmp_path / "does-not-exist"))
    assert not dialog.save()
    message = dialog.error.text()
    assert "llm.top_p: Input should be greater than 0" in message
    assert "does-not-exist is not an existing folder" in message
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Models"
    assert not (tmp_path / "settings.json").exists()


def test_bad_mcp_json_names_the_line(dialog, tmp_path):
    dialog.mcp.editor.setPlainText('{\n  "files": {"command": "x",}\n}')
    assert not dialog.save()
    assert "harness.mcp_servers: invalid JSON at line 2" in dialog.error.text()
    dialog.mcp.editor.setPlainText('{"files": {"args": []}}')
    assert not dialog.save()
    assert 'harness.mcp_servers.files: needs a "command"' in dialog.error.text()
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "MCP servers"
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
    assert dialog.model_field.text() == Settings().llm.model
    model = _tiny_gguf(tmp_path / "Tiny_Model.gguf")
    with qtbot.waitSignal(dialog.models.model_chosen, timeout=10000) as chosen:
        dialog.models.start_import(model)
    assert chosen.args == ["tiny-model"] and dialog.model_field.text() == "tiny-model"
    assert dialog.save()
    assert load_settings(tmp_path / "settings.json").settings.llm.model == "tiny-model"
    ids = [dialog.models.choice.itemText(i) for i in range(dialog.models.choice.count())]
    assert "tiny-model" in ids


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
        assert dialog.model_field.text() == "downloaded-tiny"
    finally:
        server.shutdown()


def test_model_choice_lists_registry_llms(dialog):
    choice: QComboBox = dialog.models.choice
    ids = [choice.itemText(i) for i in range(choice.count())]
    assert "smollm2-135m-instruct-q4_1" in ids and "whisper-tiny-en" not in ids


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
        dialog.forms["ui"].editors["theme"].setCurrentText("dark")
        assert dialog.save()
        assert window.windowTitle() == "Vega"
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


@pytest.mark.skipif(os.environ.get("VENUS_TEST_AUDIO") != "pulse", reason="needs the PulseAudio test server (.ci/run)")
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
