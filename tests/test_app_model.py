"""The conversation model over a real Timeline: streaming, interruptions, task cards, and Qt's model tester."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.demo import play_demo_conversation  # noqa: E402
from app.timeline_model import ConversationModel, Role, RowKind, TaskState  # noqa: E402
from engine.timeline import Timeline  # noqa: E402
from engine.timeline.events import (  # noqa: E402
    AsrFinal,
    AsrPartial,
    AssistantToken,
    AssistantTurnEnd,
    ConfirmationAnswered,
    ConfirmationRequested,
    DelegationDispatched,
    DelegationFailed,
    DelegationProgress,
    Interruption,
    UserSpeechStart,
)


def _model_on(timeline: Timeline) -> ConversationModel:
    model = ConversationModel()
    timeline.subscribe(model.apply)
    return model


def test_model_passes_qt_model_tester_through_a_whole_conversation(qtmodeltester):
    timeline = Timeline()
    model = _model_on(timeline)
    qtmodeltester.check(model, force_py=False)  # stays attached: every later insert/change is checked too
    ids = play_demo_conversation(timeline)
    kinds = [r.kind for r in model.rows()]
    assert kinds.count(RowKind.USER) == 4
    assert kinds.count(RowKind.ASSISTANT) == 4
    assert model.row(model.find(RowKind.TASK, ids.finished_task)).progress == 100.0
    qtmodeltester.check(model)


def test_tokens_stream_into_one_row_and_finish():
    timeline = Timeline()
    model = _model_on(timeline)
    for i, piece in enumerate(["Hello", " there", ","]):
        timeline.append(AssistantToken(turn_id="t1", text=piece, index=i))
    row = model.row(0)
    assert (row.kind, row.text, row.streaming) == (RowKind.ASSISTANT, "Hello there,", True)
    timeline.append(AssistantTurnEnd(turn_id="t1", text="Hello there, friend.", heard_text="Hello there, friend."))
    assert model.rowCount() == 1
    row = model.row(0)
    assert (row.text, row.streaming, row.interrupted) == ("Hello there, friend.", False, False)
    assert model.data(model.index(0), Role.STREAMING) is False


def test_interrupted_answer_is_cut_at_heard_text():
    timeline = Timeline()
    model = _model_on(timeline)
    ids = play_demo_conversation(timeline)
    index = model.index(model.find(RowKind.ASSISTANT, ids.interrupted_turn))
    heard, unheard = index.data(Role.HEARD_TEXT), index.data(Role.UNHEARD_TEXT)
    assert index.data(Role.INTERRUPTED) is True
    assert heard == "Sure. The review covers the new onboarding flow, the"
    assert unheard.strip().startswith("settings page and the icon set")
    assert index.data() == heard  # what the view reads aloud / copies is only what the user heard


def test_interruption_without_tokens_still_shows_heard_part():
    timeline = Timeline()
    model = _model_on(timeline)
    timeline.append(Interruption(turn_id="t9", heard_text="One two", unheard_text=" three four"))
    row = model.row(0)
    assert row.interrupted and row.heard_text == "One two" and row.unheard_text == " three four"


def test_partials_grow_one_user_row_and_empty_final_removes_it():
    timeline = Timeline()
    model = _model_on(timeline)
    timeline.append(UserSpeechStart())
    timeline.append(AsrPartial(text="what is"))
    timeline.append(AsrPartial(text="what is the time"))
    assert model.rowCount() == 1 and model.row(0).streaming
    timeline.append(AsrFinal(text=" What is the time? "))
    assert (model.row(0).text, model.row(0).streaming) == ("What is the time?", False)
    timeline.append(UserSpeechStart())
    assert model.rowCount() == 2
    timeline.append(AsrFinal(text=""))
    assert model.rowCount() == 1


def test_task_card_states_from_confirmation_to_denied_and_failure():
    timeline = Timeline()
    model = _model_on(timeline)
    args = {"path": "/tmp/x", "recursive": True}
    timeline.append(DelegationDispatched(task_id="a", tool="delete_files", arguments=args))
    assert model.row(0).task_state == TaskState.QUEUED
    timeline.append(ConfirmationRequested(task_id="a", tool="delete_files", arguments=args, prompt="Delete /tmp/x?"))
    index = model.index(0)
    assert index.data(Role.TASK_STATE) == TaskState.WAITING_CONFIRMATION
    assert '"path": "/tmp/x"' in index.data(Role.ARGUMENTS)
    timeline.append(DelegationProgress(task_id="a", percent=150, status="still waiting"))
    assert model.row(0).task_state == TaskState.WAITING_CONFIRMATION and model.row(0).progress == 100.0
    timeline.append(ConfirmationAnswered(task_id="a", approved=False))
    assert model.row(0).task_state == TaskState.DENIED
    timeline.append(DelegationProgress(task_id="b", percent=30, status="working"))  # dispatched before we opened
    timeline.append(DelegationFailed(task_id="b", tool="search", error="no network", code="tool-failed"))
    assert model.row(1).task_state == TaskState.FAILED and model.row(1).result == "no network"


def test_demo_ids_match_rows():
    timeline = Timeline()
    model = _model_on(timeline)
    ids = play_demo_conversation(timeline)
    assert model.find(RowKind.TASK, ids.finished_task) is not None
    assert model.find(RowKind.ASSISTANT, ids.interrupted_turn) is not None
    waiting = model.row(model.find(RowKind.TASK, ids.waiting_task))
    assert waiting.task_state == TaskState.WAITING_CONFIRMATION and waiting.arguments["recursive"] is True


def test_reset_shows_another_conversation_and_markdown_export_keeps_what_was_heard(qtmodeltester):
    from app.timeline_model import conversation_markdown, row_markdown

    timeline = Timeline()
    model = _model_on(timeline)
    qtmodeltester.check(model, force_py=False)
    ids = play_demo_conversation(timeline)
    other = Timeline()
    other.append(AsrFinal(text="Only this"))
    model.reset(other.events())
    assert [r.text for r in model.rows()] == ["Only this"] and model.find(RowKind.TASK, ids.finished_task) is None
    text = conversation_markdown(timeline.events(), "Afternoon")
    assert text.startswith("# Afternoon\n\n**You:** Hi Venus")
    assert "**Venus:** You have **two things** this afternoon:\n\n- the *design review* at 3 pm" in text
    assert "Sure. The review covers the new onboarding flow, the ~~settings page" in text
    assert "*(interrupted)*" in text and "**Task `delete_files`** — waiting for your confirmation" in text
    notice = row_markdown(model.rows()[0].__class__(kind=RowKind.NOTICE, key="n", text="Camera on"))
    assert notice == "> Camera on"
