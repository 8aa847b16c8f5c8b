"""The app on the real engine: a WAV file as the microphone, the real runtime, LLM, voice and harness.

The spoken question's transcript and Venus's reply appear on the view; delegated tasks (dispatched through
the session's real harness) show their card at 100 % with the result, and an 'ask' tool waits for the click.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from app.session_controller import SessionController  # noqa: E402
from app.timeline_model import RowKind, TaskState  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.timeline.events import Kind  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def engine_window(qtbot, speech, tmp_path):
    wav, _ = speech("What is the capital of France?")
    settings = Settings()
    settings.llm.n_threads = 1
    settings.llm.max_tokens = 40
    settings.llm.temperature = 0.0
    settings.harness.permissions = {"create_note": "ask"}
    controller = SessionController(None, settings, mic=wav, speaker=tmp_path / "venus-said.wav", persist=False)
    window = MainWindow(settings, controller.timeline, controller)
    window.levels_seen = []
    window.bridge.mic_level.connect(window.levels_seen.append)
    qtbot.addWidget(window)
    window.show()
    yield window, controller
    window.shutdown()


def _rows(window, kind):
    return [r for r in window.model.rows() if r.kind == kind]


def test_wav_microphone_transcript_reply_and_tasks_on_the_view(qtbot, engine_window):
    window, controller = engine_window

    def heard_and_answered():
        heard = " ".join(r.text for r in _rows(window, RowKind.USER) if not r.streaming).lower()
        return "france" in heard and any(r.text.strip() and not r.streaming for r in _rows(window, RowKind.ASSISTANT))

    try:
        qtbot.waitUntil(heard_and_answered, timeout=120_000)
    except Exception:
        rows = [(r.kind, r.text, r.streaming) for r in window.model.rows()]
        kinds = [str(e.kind) for e in controller.timeline.events()][-30:]
        pytest.fail(f"no transcript with 'France' and a finished reply; rows {rows}; last events {kinds}")
    ends = controller.timeline.events(kinds=[Kind.ASSISTANT_TURN_END])
    reply = _rows(window, RowKind.ASSISTANT)[0]
    assert reply.text == ends[0].text  # the view shows exactly what the engine generated
    assert max(window.levels_seen) > -40  # the microphone's real levels reached the meter
    assert window.mic_label.text() == "Microphone" and window.talk_button.isEnabled()

    harness = controller.session.harness
    done_id = harness.submit("calculate", {"expression": "17.5 * 12 / 100"})
    qtbot.waitUntil(lambda: window.tasks.card(done_id) is not None
                    and window.tasks.card(done_id).progress.value() == 100, timeout=60_000)
    card = window.tasks.card(done_id)
    assert "2.1" in card.result.text() and not card.cancel_button.isVisible()

    ask_id = harness.submit("create_note", {"text": "Buy oat milk", "title": "Shopping"})
    qtbot.waitUntil(lambda: window.tasks.card(ask_id) is not None
                    and window.tasks.card(ask_id).approve_button.isVisible(), timeout=60_000)
    ask = window.tasks.card(ask_id)
    assert '"text": "Buy oat milk"' in ask.arguments.text()
    assert window.model.row(window.model.find(RowKind.TASK, ask_id)).task_state == TaskState.WAITING_CONFIRMATION
    qtbot.mouseClick(ask.approve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model.row(window.model.find(RowKind.TASK, ask_id)).task_state == TaskState.DONE,
                    timeout=60_000)
    assert "Shopping" in ask.result.text()
    answered = controller.timeline.events(kinds=[Kind.CONFIRMATION_ANSWERED])
    assert [(e.task_id, e.approved, e.source) for e in answered] == [(ask_id, True, "ui")]


def test_a_typed_reminder_shows_its_card_and_venus_says_it_when_it_fires(qtbot, tmp_path):
    import numpy as np
    import soundfile as sf

    quiet = tmp_path / "quiet.wav"
    sf.write(quiet, np.zeros(16000 * 60, np.float32), 16000)
    settings = Settings()
    settings.llm.n_threads = 1
    controller = SessionController(None, settings, mic=quiet, speaker=tmp_path / "venus-said.wav", persist=False)
    window = MainWindow(settings, controller.timeline, controller)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.keyClicks(window.text_box, "Remind me in two seconds to stretch")
        qtbot.mouseClick(window.send_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(controller.timeline.events(kinds=[Kind.DELEGATION_DISPATCHED])), timeout=30_000)
        task_id = controller.timeline.events(kinds=[Kind.DELEGATION_DISPATCHED])[0].task_id
        qtbot.waitUntil(lambda: window.tasks.card(task_id) is not None
                        and window.tasks.card(task_id).progress.value() == 100, timeout=30_000)
        said = lambda: [r.text for r in _rows(window, RowKind.ASSISTANT) if not r.streaming]  # noqa: E731
        qtbot.waitUntil(lambda: any("remind you to stretch" in t for t in said()), timeout=30_000)
        qtbot.waitUntil(lambda: any("a reminder: stretch" in t for t in said()), timeout=30_000)
    finally:
        window.shutdown()
    dispatched = controller.timeline.events(kinds=[Kind.DELEGATION_DISPATCHED])
    assert [(e.tool, e.arguments) for e in dispatched] == [("set_timer", {"seconds": 2.0, "text": "stretch"})]


def test_switching_conversations_reopens_the_session_on_the_chosen_timeline(qtbot, tmp_path, monkeypatch):
    """New chat and picking an older one continue the real session on that stored timeline (the LLM's context)."""
    monkeypatch.setenv("VENUS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    settings = Settings()
    settings.llm.n_threads = 1
    settings.llm.max_tokens = 8
    controller = SessionController(None, settings, harness=False)
    window = MainWindow(settings, controller.timeline, controller)
    qtbot.addWidget(window)
    window.show()
    try:
        first = controller.timeline.conversation_id
        assert window.mic_label.text() == "No microphone: type to Venus"  # a text-only session says so
        window.text_box.setText("My cat is called Miso")
        window.send_typed_text()
        qtbot.waitUntil(lambda: bool(controller.timeline.events(kinds=[Kind.ASSISTANT_TURN_END])), timeout=60_000)
        backend = controller.session.shared.backend
        window.new_chat()
        qtbot.waitUntil(lambda: controller.timeline.conversation_id != first
                        and window.timeline is controller.timeline, timeout=60_000)
        assert window.model.rowCount() == 0 and controller.session.shared.backend is backend  # models kept
        qtbot.waitUntil(lambda: len(window.conversations.ids()) == 2, timeout=10_000)
        window.open_conversation(first)
        qtbot.waitUntil(lambda: controller.timeline.conversation_id == first and window.timeline is controller.timeline,
                        timeout=60_000)
        said = [m.content for m in controller.session.conversation.messages() if m.role == "user"]
        assert any("Miso" in text for text in said)  # the reopened runtime's context is that conversation
        assert any(r.text == "My cat is called Miso" for r in _rows(window, RowKind.USER))
    finally:
        window.shutdown()


@pytest.mark.audio
@pytest.mark.skipif(os.environ.get("VENUS_TEST_AUDIO") != "pulse",
                    reason="needs the PulseAudio test server: run through scripts/run-tests.sh")
def test_the_level_meter_moves_while_someone_speaks_into_the_sound_card(qtbot, speech, tmp_path, monkeypatch):
    """The desktop app's own path: PortAudio microphone (PulseAudio's virtual mic) -> session -> bridge -> meter."""
    import subprocess

    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    wav, _ = speech("Hello Venus, can you hear me? I am testing the microphone level.")
    settings = Settings()
    settings.llm.n_threads = 1
    settings.llm.max_tokens = 8
    controller = SessionController(None, settings, devices=True, persist=False, harness=False)
    window = MainWindow(settings, controller.timeline, controller)
    qtbot.addWidget(window)
    window.show()
    shown: list[int] = []
    window.bridge.mic_level.connect(lambda _db: shown.append(window.level_meter.value()))
    try:
        qtbot.waitUntil(lambda: len(shown) >= 5, timeout=10_000)  # levels flow before anyone speaks
        before = len(shown)
        player = subprocess.Popen(["paplay", "-d", "vsink", str(wav)])
        try:  # (the test sound server may be shared: judge the loudest level while the speech plays)
            qtbot.waitUntil(lambda: max(shown[before:], default=0) >= 40, timeout=20_000)
        except Exception:
            pytest.fail(f"the meter did not rise while speech played: {shown[:before][-5:]} then {shown[before:][:40]}")
        player.wait(timeout=30)
    finally:
        window.shutdown()
