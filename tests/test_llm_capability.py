"""Tool calls are a per-model capability (issue #23 item 2): the tiny defaults are off, and then the model reads
no format text, no tool list and no JSON, makes no decision itself, and its small talk never recites a format,
never calls a tool and never loops, on both default models through the real session."""

from __future__ import annotations

import re

import pytest

from engine.llm import (
    OFFER,
    SMALL_MODEL_PROMPT,
    ConversationOptions,
    render_messages,
    sentence_ends,
    tool_calls_enabled,
)
from engine.llm.control import as_tool_specs, describe_actions
from engine.llm.guard import ReplyGuard
from engine.models.registry import get_entry, tool_calls_capability
from engine.settings import Settings
from engine.timeline import events as ev

DEFAULT_MODELS = ["smollm2-135m-instruct-q4_1", "gemma3-270m-q4_k_m"]
# what a prompt for a model without tool calls must not hold: the words of a format it could recite
FORMAT_WORDS = re.compile(r"json|action|respond|silent|delegate|resume|tool|argument|format|[{}\[\]\"]", re.I)


def _tools() -> tuple:
    from harness import Harness

    harness = Harness(Settings().harness, lambda event: None)
    try:
        return as_tool_specs(harness.tool_specs())
    finally:
        harness.shutdown()


@pytest.mark.parametrize("model", DEFAULT_MODELS)
def test_the_registry_marks_the_tiny_defaults_without_tool_calls(model: str) -> None:
    assert get_entry(model).tool_calls is False
    path = get_entry(model).paths()[0]
    assert tool_calls_capability(model) is False
    assert tool_calls_capability(str(path)) is False  # a path to the model's file is the same model
    assert tool_calls_capability("/somewhere/a-model-nobody-measured.gguf") is None
    settings = Settings()
    settings.llm.model = model
    assert tool_calls_enabled(settings.llm) is False
    settings.llm.tool_calls = "on"  # the settings win over the registry
    assert tool_calls_enabled(settings.llm) is True


def test_auto_keeps_tool_calls_for_remote_servers_and_unmeasured_models() -> None:
    settings = Settings()
    settings.llm.backend = "remote"
    assert tool_calls_enabled(settings.llm) is True
    settings.llm.tool_calls = "off"
    assert tool_calls_enabled(settings.llm) is False
    local = Settings()
    local.llm.model = "/models/some-7b-instruct.gguf"
    assert tool_calls_enabled(local.llm) is True


def test_a_tiny_model_reads_a_short_persona_with_no_format_tools_or_json() -> None:
    tools = _tools()
    assert tools, "the harness has built-in tools, which a capable model would see"
    options = ConversationOptions.from_settings(Settings().llm)
    assert options.tool_calls is False
    timeline = [  # one earlier turn: its decision line must not come back into the context either
        ev.UserText(text="Hi", seq=0),
        ev.ControlDecision(turn_id="t1", action=ev.Action.RESPOND, seq=1),
        ev.AssistantTurnEnd(turn_id="t1", text="Hello there!", heard_text="Hello there!", seq=2),
        ev.UserText(text="Who are you?", seq=3),
    ]
    messages = render_messages(timeline, tools, options.render)
    system = messages[0].content
    assert system == SMALL_MODEL_PROMPT
    assert len(system.split()) <= 40, system
    assert not FORMAT_WORDS.search(system), FORMAT_WORDS.search(system)
    assert not any(t.name in system for t in tools)
    assert all(not m.control and "{" not in m.full_content() for m in messages), messages
    # a user's own prompt is kept as written (only the shipped one is swapped for the short persona)
    custom = Settings()
    custom.llm.system_prompt = "You are Venus, my kitchen helper."
    assert ConversationOptions.from_settings(custom.llm).render.system_prompt == "You are Venus, my kitchen helper."


