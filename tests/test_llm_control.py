"""Control decisions: the grammar always yields a valid structure; bad tool calls become error events."""

from __future__ import annotations

import json

import llama_cpp
import numpy as np
import pytest

from engine.llm import (
    DECISION_PREFIX,
    ChatMessage,
    Conversation,
    ConversationOptions,
    GenerateRequest,
    RenderOptions,
    ToolSpec,
    allowed_actions,
    as_tool_specs,
    decision_grammar,
    format_decision,
    parse_decision,
    render_messages,
)
from engine.llm.llama_backend import LlamaBackend, LlamaOptions
from engine.llm.llama_options import GreedyGrammarSampler, make_sampler
from engine.models.registry import resolve
from engine.timeline import Timeline
from engine.timeline import events as ev

TOOLS = as_tool_specs([
    {
        "name": "set_timer",
        "description": "Start a countdown timer.",
        "parameters": {
            "type": "object",
            "properties": {"minutes": {"type": "integer", "minimum": 1, "maximum": 600}, "label": {"type": "string"}},
            "required": ["minutes"],
        },
    },
    {
        "name": "web_search",
        "description": "Search the web and report back.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
])

SUBJECTS = ["the weather", "my calendar", "pasta", "the moon", "Python", "a timer", "jazz", "my emails", "Rome", "sleep"]
FORMS = [
    "Tell me about {}.",
    "Set a timer for {} please",
    "hmm {} I guess",
    "Search the web for {}!",
    "(talking to someone else) did you see {} yesterday?",
]
PROMPTS = [form.format(subject) for subject in SUBJECTS for form in FORMS]


@pytest.fixture(scope="module")
def backend():
    path = str(resolve("smollm2-135m-instruct-q4_1", kind="llm"))
    b = LlamaBackend(LlamaOptions(model_path=path, n_ctx=2048, n_batch=128, n_threads=1))
    yield b
    b.close()


def _request(actions) -> GenerateRequest:
    return GenerateRequest(temperature=0.0, max_tokens=64, stop=("\n",), grammar=decision_grammar(TOOLS, actions))


def test_grammar_gives_a_valid_decision_for_50_varied_prompts(backend):
    assert len(PROMPTS) == 50
    render = RenderOptions(system_prompt="You are Venus, a voice assistant.")
    seen_actions = set()
    for i, prompt in enumerate(PROMPTS):
        can_resume = i % 3 == 0
        actions = allowed_actions(TOOLS, can_resume=can_resume)
        messages = render_messages([ev.UserText(text=prompt, seq=0)], TOOLS, render)
        # vary the sampling as well as the prompt: greedy for some, hot sampling for others
        request = _request(actions)
        if i % 2:
            request = GenerateRequest(temperature=1.2, top_p=1.0, min_p=0.0, max_tokens=64, seed=i,
                                      stop=("\n",), grammar=request.grammar)
        stream = backend.generate(messages, request)
        text = stream.text()
        assert stream.finish.reason in ("complete", "stop"), (prompt, text, stream.finish.reason)
        data = json.loads(text)  # the structure is always valid JSON
        decision = parse_decision(text, TOOLS, actions)
        assert decision.action in actions, (prompt, text)
        assert not decision.error or decision.error.startswith("invalid arguments"), (prompt, text, decision.error)
        if decision.action == ev.Action.DELEGATE:
            assert data["tool"] in {"set_timer", "web_search"} and isinstance(data["arguments"], dict)
        else:
            assert data == {"action": str(decision.action)}
        assert text == format_decision(decision.action, decision.tool, decision.arguments)
        seen_actions.add(decision.action)
    assert len(seen_actions) >= 2, seen_actions


def test_decision_after_the_prefilled_prefix_is_valid_for_varied_prompts(backend):
    render = RenderOptions(system_prompt="You are Venus, a voice assistant.")
    seen_actions = set()
    for i, prompt in enumerate(PROMPTS[::2]):
        actions = allowed_actions(TOOLS, can_resume=i % 2 == 0)
        messages = render_messages([ev.UserText(text=prompt, seq=0)], TOOLS, render)
        grammar = decision_grammar(TOOLS, actions, after_prefix=True)
        request = GenerateRequest(temperature=0.0, max_tokens=64, stop=("\n",), grammar=grammar)
        if i % 3 == 2:
            request = GenerateRequest(temperature=1.2, top_p=1.0, min_p=0.0, max_tokens=64, seed=i,
                                      stop=("\n",), grammar=grammar)
        stream = backend.generate([*messages, ChatMessage("assistant", DECISION_PREFIX)], request)
        text = DECISION_PREFIX + stream.text()
        assert stream.finish.reason in ("complete", "stop"), (prompt, text, stream.finish.reason)
        json.loads(text)
        decision = parse_decision(text, TOOLS, actions)
        assert decision.action in actions, (prompt, text)
        assert text == format_decision(decision.action, decision.tool, decision.arguments)
        seen_actions.add(decision.action)
    assert len(seen_actions) >= 2, seen_actions


def test_conversation_with_prefilled_decision_runs_whole_turns(backend):
    timeline = Timeline()
    options = ConversationOptions(
        render=RenderOptions(system_prompt="You are Venus, a voice assistant."), prefill_decision=True,
        answer=GenerateRequest(temperature=0.0, max_tokens=16), n_ctx=2048, decision_max_tokens=64,
    )
    conv = Conversation(timeline, backend, options, tools=TOOLS)
    for question in ("Tell me about the moon.", "Set a timer for five minutes please"):
        timeline.append(ev.UserText(text=question))
        turn = conv.respond()
        end = turn.wait(180)
        assert end is not None and not end.reason.startswith("error"), end
        decision = timeline.events(kinds=[ev.Kind.CONTROL_DECISION])[-1]
        assert not decision.error or decision.error.startswith("invalid arguments"), decision
    # the finished turns, rendered again, continue the cache: only a few boundary tokens are evaluated
    timeline.append(ev.UserText(text="Thanks."))
    stats = conv.sync()
    assert stats.kept > 0.9 * stats.total and stats.evaluated < 20, stats


def test_argmax_first_grammar_sampling_picks_what_full_filtering_picks(backend):
    """GreedyGrammarSampler against llama.cpp's own grammar+greedy chain, step by step on the same logits."""
    render = RenderOptions(system_prompt="You are Venus, a voice assistant.")
    actions = allowed_actions(TOOLS, can_resume=True)
    grammar = decision_grammar(TOOLS, actions)
    steps = filtered = 0
    for prompt in PROMPTS[:12]:
        messages = render_messages([ev.UserText(text=prompt, seq=0)], TOOLS, render)
        tokens = backend.context_tokens([*messages, ChatMessage("assistant", "")], open_last=True)

        def job(tokens: list[int] = tokens) -> tuple[list[int], list[int], int]:
            backend._sync_tokens(tokens, evaluate=True)
            ours = GreedyGrammarSampler(backend._vocab, grammar, backend.n_vocab)
            reference = make_sampler(backend._vocab, GenerateRequest(temperature=0.0, grammar=grammar))
            mine, theirs = [], []
            try:
                for _ in range(40):
                    logits = llama_cpp.llama_get_logits_ith(backend._ctx.ctx, -1)
                    mine.append(ours.sample(np.ctypeslib.as_array(logits, shape=(backend.n_vocab,))))
                    theirs.append(llama_cpp.llama_sampler_sample(reference, backend._ctx.ctx, -1))
                    if mine[-1] != theirs[-1] or llama_cpp.llama_vocab_is_eog(backend._vocab, mine[-1]):
                        break
                    backend._decode([mine[-1]])
            finally:
                ours.close()
                llama_cpp.llama_sampler_free(reference)
            return mine, theirs, ours.full_filters

        mine, theirs, full_filters = backend._call(job)
        assert mine == theirs, (prompt, backend.detokenize(mine), backend.detokenize(theirs))
        steps += len(mine)
        filtered += full_filters
    assert 0 < filtered < steps  # both branches ran: the argmax accepted, and rejected then filtered


def test_parse_decision_reports_malformed_output_instead_of_raising():
    actions = allowed_actions(TOOLS, can_resume=False)
    cases = {
        '{"action": "del': "not valid JSON",
        "[1, 2]": "not a JSON object",
        '{"action": "dance"}': "unknown action",
        '{"action": "resume"}': "not allowed now",
        '{"action": "delegate", "tool": "rm_rf", "arguments": {}}': "no tool named 'rm_rf'",
        '{"action": "delegate", "tool": "set_timer", "arguments": []}': "must be a JSON object",
        '{"action": "delegate", "tool": "set_timer", "arguments": {"minutes": "ten"}}': "minutes: 'ten' is not of type",
        '{"action": "delegate", "tool": "set_timer", "arguments": {}}': "'minutes' is a required property",
    }
    for text, expected in cases.items():
        decision = parse_decision(text, TOOLS, actions)
        assert expected in decision.error, (text, decision.error)
    ok = parse_decision('{"action": "delegate", "tool": "set_timer", "arguments": {"minutes": 5}}', TOOLS, actions)
    assert ok.error == "" and ok.arguments == {"minutes": 5}


def test_tool_specs_are_validated():
    with pytest.raises(ValueError, match="invalid parameters schema"):
        ToolSpec(name="bad", description="", parameters={"type": "no-such-type"})
    with pytest.raises(ValueError, match="unique"):
        as_tool_specs([{"name": "a"}, {"name": "a"}])
    with pytest.raises(ValueError, match="name"):
        ToolSpec(name="has space", description="")


def test_malformed_tool_call_from_the_model_becomes_an_error_event(backend):
    # No model will guess arguments this schema accepts, so its delegation is invalid every time.
    impossible = {
        "name": "set_timer",
        "description": "Start a countdown timer.",
        "parameters": {
            "type": "object",
            "properties": {"minutes": {"type": "integer", "minimum": 7919000, "multipleOf": 7919}},
            "required": ["minutes"],
            "additionalProperties": False,
        },
    }
    timeline = Timeline()
    options = ConversationOptions(
        render=RenderOptions(system_prompt="You are Venus."),
        answer=GenerateRequest(temperature=0.0, max_tokens=16), n_ctx=2048, decision_max_tokens=64,
    )
    conv = Conversation(timeline, backend, options, tools=[impossible])
    timeline.append(ev.UserText(text="Set a timer for ten minutes."))
    turn = conv.respond(actions=[ev.Action.DELEGATE])
    end = turn.wait(180)
    assert end is not None and not end.reason.startswith("error"), end
    decisions = timeline.events(kinds=[ev.Kind.CONTROL_DECISION])
    failed = [d for d in decisions if d.error]
    assert len(failed) == options.decision_retries + 1
    assert all(d.action == ev.Action.DELEGATE and d.tool == "set_timer" for d in failed)
    assert all(d.error.startswith("invalid arguments for set_timer") for d in failed), failed
    assert decisions[-1].action == ev.Action.RESPOND and not decisions[-1].error  # fell back to words
    # the error went back to the model: it is in the context the retry (and every later turn) reads
    notes = [m for m in conv.messages() if m.role == "tool" and m.content.startswith("[error]")]
    assert len(notes) == len(failed)
    assert isinstance(notes[0], ChatMessage) and "invalid arguments for set_timer" in notes[0].content
