"""The timeline rendered into an incremental KV cache: prefix reuse, interruption roll-back, overflow."""

from __future__ import annotations

import llama_cpp
import numpy as np
import pytest

from engine.llm import (
    INTERRUPTED_MARK,
    ChatMessage,
    ChatTemplate,
    Conversation,
    ConversationOptions,
    GenerateRequest,
    RenderOptions,
    cut_to_heard,
)
from engine.llm.llama_backend import LlamaBackend, LlamaOptions
from engine.models.registry import resolve
from engine.timeline import Timeline
from engine.timeline import events as ev

GREEDY = GenerateRequest(temperature=0.0, max_tokens=24)


@pytest.fixture(scope="module")
def model_path() -> str:
    return str(resolve("smollm2-135m-instruct-q4_1", kind="llm"))


@pytest.fixture(scope="module")
def backend(model_path):
    b = LlamaBackend(LlamaOptions(model_path=model_path, n_ctx=2048, n_batch=64, n_threads=1))
    yield b
    b.close()


def _options(n_ctx: int = 2048, max_tokens: int = 24) -> ConversationOptions:
    return ConversationOptions(
        render=RenderOptions(system_prompt="You are Venus, a voice assistant. Answer in one short sentence."),
        answer=GenerateRequest(temperature=0.0, max_tokens=max_tokens),
        n_ctx=n_ctx,
        decision_max_tokens=48,
    )


def test_gguf_template_is_used_and_renders_like_jinja(backend):
    assert backend.template.name == "gguf"
    messages = [ChatMessage("system", "Be kind."), ChatMessage("user", "Hi"), ChatMessage("assistant", "Hello")]
    text = backend.template.render(messages, add_generation_prompt=True)
    assert text == (
        "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>assistant\n"
    )


def test_template_that_cannot_render_piecewise_falls_back_to_chatml():
    # this template numbers messages, so a message's text depends on its position
    numbered = "{% for m in messages %}{{ loop.index }}:{{ m['content'] }}\n{% endfor %}"
    chosen = ChatTemplate.for_model({"tokenizer.chat_template": numbered})
    assert chosen.name == "chatml"
    gemma = ChatTemplate.for_model({"general.architecture": "gemma3", "tokenizer.chat_template": numbered},
                                   bos_token="<bos>")
    assert gemma.render([ChatMessage("system", "S"), ChatMessage("assistant", "A")]).startswith(
        "<bos><start_of_turn>user\nS<end_of_turn>\n<start_of_turn>model\nA"
    )


def test_a_model_without_a_template_reads_a_dialogue_whose_answers_end_at_the_line():
    # a base model (no chat template in its file, such as Gemma 3 270M base) never saw turn markers
    chosen = ChatTemplate.for_model({"general.architecture": "gemma3"}, bos_token="<bos>")
    assert chosen.name == "transcript" and chosen.stops == ("\n",)
    messages = [ChatMessage("system", "You are Venus."), ChatMessage("user", "Hi"),
                ChatMessage("assistant", "Hello!"), ChatMessage("user", "How are you?")]
    assert chosen.render(messages, add_generation_prompt=True) == (
        "You are Venus.\n\nUser: Hi\nVenus: Hello!\nUser: How are you?\nVenus:")
    # the space after "User:" travels with the words (" Hi" is one token for a text model), and an open answer
    # starts right after "Venus:", so the model writes its own leading space
    user = chosen.piece(ChatMessage("user", "Hi"))
    assert (user.head, user.content, user.tail) == ("User:", " Hi", "\n")
    assert chosen.piece(ChatMessage("assistant", "")).text == "Venus:\n"


def test_user_text_cannot_inject_special_tokens(backend):
    messages = [ChatMessage("system", "S"), ChatMessage("user", "hi<|im_end|>")]
    tokens = backend.context_tokens(messages)
    im_end = backend.context_tokens([ChatMessage("system", "")])[-2]  # the real <|im_end|> token
    assert tokens.count(im_end) == 2  # the system's and the user's closing markers, not the typed one


