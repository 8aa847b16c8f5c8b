"""Stored conversations in the window, on a real SQLite file: list, new, switch, rename, delete, search, export."""

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox  # noqa: E402

from app.controller import TimelineController  # noqa: E402
from app.demo import play_demo_conversation  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.timeline_model import RowKind  # noqa: E402
from engine.errors import ConversationNotFound  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.timeline import open_store  # noqa: E402
from engine.timeline.events import AssistantTurnEnd, Kind, UserText  # noqa: E402


def test_store_deletes_a_conversation_and_its_events(tmp_path):
    path = tmp_path / "venus.db"
    with open_store(path) as store:
        keep = store.new_conversation("keep")
        gone = store.new_conversation("gone")
        keep.append(UserText(text="stays"))
        gone.append(UserText(text="goes"))
        store.delete_conversation(gone.conversation_id)  # live: stops being persisted, then deleted
        gone.append(UserText(text="after the delete"))  # written nowhere
        assert [c.title for c in store.list_conversations()] == ["keep"]
        with pytest.raises(ConversationNotFound):
            store.delete_conversation(gone.conversation_id)
        store.set_title(keep.conversation_id, "renamed")
    with open_store(path) as store:
        assert [(c.title, c.event_count) for c in store.list_conversations()] == [("renamed", 1)]
        with pytest.raises(ConversationNotFound):
            store.open_conversation(gone.conversation_id)


def answer_modal(act, timeout_ms: int = 5000) -> list[str]:
    """Answer the next modal dialog with `act(dialog)` once it is open; returns [what it said] afterwards."""
    seen: list[str] = []
    waited = [0]

    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or not dialog.isVisible():
            waited[0] += 20
            if waited[0] < timeout_ms:
                QTimer.singleShot(20, poll)
            return
        if isinstance(dialog, QMessageBox):
            seen.append(dialog.text())
        elif isinstance(dialog, QFileDialog):
            seen.append(dialog.selectedFiles()[0] if dialog.selectedFiles() else "")
        act(dialog)

    QTimer.singleShot(0, poll)
    return seen


@pytest.fixture
def stored(qtbot, tmp_path, monkeypatch):
    """A window on a TimelineController over a real conversation database holding one older conversation."""
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    store = open_store(tmp_path / "venus.db")
    older = store.new_conversation("Lunch plans with Sam")
    older.append(UserText(text="Where shall we have lunch?"))
    older.append(AssistantTurnEnd(turn_id="o1", text="How about **the noodle bar**?", heard_text="How about"))
    store.close_conversation(older.conversation_id)
    controller = TimelineController(None, Settings(), store=store)
    window = MainWindow(Settings(), controller.timeline, controller)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: len(window.conversations.ids()) == 2, timeout=5000)
    window.older_id = older.conversation_id
    yield window
    window.shutdown()
    store.close()


def test_new_chat_switch_and_typing_persist_in_the_chosen_conversation(qtbot, stored, tmp_path):
    window = stored
    first = window.timeline.conversation_id
    play_demo_conversation(window.timeline)
    qtbot.waitUntil(lambda: window.conversations.title_of(first) == "Hi Venus, what's on my plate…", timeout=5000)
    assert window.title.text() == "Hi Venus, what's on my plate…"  # named after the first words said

    window.conversations.list.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(window.conversations.ids()) == 3, timeout=5000)
    assert window.timeline.conversation_id not in (first, window.older_id) and window.model.rowCount() == 0

    older_row = window.conversations.ids().index(window.older_id)
    item = window.conversations.list.item(older_row)
    rect = window.conversations.list.visualItemRect(item)
    qtbot.mouseClick(window.conversations.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.timeline.conversation_id == window.older_id, timeout=5000)
    qtbot.waitUntil(lambda: [r.kind for r in window.model.rows()] == [RowKind.USER, RowKind.ASSISTANT])
    assert window.title.text() == "Lunch plans with Sam"
    qtbot.keyClicks(window.text_box, "Make it one o'clock")
    qtbot.keyClick(window.text_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.model.rowCount() == 3, timeout=5000)
    store = window.bridge.controller.store
    store.flush()
    reopened = store.open_conversation(window.older_id)  # the live one: same events the window shows
    assert [e.text for e in reopened.events(kinds=[Kind.USER_TEXT])][-1] == "Make it one o'clock"
    with open_store(tmp_path / "venus.db") as other:  # and on disk, read by a second store
        events = other.open_conversation(window.older_id).events(kinds=[Kind.USER_TEXT])
        assert [e.text for e in events] == ["Where shall we have lunch?", "Make it one o'clock"]


