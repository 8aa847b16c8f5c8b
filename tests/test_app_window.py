"""The main window on real widgets (offscreen), a real Timeline and a real controller that appends events."""

import os
import shutil
import threading
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPoint, Qt, QThread  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QLineEdit,
    QProgressBar,
)

from app.controller import TimelineController  # noqa: E402
from app.demo import play_demo_conversation  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.theme import apply_theme  # noqa: E402
from app.timeline_model import RowKind, TaskState  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.timeline import Timeline  # noqa: E402
from engine.timeline.events import (  # noqa: E402
    ConfirmationAnswered,
    DelegationDispatched,
    Interruption,
    Kind,
    RuntimeState,
    RuntimeStateName,
    UserText,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    timeline = Timeline()
    controller = TimelineController(timeline)
    win = MainWindow(Settings(), timeline, controller)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.shutdown()


def _events(window, kind):
    return window.timeline.events(kinds=[kind])


def _play_on_engine_thread(timeline, target=play_demo_conversation, *args):
    thread = threading.Thread(target=target, args=(timeline, *args), name="fake-runtime")
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_events_from_an_engine_thread_reach_the_view_on_the_gui_thread(qtbot, window):
    delivered_on = []
    window.bridge.event_received.connect(lambda _e: delivered_on.append(QThread.currentThread()))
    _play_on_engine_thread(window.timeline)
    qtbot.waitUntil(lambda: len(delivered_on) == len(window.timeline), timeout=10000)
    gui = QApplication.instance().thread()
    assert all(thread is gui for thread in delivered_on)
    kinds = [row.kind for row in window.model.rows()]
    assert kinds.count(RowKind.USER) == 4 and kinds.count(RowKind.TASK) == 2
    assert window.state_indicator.text_for_state() == "Listening"


def test_user_actions_run_on_the_controller_thread_never_the_gui_thread(qtbot, window):
    window.text_box.setFocus()
    qtbot.keyClicks(window.text_box, "What time is it?")
    qtbot.keyClick(window.text_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(_events(window, Kind.USER_TEXT)), timeout=5000)
    typed = _events(window, Kind.USER_TEXT)[0]
    assert isinstance(typed, UserText) and typed.text == "What time is it?"
    assert window.text_box.text() == ""
    qtbot.waitUntil(lambda: window.model.rowCount() == 1)
    assert window.model.row(0).typed and window.model.row(0).text == "What time is it?"
    qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(window.bridge.controller.call_threads) == 2, timeout=5000)
    threads = {name for _method, name in window.bridge.controller.call_threads}
    assert threads and all(name.startswith("venus-ui-actions") for name in threads)
    assert threading.main_thread().name not in threads


def test_confirm_and_cancel_buttons_on_task_cards(qtbot, window):
    ids = play_demo_conversation(window.timeline)
    qtbot.waitUntil(lambda: window.tasks.card(ids.waiting_task) is not None)
    card = window.tasks.card(ids.waiting_task)
    qtbot.waitUntil(lambda: card.approve_button.isVisible())
    assert '"path": "~/Desktop/Old screenshots"' in card.arguments.text()  # the exact arguments are shown
    assert card.title.text() == "Delete files"  # the tool's name in words, not its identifier "delete_files"
    qtbot.mouseClick(card.approve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(_events(window, Kind.CONFIRMATION_ANSWERED)), timeout=5000)
    answer = _events(window, Kind.CONFIRMATION_ANSWERED)[0]
    assert (answer.task_id, answer.approved, answer.source) == (ids.waiting_task, True, "ui")
    qtbot.waitUntil(lambda: not card.approve_button.isVisible())
    assert window.model.row(window.model.find(RowKind.TASK, ids.waiting_task)).task_state == TaskState.RUNNING

    window.timeline.append(DelegationDispatched(task_id="slow", tool="search", arguments={"q": "x"}))
    qtbot.waitUntil(lambda: window.tasks.card("slow") is not None)
    slow = window.tasks.card("slow")
    qtbot.mouseClick(slow.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(_events(window, Kind.DELEGATION_CANCELLED)), timeout=5000)
    assert _events(window, Kind.DELEGATION_CANCELLED)[0].task_id == "slow"
    qtbot.waitUntil(lambda: not slow.cancel_button.isVisible())
    done = window.tasks.card(ids.finished_task)
    assert done.progress.value() == 100 and "Saturday 24 °C" in done.result.text()


