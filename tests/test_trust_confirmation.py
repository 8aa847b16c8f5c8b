"""Confirmations (issue #24 item 1, in part): a yes answers the task Venus asked about, not whichever came last.

Through the real harness (its executor holds the tasks awaiting a yes) and, for the spoken answer, the real runtime
with the default LLM: two tasks wait, Venus asks about the first, and the user's "yes" approves that one only.
"""

from __future__ import annotations

import pytest

from engine.runtime import Runtime, RuntimeOptions, TextMouth
from engine.settings import Settings
from engine.timeline import Timeline
from engine.timeline import events as ev


def _harness(tmp_path, timeline: Timeline):
    from harness import Harness

    settings = Settings()
    settings.harness.permissions = {"create_note": "ask"}
    return settings, Harness(settings.harness, timeline.append, store_path=tmp_path / "tasks.db")


def _answered(timeline: Timeline) -> list[tuple[str, bool]]:
    return [(e.task_id, e.approved) for e in timeline.events() if isinstance(e, ev.ConfirmationAnswered)]


def test_a_yes_answers_the_question_asked_or_else_the_oldest(tmp_path, wait_until) -> None:
    timeline = Timeline()
    _, harness = _harness(tmp_path, timeline)
    try:
        first = harness.submit("create_note", {"title": "one", "text": "first note"})
        second = harness.submit("create_note", {"title": "two", "text": "second note"})
        assert wait_until(lambda: harness.pending_confirmations() == [first, second])
        assert harness.handle_user_text("Yes, go ahead.", "voice") == "yes"  # nothing asked yet: the oldest
        assert wait_until(lambda: _answered(timeline) == [(first, True)])
        third = harness.submit("create_note", {"title": "three", "text": "third note"})
        assert wait_until(lambda: harness.pending_confirmations() == [second, third])
        assert harness.handle_user_text("No.", "voice", asked=third) == "no"  # the one that was asked about
        assert wait_until(lambda: _answered(timeline) == [(first, True), (third, False)])
        assert harness.pending_confirmations() == [second]
    finally:
        harness.shutdown()


@pytest.fixture(scope="module")
def backend():
    from engine.llm import open_backend

    b = open_backend(Settings().llm)
    yield b
    b.close()


def test_a_spoken_yes_approves_the_task_venus_asked_about(backend, tmp_path, wait_until) -> None:
    from engine.llm import Conversation, ConversationOptions

    timeline = Timeline()
    settings, harness = _harness(tmp_path, timeline)
    conversation = Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm),
                                tools=harness.tool_specs())
    said: list[str] = []
    runtime = Runtime(timeline, conversation, TextMouth(lambda turn_id, clause: said.append(clause)),
                      harness=harness, settings=settings, options=RuntimeOptions(proactive_gap_ms=200)).start()
    try:
        first = harness.submit("create_note", {"title": "groceries", "text": "milk"})
        second = harness.submit("create_note", {"title": "garage", "text": "oil change"})
        assert wait_until(lambda: harness.pending_confirmations() == [first, second])
        # Venus asks about the first one first; the user answers once the question was said
        assert wait_until(lambda: any(isinstance(e, ev.AssistantTurnEnd) and "Shall I?" in e.text
                                      for e in timeline.events()), timeout=30)
        asked = next(e for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd) and "Shall I?" in e.text)
        assert "groceries" in asked.text or "milk" in asked.text, asked.text
        assert runtime.wait_idle(30)
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start))
        timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=start + 700))
        timeline.append(ev.AsrFinal(text="Yes.", segment_start_ms=start, segment_end_ms=start + 700))
        assert wait_until(lambda: bool(_answered(timeline)), timeout=30)
        assert _answered(timeline)[0] == (first, True)
        assert second in harness.pending_confirmations()  # still waiting for its own answer
    finally:
        runtime.close()
        harness.shutdown()