def test_with_tool_calls_on_the_prompt_keeps_the_format_and_the_tools() -> None:
    tools = _tools()
    settings = Settings()
    settings.llm.tool_calls = "on"
    options = ConversationOptions.from_settings(settings.llm)
    system = render_messages([], tools, options.render)[0].content
    assert describe_actions(tools) in system and options.tool_calls


@pytest.fixture(scope="module", params=DEFAULT_MODELS)
def tiny_session_maker(request):
    """New text sessions on one default model (loaded once), with its default settings."""
    from engine.runtime.session import load_shared, open_session

    settings = Settings()
    settings.llm.model = request.param
    shared = load_shared(settings, speech=False)

    def make():
        return open_session(settings, persist=False, shared=shared)

    yield make
    shared.close()


@pytest.mark.parametrize("text", ["Hi", "Who are you?", "Thanks!", "Never mind."])
def test_small_talk_on_a_tiny_model_never_recites_calls_a_tool_or_loops(tiny_session_maker, text: str) -> None:
    session = tiny_session_maker()
    try:
        system = session.conversation.messages()[0].content
        session.runtime.send_text(text)
        assert session.runtime.wait_idle(180), "Venus did not settle"
        events = session.timeline.events()
        context = session.conversation.messages()  # what the model read, its own answer included
    finally:
        session.close()
    ends = [e for e in events if isinstance(e, ev.AssistantTurnEnd)]
    decisions = [e for e in events if isinstance(e, ev.ControlDecision)]
    assert len(ends) == 1 and ends[0].text.strip(), ends
    said = ends[0].text
    assert all("{" not in m.full_content() and "JSON" not in m.full_content() for m in context), context
    # no decision came from the model: the one turn is a plain answer, and nothing was delegated
    assert [(d.action, d.tool, d.error) for d in decisions] == [(ev.Action.RESPOND, "", "")]
    assert not [e for e in events if isinstance(e, ev.DelegationDispatched)]
    tokens = "".join(e.text for e in events if isinstance(e, ev.AssistantToken))
    for what in (said, tokens):  # neither the voice nor the stream holds a format
        assert "JSON" not in what and '"action' not in what and "{" not in what, what
    # the guard's two checks, on what the user heard: no run of the instructions, no loop
    instructions = ReplyGuard(f"{system}\n\n{describe_actions(_tools())}")
    assert instructions.check(said) is None, (said, ends[0].reason)
    # at most two sentences, then perhaps the offer to go on
    assert sentence_ends(said.removesuffix(OFFER)) <= 2, said


def test_without_tool_calls_the_turn_resumes_after_a_false_interruption_and_answers_anything_said(small_llm) -> None:
    from engine.llm import Conversation, GenerateRequest
    from engine.timeline import Timeline

    def cut_conversation() -> tuple[Timeline, Conversation]:
        timeline = Timeline()
        options = ConversationOptions(tool_calls=False, answer=GenerateRequest(max_tokens=12, temperature=0.0))
        timeline.append(ev.UserText(text="Tell me a fact about bees."))
        timeline.append(ev.ControlDecision(turn_id="t1", action=ev.Action.RESPOND))
        timeline.append(ev.AssistantTurnEnd(turn_id="t1", text="Bees dance to show where flowers are.",
                                            heard_text="Bees dance", interrupted=True))
        timeline.append(ev.Interruption(turn_id="t1", heard_text="Bees dance", unheard_text="to show where flowers are."))
        return timeline, Conversation(timeline, small_llm, options, tools=_tools())

    def decided(conversation: Conversation, actions) -> ev.Action:
        turn = conversation.respond(actions=actions)
        turn.wait(60)
        return turn.decision.action

    # nothing was said to Venus since the cut (the speech was not for her): the runtime's resume goes on
    _, conversation = cut_conversation()
    assert decided(conversation, (ev.Action.RESUME, ev.Action.RESPOND)) == ev.Action.RESUME
    # words for Venus after the cut: answered, even where the runtime allows resuming, silence or a delegation
    timeline, conversation = cut_conversation()
    timeline.append(ev.UserText(text="What about ants?"))
    assert decided(conversation, (ev.Action.RESPOND, ev.Action.DELEGATE, ev.Action.RESUME)) == ev.Action.RESPOND
    assert decided(conversation, None) == ev.Action.RESPOND
    assert decided(conversation, (ev.Action.SILENT,)) == ev.Action.SILENT  # silent only when nothing else is allowed
    assert all(not m.control for m in conversation.messages())