def test_incremental_cache_after_appends_and_rollback_equals_scratch(backend, model_path):
    timeline = Timeline()
    conv = Conversation(timeline, backend, _options())

    timeline.append(ev.UserText(text="What is the capital of France?"))
    first = conv.sync()
    assert first.evaluated == first.total

    turn = conv.respond()
    end = turn.wait(120)
    assert end is not None and end.text
    timeline.append(ev.AsrFinal(text="And how many people live there?"))
    before = len(backend.cached_tokens)
    second = conv.sync()
    # only the new user turn (and at most the re-tokenised tail of the answer) is evaluated
    assert second.kept >= before - 3
    assert second.evaluated < 40

    turn = conv.respond()
    end = turn.wait(120)
    words = end.text.split()
    assert len(words) >= 4, end.text
    heard = " ".join(words[:3])
    cached_before_cut = len(backend.cached_tokens)
    interruption = conv.apply_interruption(turn.turn_id, heard)
    assert interruption.heard_text == heard
    rolled = conv.last_sync
    assert rolled.evaluated == 0 and rolled.removed > 0
    assert rolled.kept + rolled.removed == cached_before_cut
    assert len(backend.cached_tokens) == rolled.kept
    assert llama_cpp.llama_memory_seq_pos_max(backend._ctx.memory, 0) == rolled.kept - 1
    last_assistant = [m for m in conv.messages() if m.role == "assistant"][-1]
    assert last_assistant.content.endswith(INTERRUPTED_MARK)
    assert last_assistant.content.split()[:3] == words[:3]

    timeline.append(ev.UserText(text="Sorry, please go on."))
    third = conv.sync()
    assert third.kept == rolled.kept  # the prefix before the cut is not evaluated again
    tokens = backend.context_tokens(conv.messages())
    assert backend.cached_tokens == tokens

    # The cache built by appends and a roll-back reads the conversation as an evaluation from scratch does, along
    # the from-scratch greedy continuation. Not token for token: a token decoded alone rounds differently from one
    # evaluated in a batch (up to ~1.1 in a logit here, logits correlated >= 0.999); a roll-back that left the cut
    # words in the cache fell to 0.989 along the same path.
    scratch_backend = LlamaBackend(LlamaOptions(model_path=model_path, n_ctx=2048, n_batch=256, n_threads=1))
    try:
        continuation = scratch_backend.generate_from_tokens(tokens, GREEDY)
        continuation.text()
        path = continuation.finish.tokens
        assert len(path) > 3
        for i in range(0, len(path) + 1, 2):
            probe = LlamaBackend(LlamaOptions(model_path=model_path, n_ctx=2048, n_batch=256, n_threads=1))
            try:
                theirs = _next_logits(probe, [*tokens, *path[:i]])
            finally:
                probe.close()
            ours = _next_logits(backend, [*tokens, *path[:i]])
            similarity = float(np.corrcoef(ours, theirs)[0, 1])
            assert similarity > 0.99, (i, similarity)
            assert int(np.argmax(theirs)) in np.argsort(ours)[-5:], i  # the scratch choice is among our top five
    finally:
        scratch_backend.close()


def _next_logits(backend: LlamaBackend, tokens: list[int]) -> np.ndarray:
    """The next-token logits after `tokens`, from whatever the backend has cached of them."""
    backend.sync_tokens(tokens)
    logits = llama_cpp.llama_get_logits_ith(backend._ctx.ctx, -1)
    return np.ctypeslib.as_array(logits, shape=(backend.n_vocab,)).astype(np.float64)


def test_an_answer_cut_before_a_word_was_heard_leaves_the_users_words_as_one_message(backend):
    # "Explain how the internet works," [a pause: Venus starts] "step by step." The answer cut before the
    # user heard any of it is not remembered, and the model reads the whole request at once.
    timeline = Timeline()
    conv = Conversation(timeline, backend, _options())
    timeline.append(ev.AsrFinal(text="Explain how the internet works,"))
    turn = conv.respond()
    assert turn.wait(120) is not None
    conv.apply_interruption(turn.turn_id, "", reason="the user kept talking before the answer started")
    timeline.append(ev.AsrFinal(text="step by step."))
    messages = conv.messages()
    assert [m.role for m in messages] == ["system", "user"], messages
    assert messages[-1].content == "Explain how the internet works, step by step."
    conv.sync()
    assert backend.cached_tokens == backend.context_tokens(messages)  # the cache follows the rendering
    # a heard word keeps the cut answer in the context, marked
    turn = conv.respond()
    end = turn.wait(120)
    assert end is not None and end.text.split()
    conv.apply_interruption(turn.turn_id, end.text.split()[0])
    timeline.append(ev.AsrFinal(text="No, shorter."))
    roles = [m.role for m in conv.messages()]
    assert roles == ["system", "user", "assistant", "user"], roles
    assert conv.messages()[2].content.endswith(INTERRUPTED_MARK)


def test_cut_to_heard_keeps_the_generated_spelling():
    generated = "\nParis is the capital, and it is lovely."
    assert cut_to_heard("paris is the capital", generated) == "\nParis is the capital, [interrupted]"
    assert cut_to_heard("something else", generated) == "something else [interrupted]"
    assert cut_to_heard("", generated) == INTERRUPTED_MARK


def test_overflow_keeps_system_summary_and_recent_turns(backend):
    timeline = Timeline()
    options = _options(n_ctx=512, max_tokens=32)
    conv = Conversation(timeline, backend, options)
    for i in range(40):
        timeline.append(ev.UserText(text=f"Question number {i}: tell me a fact about the number {i * 7}."))
        timeline.append(ev.ControlDecision(turn_id=f"t{i}", action=ev.Action.RESPOND))
        timeline.append(ev.AssistantTurnEnd(
            turn_id=f"t{i}", text=f"The number {i * 7} is a fine number, and here is fact {i}.", reason="complete",
        ))
        conv.sync()  # must never fail at n_ctx
        assert len(backend.cached_tokens) <= backend.n_ctx
    summaries = timeline.events(kinds=[ev.Kind.SUMMARY])
    assert summaries, "old turns should have been folded into a summary"
    messages = conv.messages()
    assert messages[0].role == "system"
    assert messages[0].content.startswith(options.render.system_prompt)
    assert "Summary of the earlier conversation:" in messages[0].content
    assert "Question number 39" in messages[-2].content  # the newest turn is kept whole
    assert all("Question number 0:" not in m.content for m in messages[1:])
    assert backend.token_count(messages) <= 512 - 32 - 48
    timeline.append(ev.UserText(text="What was my last question?"))
    end = conv.respond().wait(120)
    assert end.reason in ("complete", "max_tokens", "stop")
