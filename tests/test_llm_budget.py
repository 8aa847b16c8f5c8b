"""The spoken-length budget (issue #23 item 3): an answer stops after two sentences and offers to go on, its
decoding stopped at the cut, unless the user asked for more; a yes to the offer gets the rest. Through the real
session on the default model, with the default settings."""

from __future__ import annotations

import pytest

from engine.llm import OFFER, ChatMessage, SentenceBudget, asks_for_more, sentence_ends
from engine.llm.chunker import chunk_stream
from engine.settings import Settings
from engine.timeline import events as ev


def test_sentences_are_counted_as_the_chunker_cuts_them() -> None:
    assert sentence_ends("Dr. Smith lives on Baker St. in London. He is 3.5 metres tall! Really?") == 3
    budget = SentenceBudget(2)
    for chunk in ("Rome was founded,", "legend says, in 753 BC.", "It grew into an empire."):
        assert not budget.full
        budget.add(chunk)
    assert budget.full and budget.sentences == 2
    assert not SentenceBudget(0).full  # 0 = no budget
    with pytest.raises(ValueError):
        SentenceBudget(-1)


def test_the_numbers_of_a_numbered_list_end_no_sentence() -> None:
    # SmolLM2-135M answered "Add milk to my shopping list" with "1. Add milk to your shopping list\n2." and the
    # budget, counting "1." and "2." as two sentences, cut it there: "... shopping list 2. Want me to go on?"
    listing = "1. Add milk to your shopping list\n2. Buy eggs and bread.\n3) Call Mom."
    assert sentence_ends(listing) == 2
    assert list(chunk_stream(listing)) == ["1. Add milk", "to your shopping list\n2. Buy", "eggs and bread.",
                                           "3) Call Mom."]
    # a number that ends a sentence still ends it, at the start of a chunk too
    assert sentence_ends("I am 25.") == 1 and sentence_ends("Rooms: 12. Floors: 3.") == 2
    assert list(chunk_stream("The answer is, 25. Then we stop here.")) == ["The answer is,", "25.",
                                                                             "Then we stop here."]


@pytest.mark.parametrize("text", ["Tell me more about it in detail", "Can you explain that in detail?", "go on",
                                  "What's the rest of the story?", "List all the planets.", "Keep going please",
                                  "Tell me a long story about a dragon and a knight."])
def test_asking_for_more_lifts_the_budget(text: str) -> None:
    assert asks_for_more([ChatMessage("system", "Venus."), ChatMessage("user", text)])


@pytest.mark.parametrize("text", ["Tell me about the history of Rome.", "Hi", "What is more important, sleep or food?",
                                  "Yes"])
def test_an_ordinary_request_keeps_the_budget(text: str) -> None:
    assert not asks_for_more([ChatMessage("system", "Venus."), ChatMessage("user", text)])


def test_a_yes_to_the_offer_lifts_the_budget_and_only_then() -> None:
    offered = [ChatMessage("user", "Tell me about Rome."), ChatMessage("assistant", f"Rome is old. It was big. {OFFER}")]
    assert asks_for_more([*offered, ChatMessage("user", "Yes, please.")])
    assert asks_for_more([*offered, ChatMessage("user", "Sure")])
    assert not asks_for_more([*offered, ChatMessage("user", "No thanks, what time is it?")])
    for refusal in ("Okay, never mind.", "Yeah no, that's enough.", "OK, stop there.", "Sure, I'm good."):
        assert not asks_for_more([*offered, ChatMessage("user", refusal)]), refusal
    plain = [ChatMessage("user", "Is Rome old?"), ChatMessage("assistant", "Yes, very. Want a fact?")]
    assert not asks_for_more([*plain, ChatMessage("user", "Yes")])


@pytest.fixture(scope="module")
def new_session():
    """New text conversations on the default model (loaded once) with the default settings (two sentences)."""
    from engine.runtime.session import load_shared, open_session

    settings = Settings()
    assert settings.llm.max_spoken_sentences == 2
    shared = load_shared(settings, speech=False)
    yield lambda: open_session(settings, persist=False, shared=shared)
    shared.close()


def _ask(session, text: str) -> tuple[ev.AssistantTurnEnd, str, int]:
    """The answer's end event, its token stream as shown, and how many tokens the model decoded for it."""
    before, steps = len(session.timeline.events()), session.conversation.backend.decode_steps
    session.runtime.send_text(text)
    assert session.runtime.wait_idle(180), "Venus did not settle"
    events = session.timeline.events()[before:]
    ends = [e for e in events if isinstance(e, ev.AssistantTurnEnd)]
    assert len(ends) == 1, ends
    streamed = "".join(e.text for e in events if isinstance(e, ev.AssistantToken))
    return ends[0], streamed, session.conversation.backend.decode_steps - steps


def _tokens(session, text: str) -> int:
    count = session.conversation.backend.token_count
    return count([ChatMessage("assistant", text)]) - count([ChatMessage("assistant", "")])


def test_a_long_answer_is_cut_at_two_sentences_and_more_is_given_when_asked(new_session) -> None:
    asked = ["Tell me about the history of Rome.", "How do airplanes fly?", "Why is the ocean salty?",
             "How do volcanoes work?"]
    cut, longer = [], []
    for n, question in enumerate(asked):
        session = new_session()
        try:
            end, streamed, decoded = _ask(session, question)
            said = end.text.removesuffix(OFFER).strip()
            assert said and sentence_ends(said) <= 2, end.text
            if not end.text.endswith(OFFER):
                continue  # the model ended within the budget: nothing to go on with
            cut.append(question)
            assert end.reason == "budget"
            assert streamed.split() == end.text.split(), (streamed, end.text)  # the transcript shows what was said
            # the decode stopped at the cut: a few tokens past the said words at most, not the rest of the answer
            said_tokens = _tokens(session, said)
            assert decoded <= said_tokens + 4, (decoded, said_tokens, said)
            follow_up = "Yes" if n % 2 == 0 else "Tell me more about it in detail"
            more, _, _ = _ask(session, follow_up)
            # asked for more: never cut, no offer, and it goes on rather than saying the same again
            assert more.text.strip() and more.reason != "budget" and not more.text.endswith(OFFER), more
            context = session.conversation.messages()  # the yes follows the cut answer and its offer
            asked_more = context.index(ChatMessage("user", follow_up))
            assert context[asked_more - 1].content == end.text, context
            assert said[:40] not in more.text, (said, more.text)
            longer.append(sentence_ends(more.text))
        finally:
            session.close()
    assert len(cut) >= 2, f"questions that invite long answers were not cut ({cut})"
    assert max(longer) > 2, longer  # without the budget, an answer asked to go on says more than two sentences