def test_a_base_model_reads_a_written_dialogue_and_each_answer_is_one_line() -> None:
    # Gemma 3 270M on PyPI is the base model: no chat template in its file, no turn markers learned (with
    # Gemma's markers it wrote debris such as "mendatanguser" and "</caption>" loops). It reads "User:" /
    # "Venus:" lines, and its answer ends where its line ends, before it can write the user's next line.
    from engine.runtime.session import load_shared, open_session

    settings = Settings()
    settings.llm.model = "gemma3-270m-q4_k_m"
    shared = load_shared(settings, speech=False)
    try:
        assert shared.backend.template.name == "transcript"
        for text in ("Hi", "How are you today?", "What can you do?"):
            session = open_session(settings, persist=False, shared=shared)
            try:
                session.runtime.send_text(text)
                assert session.runtime.wait_idle(180), "Venus did not settle"
                events = session.timeline.events()
                rendered = shared.backend.template.render(session.conversation.messages())
            finally:
                session.close()
            ends = [e for e in events if isinstance(e, ev.AssistantTurnEnd)]
            assert len(ends) == 1 and ends[0].text.strip(), ends
            tokens = "".join(e.text for e in events if isinstance(e, ev.AssistantToken))
            assert "\n" not in tokens.strip() and "User:" not in tokens, tokens
            assert rendered.startswith(SMALL_MODEL_PROMPT + "\n\nUser: " + text + "\nVenus: "), rendered
    finally:
        shared.close()


def test_a_result_its_own_turn_said_is_not_given_to_a_model_without_tool_calls_as_data() -> None:
    # SmolLM2-135M copied the clock's raw result into its next answer ("How are you today?" - "Today is Monday,
    # 2026-12-07.") and wrote its fence ("</data>"): the words "It's 2:02 PM." already hold the result
    events = [
        ev.UserText(text="What time is it?", seq=1),
        ev.ControlDecision(turn_id="t1", action=ev.Action.DELEGATE, tool="current_time", seq=2),
        ev.DelegationDispatched(task_id="k1", tool="current_time", turn_id="t1", seq=3),
        ev.DelegationResult(task_id="k1", tool="current_time", summary="It is 14:02 on Monday, 2026-12-07", seq=4),
        ev.AssistantTurnEnd(turn_id="t1", text="It's 2:02 PM.", heard_text="It's 2:02 PM.", seq=5),
        # a result that came later, for a turn that had already ended, is said from the data: it stays
        ev.DelegationDispatched(task_id="k2", tool="find_files", turn_id="t2", seq=6),
        ev.AssistantTurnEnd(turn_id="t2", text="Looking.", heard_text="Looking.", seq=7),
        ev.DelegationResult(task_id="k2", tool="find_files", summary="Found 2 files", seq=8),
        ev.UserText(text="How are you today?", seq=9),
    ]
    small = ConversationOptions.from_settings(Settings().llm).render
    text = " ".join(m.content for m in render_messages(events, [], small))
    assert "2026-12-07" not in text and "It's 2:02 PM." in text and "Found 2 files" in text
    with_tools = Settings()
    with_tools.llm.tool_calls = "on"  # a model that reads data and calls tools keeps every result
    text = " ".join(m.content for m in render_messages(events, [], ConversationOptions.from_settings(with_tools.llm).render))
    assert "2026-12-07" in text
