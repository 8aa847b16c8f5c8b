"""First-run wizard, device checks, tray and run_app, on real widgets and real devices where the machine has them."""

import os
import shutil
import threading
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QWizard  # noqa: E402

from app.controller import TimelineController  # noqa: E402
from app.device_checks import SystemDeviceChecks, rms_dbfs  # noqa: E402
from app.main_window import MainWindow, run_app  # noqa: E402
from app.theme import apply_theme  # noqa: E402
from app.tray import Tray  # noqa: E402
from app.wizard import FirstRunWizard, WizardSources  # noqa: E402
from app.wizard_choices import Choice, Machine, asr_languages, recommend_model  # noqa: E402
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


REPO = Path(__file__).resolve().parents[1]
PAGES = ["welcome", "microphone", "speaker", "voice", "language", "model", "camera", "tools", "summary"]


def _wizard(qtbot, settings, config, **kwargs) -> FirstRunWizard:
    wizard = FirstRunWizard(settings, settings_path=config / "settings.json", **kwargs)
    qtbot.addWidget(wizard)
    wizard.show()
    return wizard


def _go_to(wizard, page) -> None:
    while wizard.currentPage() is not page:
        wizard.next()


def _check(qtbot, page, timeout=30000):
    page.run_check()
    qtbot.waitUntil(lambda: page.result is not None, timeout=timeout)
    return page.result


def _pick(box, value) -> None:
    index = box.findData(value)
    assert index >= 0, f"{value!r} not offered"
    box.setCurrentIndex(index)


def _grab(page_name: str, wizard, folder: Path) -> Path:
    """Render the wizard as it stands into a PNG; assert it is a real rendering, not a blank surface."""
    image = wizard.grab().toImage()
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 4, f"the {page_name} page rendered blank"
    path = folder / f"wizard-{PAGES.index(page_name) + 1}-{page_name}.png"
    assert image.save(str(path)) and path.stat().st_size > 5_000
    return path


@needs_pulse
def test_first_run_wizard_tests_each_choice_and_saves_them(qtbot, config):
    """On working devices every page's check passes and says so, the microphone's meter moves while it records,
    the voice preview is heard by the microphone, and Finish saves the choices; each page is rendered to a PNG."""
    apply_theme(QApplication.instance(), "light")
    settings = Settings()
    video = str(_video(config / "camera.avi"))
    wizard = _wizard(qtbot, settings, config)
    shots = config / "shots"
    shots.mkdir()
    _grab("welcome", wizard, shots)
    checks = SystemDeviceChecks()

    _go_to(wizard, wizard.microphone)
    levels = []
    wizard.microphone.level.connect(levels.append)
    # the microphone check hears a tone played meanwhile (PulseAudio's virtual mic hears its virtual speaker)
    tone = threading.Thread(target=checks.play_test_tone, args=(None, 440.0, 2.5))
    tone.start()
    try:
        heard = _check(qtbot, wizard.microphone)
    finally:
        tone.join()
    assert heard.ok and heard.level_dbfs > -40, heard.message
    assert len(levels) >= 5 and max(levels) > -40, "the meter moved while recording, not only at the end"
    assert wizard.microphone.meter.value() > 0 and wizard.microphone.verdict.text() == "✔ " + heard.message
    _grab("microphone", wizard, shots)

    _go_to(wizard, wizard.speaker)
    played = _check(qtbot, wizard.speaker)
    assert played.ok and "440 Hz" in played.message and wizard.speaker.button.isEnabled()
    _grab("speaker", wizard, shots)

    _go_to(wizard, wizard.voice)
    _pick(wizard.voice.voice_box, "espeak:en-gb")
    listening = {}
    mic = threading.Thread(target=lambda: listening.update(r=checks.check_microphone(None, seconds=1.2)))
    wizard.voice.run_check()
    mic.start()
    qtbot.waitUntil(lambda: wizard.voice.result is not None, timeout=30000)
    mic.join()
    assert wizard.voice.result.ok and "en-gb said" in wizard.voice.result.message, wizard.voice.result.message
    assert listening["r"].level_dbfs > -40, "the preview was played aloud, not only synthesized"
    _grab("voice", wizard, shots)

    _go_to(wizard, wizard.language)
    _grab("language", wizard, shots)

    _go_to(wizard, wizard.models)  # recommends and checks by itself
    qtbot.waitUntil(lambda: wizard.models.result is not None and wizard.models.recommendation is not None
                    and wizard.models.catalog.advice is not None, timeout=30000)
    assert wizard.models.result.ok, wizard.models.result.message
    assert wizard.models.model() == wizard.models.recommendation.model_id == "smollm2-135m-instruct-q4_1"
    assert "The catalog recommends" in wizard.models.catalog_note.text(), wizard.models.catalog_note.text()
    _grab("model", wizard, shots)

    _go_to(wizard, wizard.camera)
    assert not wizard.camera.enabled_box.isChecked(), "the camera is opt-in"
    wizard.camera.enabled_box.setChecked(True)
    wizard.camera.device_edit.setText(video)
    seen = _check(qtbot, wizard.camera)
    assert seen.ok and "160×120" in seen.message
    _grab("camera", wizard, shots)

    _go_to(wizard, wizard.tools)
    qtbot.waitUntil(lambda: wizard.tools.rows is not None, timeout=30000)
    _grab("tools", wizard, shots)
    wizard.next()
    assert wizard.currentPage() is wizard.summary
    summary = wizard.summary.text.text()
    assert "Voice: espeak-ng en-gb" in summary and f"Camera: on, {video!r}" in summary
    _grab("summary", wizard, shots)

    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted
    saved = load_settings(config / "settings.json").settings
    assert saved.ui.first_run_done
    assert (saved.tts.engine, saved.tts.voice, saved.tts.espeak_voice) == ("espeak", "en-gb", "en-gb")
    assert saved.camera.enabled and saved.camera.device == video
    assert saved.llm.model == "smollm2-135m-instruct-q4_1" and saved.asr.language == "en"
    assert sorted(p.name for p in shots.iterdir()) == sorted(f"wizard-{i}-{n}.png" for i, n in enumerate(PAGES, 1))
    update = os.environ.get("VENUS_UPDATE_SCREENSHOT") == "1"
    (REPO / "docs" / "screenshots").mkdir(parents=True, exist_ok=True)
    for shot in shots.iterdir():
        if update or not (REPO / "docs" / "screenshots" / shot.name).exists():  # as the settings screenshots do
            shutil.copy(shot, REPO / "docs" / "screenshots" / shot.name)