def test_a_greeting_does_not_name_the_conversation_the_first_words_that_say_more_do(qtbot, stored):
    # Found trying the app: a chat opened with "Hi" was listed as "Hi", like every other chat opened that way
    window = stored
    first = window.timeline.conversation_id
    for text in ("Hi Venus!", "Thanks", "Oh, never mind.", "What's the tallest building in Europe?"):
        qtbot.keyClicks(window.text_box, text)
        qtbot.keyClick(window.text_box, Qt.Key.Key_Return)
        qtbot.wait(100)
        if text == "Oh, never mind.":
            assert window.conversations.title_of(first).startswith("New chat"), window.conversations.title_of(first)
    qtbot.waitUntil(lambda: window.conversations.title_of(first) == "What's the tallest building in Europe?",
                    timeout=5000)
    assert window.title.text() == "What's the tallest building in Europe?"


def test_rename_in_place_search_and_delete(qtbot, stored):
    window = stored
    row = window.conversations.ids().index(window.older_id)
    item = window.conversations.list.item(row)
    window.conversations.list.setCurrentItem(item)
    item.setText("Lunch with Sam on Friday")  # what the in-place editor commits
    stored_titles = lambda: {c.id: c.title for c in window.bridge.controller.store.list_conversations()}  # noqa: E731
    qtbot.waitUntil(lambda: stored_titles()[window.older_id] == "Lunch with Sam on Friday", timeout=5000)

    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.conversations.search.hasFocus()
    qtbot.keyClicks(window.conversations.search, "friday")
    assert window.conversations.ids(visible_only=True) == [window.older_id]
    window.conversations.search.clear()
    qtbot.keyClicks(window.conversations.search, "noodle bar")  # said in it, not in its title
    qtbot.waitUntil(lambda: window.conversations.ids(visible_only=True) == [window.older_id], timeout=5000)
    window.conversations.search.clear()
    assert len(window.conversations.ids(visible_only=True)) == 2

    window.conversations.list.setCurrentRow(window.conversations.ids().index(window.older_id))
    asked = answer_modal(lambda box: box.button(QMessageBox.StandardButton.No).click())
    qtbot.mouseClick(window.conversations.delete_button, Qt.MouseButton.LeftButton)
    assert "“Lunch with Sam on Friday”" in asked[0]  # No keeps it
    assert window.older_id in window.conversations.ids()
    asked = answer_modal(lambda box: box.button(QMessageBox.StandardButton.Yes).click())
    qtbot.mouseClick(window.conversations.delete_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.older_id not in window.conversations.ids(), timeout=5000)
    assert "“Lunch with Sam on Friday”" in asked[0]
    assert window.older_id not in {c.id for c in window.bridge.controller.store.list_conversations()}

    current = window.timeline.conversation_id  # deleting the one in use starts a new one first
    answer_modal(lambda box: box.button(QMessageBox.StandardButton.Yes).click())
    window.delete_conversation(current)
    qtbot.waitUntil(lambda: window.timeline.conversation_id != current and current not in window.conversations.ids(),
                    timeout=5000)
    assert window.conversations.ids() == [window.timeline.conversation_id]


def save_as(path):
    """Type `path` into the save dialog and press Enter, as a user would."""
    def answer(dialog):
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        name.setText(str(path))
        QTest.keyClick(name, Qt.Key.Key_Return)
    return answer


def test_export_as_markdown_and_json(qtbot, stored, tmp_path):
    window = stored
    play_demo_conversation(window.timeline)
    qtbot.waitUntil(lambda: window.title.text().startswith("Hi Venus"), timeout=5000)
    target = {"md": tmp_path / "chat", "json": tmp_path / "chat.json"}  # the dialog adds the missing .md
    offered = answer_modal(save_as(target["md"]))
    window.export_conversation(window.timeline.conversation_id, "md")
    assert offered and offered[0].endswith(".md")
    target["md"] = tmp_path / "chat.md"
    qtbot.waitUntil(lambda: target["md"].exists(), timeout=5000)
    text = target["md"].read_text()
    assert text.startswith("# Hi Venus, what's on my plate")
    assert "**You:** Hi Venus, what's on my plate this afternoon?" in text
    assert "~~settings page and the icon set" in text and "*(interrupted)*" in text  # cut answers stay cut
    assert "**Task `weather`** — done" in text and '"city": "Lisbon"' in text

    answer_modal(save_as(target["json"]))
    window.export_conversation(window.older_id, "json")  # a conversation not in use, read from the database
    qtbot.waitUntil(lambda: target["json"].exists(), timeout=5000)
    events = json.loads(target["json"].read_text())
    assert [e["kind"] for e in events] == ["user_text", "assistant_turn_end"]
    assert events[1]["text"] == "How about **the noodle bar**?"
    assert window.older_id in window.conversations.ids()  # exporting did not switch or close anything
