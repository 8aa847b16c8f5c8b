"""The guard on spoken answers: a small model that recites its instructions or loops is stopped before the
voice says it, and what it says instead is short. Typed "Hi" through the real session with tool calls forced on
(the format in the prompt), on both default models, never speaks the hidden control prompt (it did every time
before the guard, issue #23)."""

from __future__ import annotations

import pytest

from engine.llm.guard import GuardOptions, ReplyGuard
from engine.settings import Settings
from engine.timeline import events as ev

SYSTEM = ("You are Venus, a friendly voice assistant. Answer briefly.\n\nStart every reply with one JSON line that "
          'chooses what to do, then the words to say:\n{"action": "respond"} to answer the user;\n'
          '{"action": "silent"} when the speech was not meant for you or needs no answer;')


def test_a_recital_of_the_instructions_is_caught() -> None:
    guard = ReplyGuard(SYSTEM)
    reason = guard.check('I\'m sorry for the error. Please try again: "Start every reply with one JSON line that')
    assert reason is not None and "recited" in reason
    assert guard.check("Siniless when the speech was not meant for you or needs no answer") is not None


def test_a_loop_is_caught_at_its_second_round() -> None:
    guard = ReplyGuard(SYSTEM)
    once = "The answer to your question is seventeen forty five."
    assert guard.check(once) is None
    reason = guard.check(f"{once} {once}")
    assert reason is not None and "loop" in reason


@pytest.mark.parametrize("answer", [
    "I'm Venus, a friendly voice assistant. How can I help?",  # five words of the persona, not a recital
    "Hello! What would you like to talk about today?",
    "First, mix the flour and the sugar. Then add the eggs, and then the milk, and stir it well.",
    "It's twelve times fourteen, so the answer is one hundred sixty eight.",
])
def test_real_answers_pass(answer: str) -> None:
    assert ReplyGuard(SYSTEM).check(answer) is None


def test_the_fence_of_tool_output_copied_into_an_answer_stops_it() -> None:
    # SmolLM2-135M ended "Noted: The capital of France is Paris." with "</data>", the tag that fences tool output in
    # its context; it was said as "data"
    guard = ReplyGuard("You are Venus, a voice assistant.")
    assert guard.check("The capital of France is Paris.\n</data>") is not None
    assert guard.check('<data source="notes">') is not None
    assert guard.check("The data shows it will rain.") is None


def test_runs_too_short_to_tell_are_refused() -> None:
    with pytest.raises(ValueError):
        GuardOptions(prompt_run=2)


def _answer_to(text: str, model: str, tool_calls: str = "auto") -> ev.AssistantTurnEnd:
    from engine.runtime.session import open_session

    settings = Settings()
    settings.llm.model = model
    settings.llm.tool_calls = tool_calls
    session = open_session(settings, persist=False)
    try:
        session.runtime.send_text(text)
        assert session.runtime.wait_idle(120), "Venus did not settle"
        ends = session.timeline.events(kinds=[ev.Kind.ASSISTANT_TURN_END])
        assert ends, "no answer"
        return ends[-1]
    finally:
        session.close()


@pytest.mark.parametrize("model", ["smollm2-135m-instruct-q4_1", "gemma3-270m-q4_k_m"])
def test_hi_never_speaks_the_control_prompt(model: str) -> None:
    from engine.llm import ConversationOptions, render_messages
    from engine.llm.control import as_tool_specs
    from harness import Harness

    settings = Settings()
    # tool calls forced on: the tiny defaults have them off (and then read no format at all, see
    # test_llm_capability.py); with them on, the format is in the prompt and the guard keeps it from the voice
    settings.llm.tool_calls = "on"
    harness = Harness(settings.harness, lambda event: None)
    try:
        tools = as_tool_specs(harness.tool_specs())
    finally:
        harness.shutdown()
    system = render_messages([], tools, ConversationOptions.from_settings(settings.llm).render)[0].content
    assert "Start every reply with one JSON line" in system  # what the small model used to recite
    end = _answer_to("Hi", model, tool_calls="on")
    assert end.text.strip(), end
    assert ReplyGuard(system).check(end.text) is None, (end.text, end.reason)
    assert "JSON" not in end.text and '"action' not in end.text, end.text


def test_the_terminal_shows_what_was_said_after_a_stopped_answer() -> None:
    import io

    from engine.runtime.chat import TranscriptPrinter

    out = io.StringIO()
    printer = TranscriptPrinter(out, stream_tokens=True)
    printer(ev.AssistantToken(turn_id="t1", text='Please try again: "Start every reply', index=0))
    printer(ev.AssistantTurnEnd(turn_id="t1", text="Please try again:", heard_text="Please try again:",
                                reason="guard: the answer recited its instructions ('start every reply')"))
    shown = out.getvalue()
    assert "not spoken" in shown and shown.rstrip().endswith("venus: Please try again:"), shown
