"""The chat LLM's end-of-message probability (`LlamaBackend.end_of_turn_probability`), one of the end-of-turn
signals measured by bench/duplex/turn_signals.py: it counts sentence-final punctuation with the end marker, so
a whole sentence without its ASR punctuation scores far above a cut-off fragment, over a set, on any CPU."""

from __future__ import annotations

import pytest

from engine.errors import BackendError
from engine.llm import ChatMessage

CONTEXT = [ChatMessage("system", "You are a helpful voice assistant.")]
WHOLE = ["Could you dim the lights in the kitchen", "What's a good name for a hamster",
         "How many ounces are in a pound", "Please read me my last email", "Where did I park the car yesterday",
         "Wake me up at a quarter past seven"]
CUT_OFF = ["Could you dim the", "What's a good name for", "How many ounces are in", "Please read me my",
           "Where did I park the", "Wake me up at a"]


def test_whole_sentences_score_far_above_their_cut_off_starts(small_llm) -> None:
    whole = [small_llm.end_of_turn_probability(CONTEXT, t) for t in WHOLE]
    cut = [small_llm.end_of_turn_probability(CONTEXT, t) for t in CUT_OFF]
    assert all(0.0 <= p <= 1.0 for p in whole + cut)
    assert sum(w > 10 * c for w, c in zip(whole, cut, strict=True)) >= 5, list(zip(whole, cut, strict=True))
    assert min(whole) > 1e-3 and max(cut) < 1e-2, (whole, cut)


def test_the_end_marker_alone_would_miss_the_sentence_end(small_llm) -> None:
    """A chat model closes a sentence with a stop before it ends the message: without the punctuation mass the
    probability after a whole sentence is tiny."""
    marker = small_llm._special_tokens(small_llm.template.piece(ChatMessage("user", "")).tail)[0]
    closers = small_llm._sentence_end_tokens()
    assert len(closers) == 3 and marker not in closers
    assert sorted(small_llm.detokenize([t]) for t in closers) == ["!", ".", "?"]


def test_a_closed_backend_says_so(tmp_path) -> None:
    from engine.llm.llama_backend import LlamaBackend, LlamaOptions
    from engine.models.registry import resolve

    backend = LlamaBackend(LlamaOptions(model_path=str(resolve("smollm2-135m-instruct-q4_1", kind="llm")), n_ctx=256,
                                        n_batch=64, n_threads=1))
    backend.close()
    with pytest.raises(BackendError, match="closed"):
        backend.end_of_turn_probability(CONTEXT, "Could you dim the")