def test_every_choice_is_saved_into_the_settings(qtbot, config):
    """Devices, voice, language, a model other than the recommended one and the camera go into the file."""
    inputs = [Choice(None, "System default input"), Choice("USB Mic", "USB Mic")]
    outputs = [Choice(None, "System default output"), Choice("Headphones", "Headphones")]
    langs = [Choice("en", "English"), Choice("de", "German")]  # as if a multilingual model were installed
    wizard = _wizard(qtbot, Settings(), config, sources=WizardSources(
        inputs=lambda: inputs, outputs=lambda: outputs, languages=lambda _asr_model: langs))
    _pick(wizard.microphone.device_box, "USB Mic")
    _pick(wizard.speaker.device_box, "Headphones")
    _pick(wizard.voice.voice_box, "espeak:en-us")
    _pick(wizard.language.language_box, "de")
    _go_to(wizard, wizard.models)
    qtbot.waitUntil(lambda: wizard.models.recommendation is not None, timeout=30000)
    other = next(o.id for o in wizard.models.recommendation.options if o.id != wizard.models.recommendation.model_id)
    _pick(wizard.models.model_box, other)
    wizard.camera.device_edit.setText("2")
    _go_to(wizard, wizard.summary)
    wizard.button(QWizard.WizardButton.FinishButton).click()
    saved = load_settings(config / "settings.json").settings
    assert saved.ui.first_run_done
    assert (saved.audio.input_device, saved.audio.output_device) == ("USB Mic", "Headphones")
    assert (saved.tts.engine, saved.tts.voice) == ("espeak", "en-us")
    assert saved.asr.language == saved.conversation.language == "de"
    assert saved.llm.model == other
    assert saved.camera.device == 2 and not saved.camera.enabled, "the camera stays off unless ticked"
    assert saved.vad == Settings().vad and saved.harness == Settings().harness, "nothing else changed"


def test_a_voice_choice_reopens_as_chosen(qtbot, config):
    """The wizard shows the settings in force: a Piper voice, or an espeak voice, preselected."""
    settings = Settings()
    settings.tts.engine = "espeak"
    settings.tts.voice = "en-gb"
    wizard = _wizard(qtbot, settings, config)
    assert wizard.voice.voice() == "espeak:en-gb"
    assert _wizard(qtbot, Settings(), config).voice.voice() == "piper:piper-en-us-joe-medium"


def test_languages_no_installed_model_hears_are_greyed_with_the_reason(qtbot, config):
    wizard = _wizard(qtbot, Settings(), config)
    box = wizard.language.language_box
    model = box.model()
    english, german = box.findData("en"), box.findData("de")
    assert model.item(english).isEnabled() and box.currentIndex() == english
    assert not model.item(german).isEnabled()
    assert "needs a multilingual speech model (whisper-tiny-en is not)" in box.itemText(german)
    assert any("written in English for now" in label.text() for label in wizard.language.findChildren(QLabel))


