"""First-run wizard, device checks, tray and run_app, on real widgets and real devices where the machine has them."""

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWizard  # noqa: E402

from app.controller import TimelineController  # noqa: E402
from app.device_checks import SystemDeviceChecks, rms_dbfs  # noqa: E402
from app.main_window import MainWindow, run_app  # noqa: E402
from app.tray import Tray  # noqa: E402
from app.wizard import FirstRunWizard  # noqa: E402
from engine.settings import Settings, load_settings  # noqa: E402
from engine.timeline import Timeline  # noqa: E402
from engine.timeline.events import Kind  # noqa: E402

needs_pulse = pytest.mark.skipif(
    os.environ.get("VENUS_TEST_AUDIO") != "pulse",
    reason="needs the PulseAudio test server (source scripts/test-services.sh; .ci/run does)",
)


def _video(path, frames=5, size=(160, 120)):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, size)
    for i in range(frames):
        writer.write(np.full((size[1], size[0], 3), 40 * i, np.uint8))
    writer.release()
    return path


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path


@needs_pulse
def test_first_run_wizard_completes_and_saves(qtbot, config):
    """On working devices every check passes and says so; finishing marks first run done and saves."""
    settings = Settings()
    settings.camera.device = str(_video(config / "camera.avi"))
    wizard = FirstRunWizard(settings, settings_path=config / "settings.json")
    qtbot.addWidget(wizard)
    wizard.show()
    # the microphone check hears a tone played meanwhile (PulseAudio's virtual mic hears its virtual speaker)
    tone = threading.Thread(target=SystemDeviceChecks().play_test_tone, args=(None, 440.0, 2.5))
    tone.start()
    try:
        for page in wizard.check_pages()[:3]:
            wizard.next()
            assert wizard.currentPage() is page
            page.run_check()
            qtbot.waitUntil(lambda page=page: page.result is not None, timeout=30000)
            assert page.result.ok, page.result.message
            assert page.verdict.text() == "✔ " + page.result.message and page.button.isEnabled()
    finally:
        tone.join()
    assert not wizard.microphone.meter.isHidden() and wizard.microphone.result.level_dbfs > -40
    assert "160×120" in wizard.camera.result.message
    wizard.next()  # the model page checks by itself
    qtbot.waitUntil(lambda: wizard.models.result is not None, timeout=30000)
    assert wizard.models.result.ok, wizard.models.result.message
    assert "smollm2-135m-instruct-q4_1" in wizard.models.result.message
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted
    saved = load_settings(config / "settings.json").settings
    assert saved.ui.first_run_done and saved.camera.device == settings.camera.device


def test_a_failed_check_shows_the_fix_and_does_not_block_finishing(qtbot, config):
    """A camera that is not there fails its check with the fix on the page, and the wizard still finishes."""
    settings = Settings()
    settings.camera.device = str(config / "unplugged.avi")
    wizard = FirstRunWizard(settings, settings_path=config / "settings.json")
    qtbot.addWidget(wizard)
    wizard.show()
    for _ in range(3):
        wizard.next()
    assert wizard.currentPage() is wizard.camera
    wizard.camera.run_check()
    qtbot.waitUntil(lambda: wizard.camera.result is not None, timeout=30000)
    assert not wizard.camera.result.ok
    verdict = wizard.camera.verdict.text()
    assert verdict.startswith("✘ ") and "unplugged.avi" in verdict and "Settings → Camera" in verdict
    wizard.next()
    qtbot.waitUntil(lambda: wizard.models.result is not None, timeout=30000)
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted
    saved = load_settings(config / "settings.json").settings
    assert saved.ui.first_run_done and saved.camera.device == settings.camera.device


def test_camera_check_names_a_missing_device(tmp_path):
    result = SystemDeviceChecks().check_camera(str(tmp_path / "no-such-camera.avi"))
    assert not result.ok and "could not be opened" in result.message and "Settings → Camera" in result.message


def test_rms_dbfs():
    assert rms_dbfs(np.zeros(100, np.float32)) == float("-inf")
    assert round(rms_dbfs(np.ones(100, np.float32) * 0.5), 1) == -6.0


@needs_pulse
def test_microphone_check_hears_the_speaker_check_through_pulse():
    checks = SystemDeviceChecks()
    player = threading.Thread(target=checks.play_test_tone, args=(None, 440.0, 2.5))
    player.start()
    try:
        heard = checks.check_microphone(None, seconds=1.0)
    finally:
        player.join()
    assert heard.ok, heard.message
    assert heard.level_dbfs > -40


def test_tray_menu_mutes_shows_and_quits(qtbot, config):
    timeline = Timeline()
    controller = TimelineController(timeline)
    window = MainWindow(Settings(), timeline, controller)
    qtbot.addWidget(window)
    tray = Tray(window)
    try:
        tray.mute_action.trigger()
        assert window.mute_button.isChecked() and tray.mute_action.isChecked()
        qtbot.waitUntil(lambda: controller.muted, timeout=5000)
        window.mute_button.click()
        assert not tray.mute_action.isChecked()
        window.hide()
        tray.show_action.trigger()
        assert window.isVisible()
        assert [a.text() for a in tray.menu.actions()] == ["Mute microphone", "Show window", "Quit"]
    finally:
        window.shutdown()


def test_run_app_shows_the_window_and_returns_on_quit(qtbot, config):
    settings = Settings()
    settings.ui.first_run_done = True
    timeline = Timeline()
    seen = {}

    def drive():
        window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.timeline is timeline)
        seen["visible"] = window.isVisible()
        seen["title"] = window.windowTitle()
        window.text_box.setText("hello from run_app")
        window.send_button.click()
        QTimer.singleShot(300, window.quit)

    QTimer.singleShot(200, drive)
    guard = QTimer()  # never hang the suite if the window did not appear; stopped before the next test
    guard.setSingleShot(True)
    guard.timeout.connect(QApplication.instance().quit)
    guard.start(20000)
    try:
        code = run_app(settings, timeline=timeline, settings_path=config / "settings.json")
    finally:
        guard.stop()
    assert code == 0 and seen["title"] == "Venus" and seen["visible"]
    typed = timeline.events(kinds=[Kind.USER_TEXT])
    assert [e.text for e in typed] == ["hello from run_app"]
