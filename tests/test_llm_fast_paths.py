"""The short cuts on the way to the first spoken word, with the real default model: the decision read from the
logits, the user's words evaluated while they still speak, and the characters an answer may not contain."""

from __future__ import annotations

import pytest

from engine.llm import ChatMessage, Conversation, ConversationOptions, GenerateRequest, RenderOptions
from engine.llm.conversation import SPOKEN_AVOID
from engine.timeline import Timeline
from engine.timeline import events as ev

SYSTEM = "You are Venus, a voice assistant. Answer in one short sentence."


@pytest.fixture(scope="module")
def backend(small_llm):
    return small_llm


def _options(**kw) -> ConversationOptions:
    return ConversationOptions(render=RenderOptions(system_prompt=SYSTEM),
                               answer=GenerateRequest(temperature=0.0, max_tokens=16), n_ctx=2048,
                               decision_max_tokens=48, **kw)


def test_choose_follows_the_models_preference(backend):
    messages = [ChatMessage("system", SYSTEM), ChatMessage("user", "What is the capital of France? One word.")]
    steps = backend.decode_steps
    assert backend.choose(messages, ["Paris.", "Banana."]) == 0
    assert backend.choose(messages, ["Banana.", "Paris."]) == 1
    assert backend.decode_steps == steps  # nothing was generated: only the shared opening was evaluated
    with pytest.raises(ValueError):
        backend.choose(messages, [])


def test_choose_picks_between_candidates_that_share_their_first_tokens(backend):
    """The walk goes through the shared opening and chooses where the candidates part, in either order."""
    messages = [ChatMessage("system", SYSTEM), ChatMessage("user", "What is the capital of France?")]
    right, wrong = "The capital of France is Paris.", "The capital of France is Banana."
    assert backend.choose(messages, [right, wrong]) == 0
    assert backend.choose(messages, [wrong, right]) == 1
    # the walk stopped where the two part: the cache holds the shared opening, and a sync extends it
    opening = backend.context_tokens([*messages, ChatMessage("assistant", "The capital of France is")],
                                     open_last=True)
    assert backend.cached_tokens[: len(opening) - 1] == opening[:-1]


def test_decisions_from_logits_are_valid_and_cost_no_generated_steps(backend):
    timeline = Timeline()
    conv = Conversation(timeline, backend, _options(), tools=[{"name": "set_timer", "description": "start a timer",
                        "parameters": {"type": "object", "properties": {"minutes": {"type": "integer"}},
                                       "required": ["minutes"]}}])
    from_logits = 0
    for text in ("What is the capital of France?", "Tell me a joke.", "How far away is the moon?"):
        timeline.append(ev.UserText(text=text))
        steps = backend.decode_steps
        turn = conv.respond()
        assert turn.decided.wait(60)
        decision = turn.decision
        assert decision is not None and not decision.error
        if decision.action != ev.Action.DELEGATE:
            assert backend.decode_steps == steps  # chosen from the logits, not generated token by token
            from_logits += 1
        turn.wait(60)
    decisions = timeline.events(kinds=[ev.Kind.CONTROL_DECISION])
    assert len(decisions) == 3 and not any(d.error for d in decisions)
    assert from_logits >= 1  # none of these asks for a timer: at least one decision was read from the logits


def test_a_partial_transcript_is_evaluated_before_the_final_lands(backend):
    timeline = Timeline()
    conv = Conversation(timeline, backend, _options())
    conv.sync()
    words = "Could you tell me how far away the moon is from the earth?"
    first = conv.prefill(words[:30])
    assert first.evaluated > 5
    conv.prefill(words)  # a later partial: only its new words are evaluated
    timeline.append(ev.AsrFinal(text=words))  # the final says the same
    final = conv.sync()
    assert final.evaluated <= 1, final  # at most the last token, for its logits
    assert backend.cached_tokens == backend.context_tokens(conv.messages())


def test_avoid_chars_keeps_braces_out_of_an_answer(backend):
    messages = [ChatMessage("system", "You reply only with JSON objects."),
                ChatMessage("user", 'Give me a JSON object with the key "name" set to "Venus".')]
    plain = backend.generate(messages, GenerateRequest(temperature=0.0, max_tokens=24)).text()
    assert "{" in plain  # the model does write JSON when it may
    avoided = backend.generate(messages, GenerateRequest(temperature=0.0, max_tokens=24, avoid_chars="{}")).text()
    assert avoided.strip() and "{" not in avoided and "}" not in avoided


def test_spoken_answers_carry_no_json_or_markdown(backend):
    timeline = Timeline()
    options = ConversationOptions(
        render=RenderOptions(system_prompt="You write markdown: **bold** words, # headings and JSON objects."),
        answer=GenerateRequest(temperature=0.0, max_tokens=40), n_ctx=2048, decision_max_tokens=48)
    conv = Conversation(timeline, backend, options)
    for text in ("List three fruits with bold names.", 'Show me {"name": "Venus"} as JSON.'):
        timeline.append(ev.UserText(text=text))
        end = conv.respond(actions=[ev.Action.RESPOND]).wait(60)
        assert end is not None and end.text.strip()
        assert not set(end.text) & set(SPOKEN_AVOID), end.text


def test_warm_up_does_the_token_scan_before_the_first_answer(backend):
    conv = Conversation(Timeline(), backend, _options())
    backend._tokens_with_cache.clear()
    conv.warm_up()
    assert set(backend._tokens_with_cache) == {SPOKEN_AVOID} and backend._tokens_with_cache[SPOKEN_AVOID]
    assert backend.cached_tokens == backend.context_tokens(conv.messages())  # and the prompt is evaluated
