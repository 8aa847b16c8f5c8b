"""The working window: old turns fold into the summary, the recent turns stay cached, each turn costs the same."""

from __future__ import annotations

import llama_cpp
import pytest

from engine.llm import ChatMessage, Conversation, ConversationOptions, GenerateRequest, RenderOptions
from engine.llm.llama_backend import LlamaBackend
from engine.timeline import Timeline
from engine.timeline import events as ev

SYSTEM = "You are Venus, a voice assistant. Answer in one short sentence."


@pytest.fixture(scope="module")
def backend(small_llm):
    return small_llm


def _turns(n: int, start: int = 0) -> list[ChatMessage]:
    out = []
    for i in range(start, start + n):
        out += [ChatMessage("user", f"Question {i}: what is a good name for pet number {i}?"),
                ChatMessage("assistant", f"How about Biscuit {i}? It is short and friendly.")]
    return out


def _scripted(timeline: Timeline, i: int) -> None:
    timeline.append(ev.UserText(text=f"Question {i}: tell me a fact about the number {i * 7}."))
    timeline.append(ev.ControlDecision(turn_id=f"t{i}", action=ev.Action.RESPOND))
    timeline.append(ev.AssistantTurnEnd(turn_id=f"t{i}", text=f"The number {i * 7} is fine, and here is fact {i}.",
                                        reason="complete"))


def _positions(backend: LlamaBackend, seq: int) -> tuple[int, int]:
    mem = backend._ctx.memory
    return backend._call(lambda: (llama_cpp.llama_memory_seq_pos_min(mem, seq),
                                  llama_cpp.llama_memory_seq_pos_max(mem, seq)))


def test_splice_keeps_prefix_and_recent_turns_and_evaluates_only_the_middle(backend):
    backend.sync([ChatMessage("system", SYSTEM), *_turns(8)])
    before = len(backend.cached_tokens)
    folded = [ChatMessage("system", f"{SYSTEM}\n\nSummary of the earlier conversation: pet names 0 to 3."),
              *_turns(4, start=4)]
    target = backend.context_tokens(folded)
    stats = backend.splice(folded)

    assert backend.cached_tokens == target
    assert _positions(backend, 0) == (0, len(target) - 1)  # the kept turns were shifted down, no gap
    assert _positions(backend, 1) == (-1, -1)  # the helper sequence is gone
    recent = len(backend.context_tokens(_turns(4, start=4))) - 1  # (context_tokens adds nothing else here)
    assert stats.kept >= recent  # the four recent turns were not evaluated again
    assert 0 < stats.evaluated <= 30  # only the summary and the system message's end
    assert stats.kept + stats.evaluated == len(target) and stats.removed == before - stats.kept

    more = [*folded, ChatMessage("user", "And one for a kitten?")]
    after = backend.sync(more)
    assert after.kept == len(target)  # the spliced cache is a valid prefix for what comes next
    answer = backend.generate(more, GenerateRequest(temperature=0.0, max_tokens=12))
    assert answer.text().strip() and answer.finish.reason in ("complete", "max_tokens")


def test_splice_without_a_shared_tail_is_a_plain_sync(backend):
    backend.sync([ChatMessage("system", SYSTEM), *_turns(2)])
    other = [ChatMessage("system", SYSTEM), ChatMessage("user", "Something else entirely, please.")]
    stats = backend.splice(other)
    assert backend.cached_tokens == backend.context_tokens(other)
    assert stats.evaluated == stats.total - stats.kept
    assert _positions(backend, 0)[1] == len(backend.cached_tokens) - 1


def test_conversation_folds_into_the_working_window_without_reevaluating_recent_turns(backend):
    timeline = Timeline()
    options = ConversationOptions(render=RenderOptions(system_prompt=SYSTEM), n_ctx=2048, working_window=200,
                                  answer=GenerateRequest(temperature=0.0, max_tokens=16), decision_max_tokens=48)
    conv = Conversation(timeline, backend, options)
    conv.sync()
    limit = conv.window_limit()
    assert limit == conv._prefix_tokens() + 200
    folds = []
    for i in range(30):
        _scripted(timeline, i)
        conv.sync()
        summary = conv.compact()
        if summary is not None:
            folds.append(summary)
            stats = conv.last_sync
            assert stats.evaluated < stats.kept  # the recent turns stayed; only the summary was evaluated
        assert len(backend.cached_tokens) <= limit
        assert backend.cached_tokens == backend.context_tokens(conv.messages())  # the cache is the rendering
    assert len(folds) >= 3 and conv.folds == len(folds)
    assert [f.covers_until_seq for f in folds] == sorted(f.covers_until_seq for f in folds)
    messages = conv.messages()
    assert "Summary of the earlier conversation:" in messages[0].content
    assert "Question 29" in messages[-2].content
    assert all("Question 0:" not in m.content for m in messages[1:])
    first = folds[0]
    newest_folded = [e for e in timeline.events(kinds=[ev.Kind.USER_TEXT]) if e.seq <= first.covers_until_seq][-1]
    assert newest_folded.text.split(":")[0] in first.text  # folded turns live on in the summary

    appended = conv.prefill("What was the first number I asked about?")
    assert appended.kept == len(backend.context_tokens(messages))  # nothing before the new words evaluated again
    timeline.append(ev.UserText(text="What was the first number I asked about?"))
    end = conv.respond().wait(120)
    assert end is not None and end.reason in ("complete", "max_tokens", "stop")


def test_answers_are_followed_by_a_fold_once_the_window_is_full(backend):
    timeline = Timeline()
    options = ConversationOptions(render=RenderOptions(system_prompt=SYSTEM), n_ctx=2048, working_window=120,
                                  answer=GenerateRequest(temperature=0.0, max_tokens=24), decision_max_tokens=48)
    conv = Conversation(timeline, backend, options)
    for question in ("What is the capital of France?", "Name a large river.", "What is a good pet?",
                     "Why is the sky blue?", "Tell me about owls."):
        timeline.append(ev.UserText(text=question))
        end = conv.respond(actions=[ev.Action.RESPOND]).wait(120)
        assert end is not None and end.reason != "cancelled"  # wait() returns once the turn has also folded
    assert timeline.events(kinds=[ev.Kind.SUMMARY]), "five answered turns overflow a 120-token window"
    assert len(backend.cached_tokens) <= conv.window_limit() + 64  # within the window, plus the newest turn


def test_working_window_options_are_checked():
    with pytest.raises(ValueError, match="working_window"):
        ConversationOptions(working_window=10)
    with pytest.raises(ValueError, match="window_attention_share"):
        ConversationOptions(window_attention_share=0.0)


def test_auto_window_is_sized_from_the_model(backend):
    conv = Conversation(Timeline(), backend, ConversationOptions(render=RenderOptions(system_prompt=SYSTEM)))
    break_even = backend.attention_break_even()
    assert 1000 < break_even < 10000  # SmolLM2-135M: ~106M weight multiply-adds vs 34,560 per cached token
    assert conv.window_limit() == conv._prefix_tokens() + int(break_even * 0.15)
    off = Conversation(Timeline(), backend, ConversationOptions(working_window=-1))
    assert off.window_limit() is None and off.compact() is None