def test_deny_is_recorded_as_not_approved(qtbot, window):
    ids = play_demo_conversation(window.timeline)
    qtbot.waitUntil(lambda: window.tasks.card(ids.waiting_task) is not None)
    qtbot.mouseClick(window.tasks.card(ids.waiting_task).deny_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(_events(window, Kind.CONFIRMATION_ANSWERED)), timeout=5000)
    answer = _events(window, Kind.CONFIRMATION_ANSWERED)[0]
    assert isinstance(answer, ConfirmationAnswered)
    assert (answer.task_id, answer.approved, answer.source) == (ids.waiting_task, False, "ui")
    qtbot.waitUntil(lambda: window.model.row(window.model.find(RowKind.TASK, ids.waiting_task)).task_state == TaskState.DENIED)


def test_stop_shortcut_cuts_a_streaming_answer(qtbot, window):
    from engine.timeline.events import AssistantToken

    for i, word in enumerate("This answer is still being spoken".split()):
        window.timeline.append(AssistantToken(turn_id="t7", text=word + " ", index=i))
    qtbot.waitUntil(lambda: window.model.rowCount() == 1)
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: bool(_events(window, Kind.INTERRUPTION)), timeout=5000)
    cut: Interruption = _events(window, Kind.INTERRUPTION)[0]
    assert cut.turn_id == "t7" and cut.heard_text.startswith("This answer")
    qtbot.waitUntil(lambda: window.model.row(0).interrupted and not window.model.row(0).streaming)