def test_a_model_set_by_path_stays_chosen(qtbot, config):
    settings = Settings()
    settings.llm.model = str(config / "my-own.gguf")
    wizard = _wizard(qtbot, settings, config)
    _go_to(wizard, wizard.models)
    qtbot.waitUntil(lambda: wizard.models.recommendation is not None, timeout=30000)
    assert wizard.models.model() == settings.llm.model
    assert wizard.models.model_box.currentText().endswith("(your current setting)")
    assert wizard.chosen_settings().llm.model == settings.llm.model


def test_languages_follow_the_speech_model_in_use():
    """whisper-tiny-en hears English only; a model given by path is taken at its word."""
    assert asr_languages("whisper-tiny-en") == {"en"}
    assert {"en", "de", "fr"} <= asr_languages("/models/whisper-small")


def test_model_recommendation_follows_the_cores_and_memory():
    """The largest installed chat model whose weights fit the machine; a base model only when no chat model fits."""
    roomy = recommend_model(Machine(ram_bytes=16 * 10**9, cores=8))
    ids = {o.id: o for o in roomy.options}
    assert {"smollm2-135m-instruct-q4_1", "gemma3-270m-q4_k_m"} <= set(ids)
    assert ids["smollm2-135m-instruct-q4_1"].chat and not ids["gemma3-270m-q4_k_m"].chat
    assert roomy.model_id == "smollm2-135m-instruct-q4_1", "a base model is not preferred over a chat model"
    assert "8 cores, 16.0 GB of memory" in roomy.reason and "no model catalog" not in roomy.reason
    tiny = recommend_model(Machine(ram_bytes=300 * 10**6, cores=1))  # 75 MB of weights at most
    assert not any(o.fits for o in tiny.options)
    assert tiny.model_id == min(tiny.options, key=lambda o: o.size_bytes).id
    assert tiny.reason.startswith("None of the installed models fits this machine (1 core, 0.3 GB")


def test_tools_page_says_what_runs_what_asks_and_what_is_off(qtbot, config):
    """The summary comes from the harness with the settings in force: an override shows at once."""
    settings = Settings()
    settings.harness.permissions = {"create_note": "ask"}
    wizard = _wizard(qtbot, settings, config)
    _go_to(wizard, wizard.tools)
    qtbot.waitUntil(lambda: wizard.tools.rows is not None, timeout=30000)
    allow, ask, off = wizard.tools.summary.text().split("\n\n")
    assert allow.startswith("Runs without asking") and "current time" in allow and "create note" not in allow
    assert ask.startswith("Asks you first") and "open" in ask and "create note" in ask
    assert off.startswith("Off") and "run shell command" in off
    wizard.next()
    assert "Tools: clear list, create note, open" in wizard.summary.text.text()  # "clear list" asks: it empties one


def test_a_failed_check_shows_the_fix_and_does_not_block_finishing(qtbot, config):
    """A camera that is not there fails its check with the fix on the page, and the wizard still finishes."""
    settings = Settings()
    settings.camera.device = str(config / "unplugged.avi")
    wizard = _wizard(qtbot, settings, config)
    _go_to(wizard, wizard.camera)
    result = _check(qtbot, wizard.camera)
    assert not result.ok
    verdict = wizard.camera.verdict.text()
    assert verdict.startswith("✘ ") and "unplugged.avi" in verdict and "Settings → Camera" in verdict
    _go_to(wizard, wizard.summary)
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


def test_a_voice_that_cannot_speak_says_so_and_what_to_do():
    result = SystemDeviceChecks().preview_voice("espeak:xx-venus-none", None, "Hello.")
    assert not result.ok and "xx-venus-none could not speak" in result.message
    assert result.message.endswith("Choose another voice.")


@needs_pulse
def test_the_piper_voice_preview_is_heard():
    """The default neural voice previews through the speaker: the microphone (Pulse's loopback) hears it."""
    checks = SystemDeviceChecks()
    levels: list[float] = []  # each tenth of a second's level: the voice is heard whenever synthesis lets it start
    # (a 2 s window's average missed it once on a loaded machine, where loading and synthesis took about that long)
    listener = threading.Thread(target=lambda: checks.check_microphone(None, seconds=8.0, on_level=levels.append))
    listener.start()
    try:
        said = checks.preview_voice("piper:piper-en-us-joe-medium", None, "Hello, I'm Venus. This is how I sound.")
    finally:
        listener.join()
    assert said.ok and said.message.startswith("piper-en-us-joe-medium said: “Hello, I'm Venus."), said.message
    assert levels and max(levels) > -40, levels


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
    assert code == 0 and seen["title"].endswith("Venus") and seen["visible"]
    typed = timeline.events(kinds=[Kind.USER_TEXT])
    assert [e.text for e in typed] == ["hello from run_app"]