def test_mute_shortcut_push_to_talk_key_and_state_indicator(qtbot, window):
    qtbot.keyClick(window, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert window.mute_button.isChecked() and window.state_indicator.text_for_state() == "Paused"
    qtbot.waitUntil(lambda: window.bridge.controller.muted, timeout=5000)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyPress(window.text_box, Qt.Key.Key_F9)
    qtbot.waitUntil(lambda: window.state_indicator.state == RuntimeStateName.USER_SPEAKING, timeout=5000)
    qtbot.keyRelease(window.text_box, Qt.Key.Key_F9)
    qtbot.waitUntil(lambda: window.state_indicator.state == RuntimeStateName.LISTENING, timeout=5000)
    states = [e.state for e in _events(window, Kind.RUNTIME_STATE)]
    assert states == [RuntimeStateName.USER_SPEAKING, RuntimeStateName.LISTENING]
    window.timeline.append(RuntimeState(state=RuntimeStateName.THINKING))
    qtbot.waitUntil(lambda: window.state_indicator.text_for_state() == "Thinking · mic paused")


def test_camera_toggle_mark_and_frames_from_a_thread(qtbot, window):
    assert not window.camera.on_mark.isVisible()
    qtbot.mouseClick(window.camera.switch, Qt.MouseButton.LeftButton)
    assert window.camera.on_mark.isVisible()
    qtbot.waitUntil(lambda: window.bridge.controller.camera_on, timeout=5000)
    stale = np.zeros((120, 160, 3), np.uint8)
    stale[:, :, 0] = 255  # BGR blue
    newest = np.zeros((120, 160, 3), np.uint8)
    newest[:, :, 2] = 255  # BGR red
    # the GUI thread waits in join() while all 20 arrive: only the newest may reach the view
    sender = threading.Thread(target=lambda: [window.bridge.post_frame(f) for f in [stale] * 19 + [newest]])
    sender.start()
    sender.join()
    qtbot.waitUntil(lambda: window.camera.frames_shown >= 1, timeout=5000)
    QApplication.processEvents()  # anything still queued would be shown now
    shown = window.camera.image.pixmap().toImage()
    centre = shown.pixelColor(shown.width() // 2, shown.height() // 2)
    assert (centre.red(), centre.green(), centre.blue()) == (255, 0, 0)
    assert window.camera.frames_shown == 1  # stale frames are dropped, never queued up
    qtbot.mouseClick(window.camera.switch, Qt.MouseButton.LeftButton)
    assert not window.camera.on_mark.isVisible() and not window.camera.image.isVisible()  # no preview while off
    with pytest.raises(ValueError, match="HxWx3"):
        window.bridge.post_frame(np.zeros((4, 4, 4), np.uint8))


def test_mic_level_meter_follows_levels_from_a_thread(qtbot, window):
    levels = threading.Thread(target=lambda: [window.bridge.post_mic_level(db) for db in (-60.0, -30.0, -6.0)])
    levels.start()
    levels.join()
    qtbot.waitUntil(lambda: window.level_meter.last_dbfs == -6.0, timeout=5000)
    assert window.level_meter.value() == 90


def test_every_control_has_an_accessible_name(window):
    controls = window.findChildren(QAbstractButton) + window.findChildren(QLineEdit) + window.findChildren(QProgressBar)
    play_demo_conversation(window.timeline)
    QApplication.processEvents()
    controls += window.findChildren(QAbstractButton) + window.findChildren(QProgressBar)
    unnamed = [c for c in controls if c.isVisibleTo(window) and not c.accessibleName()]
    assert len(controls) > 10 and unnamed == []


def test_window_geometry_is_remembered(qtbot, window):
    window.resize(1000, 540)
    window.save_window_state()
    again = MainWindow(Settings(), Timeline(), TimelineController(Timeline()))
    qtbot.addWidget(again)
    try:  # (the width is fitted to the screen, 800 px wide offscreen)
        assert again.height() == 540 and again.width() == min(1000, again.screen().availableGeometry().width() - 2)
    finally:
        again.shutdown()


def _camera_picture():
    """A calm synthetic webcam frame: a gradient wall, a desk and a mug (BGR)."""
    height, width = 360, 480
    frame = np.zeros((height, width, 3), np.uint8)
    frame[:] = np.linspace(90, 200, width, dtype=np.uint8)[None, :, None]
    frame[:, :, 0] = np.clip(frame[:, :, 0].astype(int) + 30, 0, 255)
    frame[260:, :] = (60, 90, 130)  # desk
    frame[200:262, 300:350] = (230, 230, 235)  # mug
    return frame


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_screenshot_mid_conversation(qtbot, tmp_path, monkeypatch, theme):
    """The README's pictures: a stored conversation mid-flow, light and dark, rendered offscreen."""
    from app.widgets import TaskGroup
    from engine.timeline import open_store
    from engine.timeline.events import AsrPartial, UserSpeechStart

    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    app = QApplication.instance()
    apply_theme(app, theme)
    store = open_store(tmp_path / "venus.db")
    for title in ("Trip to Lisbon", "Oven timer and shopping list", "Reading the error on screen"):
        store.new_conversation(title).append(UserText(text=title))
    controller = TimelineController(None, Settings(), store=store)
    window = MainWindow(Settings(), controller.timeline, controller)
    qtbot.addWidget(window)
    try:
        window.resize(1280, 940)
        window.show()
        qtbot.waitExposed(window)
        ids = play_demo_conversation(window.timeline)
        window.timeline.append(RuntimeState(state=RuntimeStateName.USER_SPEAKING))
        window.timeline.append(UserSpeechStart())
        window.timeline.append(AsrPartial(text="and remind me to call Sam at"))
        window.camera.set_on(True)
        window.bridge.post_frame(_camera_picture())
        window.bridge.post_mic_level(-14.0)
        qtbot.waitUntil(lambda: window.camera.frames_shown == 1)
        qtbot.waitUntil(lambda: window.tasks.task_ids(TaskGroup.WAITING) == [ids.waiting_task])
        qtbot.waitUntil(lambda: window.level_meter.value() > 70 and window.captions.live)
        qtbot.waitUntil(lambda: len(window.conversations.ids()) == 4 and window.title.text().startswith("Hi Venus"),
                        timeout=5000)
        first_answer = window.model.index(window.model.find(RowKind.ASSISTANT, "turn-1"))
        window.conversation.scrollTo(first_answer, QAbstractItemView.ScrollHint.PositionAtTop)  # the Markdown answer
        qtbot.wait(50)
        image = window.grab().toImage()
        assert (image.width(), image.height()) == (1280, 940)
        colours = {image.pixel(x, y) for x in range(0, 1280, 37) for y in range(0, 940, 29)}
        assert len(colours) > 8  # a real rendered window, not a blank surface
        background = image.pixelColor(4, 400)
        assert (background.lightness() < 60) == (theme == "dark")
        path = tmp_path / f"main-{theme}.png"
        assert image.save(str(path)) and path.stat().st_size > 10_000
        if os.environ.get("VENUS_UPDATE_SCREENSHOT") == "1":
            (REPO / "docs" / "screenshots").mkdir(parents=True, exist_ok=True)
            shutil.copy(path, REPO / "docs" / "screenshots" / f"main-{theme}.png")
        assert window.conversation.indexAt(QPoint(40, 40)).isValid()
    finally:
        window.shutdown()
        store.close()
        apply_theme(app, "light")


def test_answers_render_as_markdown_and_each_message_has_a_copy_link(qtbot, window):
    from engine.timeline.events import AssistantTurnEnd

    answer = "Here is **the plan**:\n\n- pack the `charger`\n- leave at *nine*"
    window.timeline.append(UserText(text="What's the plan?"))
    window.timeline.append(AssistantTurnEnd(turn_id="t1", text=answer, heard_text=answer))
    qtbot.waitUntil(lambda: window.model.rowCount() == 2)
    delegate = window.conversation.delegate
    doc = delegate._document(window.model.row(1), 400)
    shown = doc.toPlainText()
    assert "the plan" in shown and "**" not in shown and "`" not in shown  # Markdown, not its source
    bold = doc.find("the plan")
    assert bold.charFormat().fontWeight() >= 600 and doc.find("charger").charFormat().fontFixedPitch()
    assert doc.findBlockByNumber(2).textList() is not None  # the list is a real list
    raw = delegate._document(window.model.row(1).__class__(kind=RowKind.ASSISTANT, key="x",
                                                           text='<img src="/etc/x.png"> <h1>big</h1>'), 400)
    assert '<img src="/etc/x.png">' in raw.toPlainText()  # raw HTML from the model is shown as text, never run

    copied = []
    window.conversation.copied.connect(copied.append)
    index = window.model.index(1)
    _bubble, link = delegate.geometry(window.model.row(1), window.conversation.visualRect(index))
    qtbot.mouseClick(window.conversation.viewport(), Qt.MouseButton.LeftButton, pos=link.center().toPoint())
    assert copied == [answer] and QApplication.clipboard().text() == answer  # the Markdown source is copied
    window.conversation.setCurrentIndex(window.model.index(0))
    window.conversation.setFocus()
    qtbot.keyClick(window.conversation, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert copied[-1] == "What's the plan?"


def test_a_short_bubbles_speaker_and_copy_link_do_not_run_together(qtbot, window):
    # Found on a screenshot: a typed "Hi" showed "You (typed)Copy", the link drawn against the speaker's name
    from PySide6.QtGui import QFont, QFontMetrics

    from engine.timeline.events import AssistantTurnEnd

    large = QFont(window.conversation.font())
    large.setPointSizeF(14)  # a desktop with large fonts (the screenshot's theme font was larger than the default)
    window.conversation.setFont(large)
    window.timeline.append(UserText(text="Hi"))
    window.timeline.append(AssistantTurnEnd(turn_id="t1", text="Okay.", heard_text="Okay."))
    qtbot.waitUntil(lambda: window.model.rowCount() == 2)
    delegate = window.conversation.delegate
    bold = QFont(window.conversation.font())
    bold.setBold(True)
    for number, label in ((0, "You (typed)"), (1, "Venus")):
        row = window.model.row(number)
        bubble, link = delegate.geometry(row, window.conversation.visualRect(window.model.index(number)))
        label_right = bubble.left() + 10 + QFontMetrics(bold).horizontalAdvance(label)
        copy_left = link.right() - window.conversation.fontMetrics().horizontalAdvance("Copy")  # drawn right-aligned
        assert copy_left - label_right >= 8, (label, label_right, copy_left)


def test_live_captions_show_the_words_heard_while_the_user_speaks(qtbot, window):
    from engine.timeline.events import AsrFinal, AsrPartial, UserSpeechStart

    window.timeline.append(RuntimeState(state=RuntimeStateName.USER_SPEAKING))
    window.timeline.append(UserSpeechStart())
    window.timeline.append(AsrPartial(text="remind me to"))
    qtbot.waitUntil(lambda: window.captions.live and "remind me to" in window.captions.text())
    assert window.state_indicator.text_for_state() == "Hearing you"
    window.timeline.append(AsrPartial(text="remind me to call Sam"))
    qtbot.waitUntil(lambda: "remind me to call Sam" in window.captions.text())
    window.timeline.append(AsrFinal(text="Remind me to call Sam."))
    qtbot.waitUntil(lambda: not window.captions.live)
    assert window.model.row(0).text == "Remind me to call Sam."


@pytest.mark.parametrize(("state", "words"), [
    (RuntimeStateName.LISTENING, "Listening"), (RuntimeStateName.USER_SPEAKING, "Hearing you"),
    (RuntimeStateName.THINKING, "Thinking"), (RuntimeStateName.SPEAKING, "Speaking"),
])
def test_state_indicator_words_and_paused_while_muted(qtbot, window, state, words):
    window.timeline.append(RuntimeState(state=state))
    qtbot.waitUntil(lambda: window.state_indicator.text_for_state() == words)
    colour = window.state_indicator.colour()
    window.mute_button.click()
    expected = "Paused" if state in (RuntimeStateName.LISTENING, RuntimeStateName.USER_SPEAKING) else f"{words} · mic paused"
    assert window.state_indicator.text_for_state() == expected
    assert window.state_indicator.accessibleName() == f"Assistant state: {expected}"
    assert (window.state_indicator.colour() == colour) == (expected != "Paused")


def test_a_click_on_push_to_talk_listens_until_the_next_click(qtbot, window):
    controller = window.bridge.controller
    qtbot.mouseClick(window.talk_button, Qt.MouseButton.LeftButton)
    assert window.talk_button.isDown() and "click to finish" in window.talk_button.text()
    assert window.state_indicator.text_for_state() == "Hearing you" and window.captions.live
    qtbot.waitUntil(lambda: controller.push_to_talk_down, timeout=5000)
    qtbot.mouseClick(window.talk_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not controller.push_to_talk_down, timeout=5000)
    assert not window.talk_button.isDown() and window.talk_button.text() == "Push to talk"
    qtbot.waitUntil(lambda: window.state_indicator.text_for_state() == "Listening")
    states = [e.state for e in _events(window, Kind.RUNTIME_STATE)]
    assert states == [RuntimeStateName.USER_SPEAKING, RuntimeStateName.LISTENING]


def test_tasks_panel_groups_waiting_running_and_done(qtbot, window):
    from app.widgets import TaskGroup

    ids = play_demo_conversation(window.timeline)
    qtbot.waitUntil(lambda: window.tasks.card(ids.waiting_task) is not None)
    assert window.tasks.task_ids(TaskGroup.WAITING) == [ids.waiting_task]
    assert window.tasks.task_ids(TaskGroup.DONE) == [ids.finished_task]
    assert window.tasks.task_ids(TaskGroup.RUNNING) == []
    assert window.tasks.sections[TaskGroup.WAITING].header.text() == "Waiting for you · 1"
    qtbot.mouseClick(window.tasks.card(ids.waiting_task).approve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.tasks.group_of(ids.waiting_task) == TaskGroup.RUNNING, timeout=5000)
    assert window.tasks.sections[TaskGroup.WAITING].empty.isVisibleTo(window)
    window.timeline.append(DelegationDispatched(task_id="t-new", tool="search", arguments={"q": "x"}))
    qtbot.waitUntil(lambda: window.tasks.task_ids(TaskGroup.RUNNING) == ["t-new", ids.waiting_task])
    row = window.model.row(window.model.find(RowKind.TASK, "t-new"))
    assert row.kind == RowKind.TASK  # the conversation keeps a one-line mention of the task


def test_help_menu_shortcuts_and_about(qtbot, window):
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus == ["&Venus", "&Conversation", "&Help"]
    qtbot.keyClick(window, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: getattr(window, "help_box", None) is not None and window.help_box.isVisible())
    text = window.help_box.text()
    for keys in ("Ctrl+N", "Ctrl+F", "Ctrl+,", "Esc", "Ctrl+M", "F9"):
        assert keys in text
    window.help_box.close()
    window.about_action.trigger()
    qtbot.waitUntil(lambda: window.help_box.isVisible() and "full-duplex" in window.help_box.text())
    window.help_box.close()
    shortcuts = {a.shortcut().toString() for a in window.actions()}
    assert {"Ctrl+N", "Ctrl+F", "Ctrl+,", "Esc", "Ctrl+K", "F1", "F2", "Ctrl+Q", "Ctrl+Shift+E"} <= shortcuts


def test_camera_preview_takes_room_only_while_on(qtbot, window):
    assert not window.camera.image.isVisibleTo(window)
    closed_height = window.camera.sizeHint().height()
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.camera.is_on and window.camera.image.isVisibleTo(window)
    assert window.camera.sizeHint().height() > closed_height + 100
    qtbot.waitUntil(lambda: window.bridge.controller.camera_on, timeout=5000)


def test_tasks_panel_keeps_only_the_latest_finished_cards(qtbot, window):
    from app.demo import run_task
    from app.widgets import TaskGroup
    from app.widgets.tasks_panel import DONE_SHOWN

    for n in range(DONE_SHOWN + 3):
        run_task(window.timeline, f"job-{n}", "hash_file", {"n": n}, ["reading"], "ok")
    qtbot.waitUntil(lambda: window.model.find(RowKind.TASK, f"job-{DONE_SHOWN + 2}") is not None
                    and window.model.row(window.model.find(RowKind.TASK, f"job-{DONE_SHOWN + 2}")).task_state
                    == TaskState.DONE)
    shown = window.tasks.task_ids(TaskGroup.DONE)
    assert shown == [f"job-{n}" for n in range(DONE_SHOWN + 2, 2, -1)]  # newest first, the oldest three dropped
    assert sum(r.kind == RowKind.TASK for r in window.model.rows()) == DONE_SHOWN + 3  # all stay in the conversation


@pytest.mark.parametrize("dark", [False, True])
def test_one_type_scale_and_spacing_system_in_both_themes(dark):
    import re

    from app.theme import DARK, LIGHT, SPACE, TYPE_SCALE, style_sheet

    sheet = style_sheet(dark)
    sizes = {int(n) for n in re.findall(r"font-size:\s*(\d+)px", sheet)}
    assert sizes and sizes <= set(TYPE_SCALE.values())  # no font size outside the scale
    gaps = {int(n) for n in re.findall(r"(?<![-\w])(\d+)px", re.sub(r"(font-size|border-radius|max-height):[^;]*;", "", sheet))}
    assert gaps <= set(SPACE) | {1}  # 1 px borders; every gap and padding is on the spacing scale
    colours = DARK if dark else LIGHT
    assert colours.window in sheet and colours.accent in sheet and (LIGHT if dark else DARK).window not in sheet


def test_a_session_without_a_microphone_says_so_instead_of_a_still_meter(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))

    class TypedOnly(TimelineController):
        def microphone_available(self) -> bool:
            return False

    timeline = Timeline()
    window = MainWindow(Settings(), timeline, TypedOnly(timeline))
    qtbot.addWidget(window)
    try:
        assert window.mic_label.text() == "No microphone: type to Venus"
        assert not window.level_meter.isEnabled() and not window.talk_button.isEnabled()
        assert "venus doctor" in window.level_meter.toolTip()
    finally:
        window.shutdown()
    assert MainWindow.__init__ and "No microphone" not in _plain_window_mic_label(qtbot, tmp_path)


def _plain_window_mic_label(qtbot, tmp_path) -> str:
    timeline = Timeline()
    window = MainWindow(Settings(), timeline, TimelineController(timeline))  # says nothing: the meter is shown
    qtbot.addWidget(window)
    try:
        return window.mic_label.text()
    finally:
        window.shutdown()


def test_level_meter_falls_back_when_levels_stop(qtbot, window):
    window.bridge.post_mic_level(-6.0)
    qtbot.waitUntil(lambda: window.level_meter.value() == 90)
    qtbot.waitUntil(lambda: window.level_meter.value() == 0, timeout=4000)  # 54 dB at 30 dB/s, no level frozen
