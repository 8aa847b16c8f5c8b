"""The streaming decode loop: pieces as they come, cancel within one step, stop sequences, clause chunks."""

from __future__ import annotations

import threading
import time

import llama_cpp
import pytest

from engine.errors import ModelCorrupt, ModelNotFound
from engine.llm import ChatMessage, ChunkerOptions, ClauseChunker, GenerateRequest, chunk_stream
from engine.llm.backend import TokenStream
from engine.llm.llama_backend import LlamaBackend, LlamaOptions
from engine.models.registry import resolve

STORY = [
    ChatMessage("system", "You are a storyteller."),
    ChatMessage("user", "Tell me a long story about a dragon who learns to bake bread."),
]


@pytest.fixture(scope="module")
def backend():
    path = str(resolve("smollm2-135m-instruct-q4_1", kind="llm"))
    b = LlamaBackend(LlamaOptions(model_path=path, n_ctx=2048, n_batch=64, n_threads=1))
    yield b
    b.close()


def test_pieces_stream_and_match_the_finish_text(backend):
    stream = backend.generate(STORY, GenerateRequest(temperature=0.7, max_tokens=30, seed=7))
    pieces = list(stream)
    assert len(pieces) > 5
    assert "".join(pieces) == stream.finish.text
    assert stream.finish.reason in ("max_tokens", "complete")
    assert len(stream.finish.tokens) <= 30


def test_cancel_stops_within_one_decode_step(backend):
    stream = backend.generate(STORY, GenerateRequest(temperature=0.0, max_tokens=400))
    received = 0
    steps_at_cancel = None
    for _piece in stream:
        received += 1
        if received == 5:
            steps_at_cancel = backend.decode_steps
            stream.cancel()
    assert stream.finish.reason == "cancelled"
    assert steps_at_cancel is not None
    assert backend.decode_steps - steps_at_cancel <= 1
    assert len(stream.finish.tokens) < 400


def test_a_held_stream_pauses_between_steps_and_goes_on_when_released(backend):
    stream = backend.generate(STORY, GenerateRequest(temperature=0.0, max_tokens=60))
    pieces = iter(stream)
    next(pieces)  # decoding has started
    stream.hold()
    time.sleep(0.1)  # at most the step in flight finishes
    steps_held = backend.decode_steps
    time.sleep(0.4)
    assert backend.decode_steps - steps_held == 0
    stream.release()
    rest = list(pieces)
    assert rest and stream.finish.reason in ("max_tokens", "complete")
    assert backend.decode_steps > steps_held
    assert stream.held_s >= 0.4


def test_a_hold_lapses_and_cancel_ends_it(backend, monkeypatch):
    monkeypatch.setattr(TokenStream, "max_hold_s", 0.3)
    stream = backend.generate(STORY, GenerateRequest(temperature=0.0, max_tokens=20))
    stream.hold()  # never released: the lapse lets the answer finish anyway
    assert len(stream.text()) > 0 and stream.finish.reason in ("max_tokens", "complete")
    assert stream.held_s >= 0.3
    monkeypatch.setattr(TokenStream, "max_hold_s", 30.0)
    stream = backend.generate(STORY, GenerateRequest(temperature=0.0, max_tokens=200))
    pieces = iter(stream)
    next(pieces)
    stream.hold()
    time.sleep(0.1)
    started = time.monotonic()
    stream.cancel()
    list(pieces)
    assert stream.finish.reason == "cancelled" and time.monotonic() - started < 5.0


def test_cancel_aborts_a_long_prompt_and_leaves_a_consistent_cache(backend):
    long_user = " ".join(f"Item {i} is a blue box with a red lid." for i in range(150))
    messages = [ChatMessage("system", "You count boxes."), ChatMessage("user", long_user)]
    total = backend.token_count(messages)
    assert total > 1500
    backend.sync([ChatMessage("system", "x")])
    started = threading.Event()
    stream = backend.generate(messages, GenerateRequest(max_tokens=5))
    timer = threading.Timer(0.05, lambda: (started.set(), backend.cancel()))
    timer.start()
    stream.text()
    timer.join()
    assert stream.finish.reason == "cancelled"
    cached = backend.cached_tokens
    assert len(cached) < total
    assert llama_cpp.llama_memory_seq_pos_max(backend._ctx.memory, 0) == len(cached) - 1
    # the cache still works: a later sync continues from what was kept
    stats = backend.sync(messages)
    assert stats.kept == len(cached) and stats.evaluated == total - len(cached)


def test_stop_sequence_ends_the_answer_and_is_not_yielded(backend):
    """The answer ends where the stop sequence would begin: the same greedy decode, cut before its first "7"."""
    messages = [ChatMessage("system", "You list numbers."), ChatMessage("user", "Count from 1 to 20, separated by commas.")]
    # both runs evaluate the prompt from an empty cache, in the same batches, so their greedy paths are the same
    # on any CPU (a prompt token decoded alone rounds differently from one evaluated in a batch)
    backend.sync([ChatMessage("system", "x")])
    free = backend.generate(messages, GenerateRequest(temperature=0.0, max_tokens=60)).text()
    assert "7" in free, free  # counting to 20, the model writes a 7
    cut_at = free.index("7")
    backend.sync([ChatMessage("system", "x")])
    stream = backend.generate(messages, GenerateRequest(temperature=0.0, max_tokens=60, stop=("7",)))
    text = stream.text()
    assert stream.finish.reason == "stop"
    assert text == free[:cut_at]


def test_missing_and_broken_model_files_give_clear_errors(tmp_path):
    with pytest.raises(ModelNotFound, match="does not exist"):
        LlamaBackend(LlamaOptions(model_path=str(tmp_path / "nope.gguf")))
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelCorrupt, match="junk.gguf"):
        LlamaBackend(LlamaOptions(model_path=str(junk)))


def test_options_are_validated_up_front():
    with pytest.raises(ValueError, match="n_batch"):
        LlamaOptions(model_path="m.gguf", n_ctx=512, n_batch=1024)
    with pytest.raises(ValueError, match="temperature"):
        GenerateRequest(temperature=3.0)
    with pytest.raises(ValueError, match="stop"):
        GenerateRequest(stop=("",))


def test_chunker_cuts_clauses_early_and_keeps_abbreviations():
    text = "Sure, Dr. Smith arrives at 3.30 today. After that, we will walk to the old harbour together; then lunch!"
    pieces = [text[i:i + 3] for i in range(0, len(text), 3)]  # streamed in tiny pieces like tokens
    chunks = list(chunk_stream(pieces, ChunkerOptions(first_max_words=8)))
    assert chunks == [
        "Sure, Dr. Smith arrives at 3.30 today.",
        "After that, we will walk to the old harbour together;",
        "then lunch!",
    ]


def test_chunker_first_chunk_is_cut_at_first_max_words():
    # the voice starts after three words even when the first sentence is long
    chunks = list(chunk_stream(["The water cycle moves water between the sea, the sky and the land."]))
    assert chunks[0] == "The water cycle"
    assert " ".join(chunks) == "The water cycle moves water between the sea, the sky and the land."


def test_chunker_chunks_grow_from_the_first():
    # without punctuation each chunk may be twice as long as the one before, up to max_words
    words = [f"w{i}" for i in range(60)]
    chunks = list(chunk_stream([" ".join(words)], ChunkerOptions(first_max_words=3, max_words=20)))
    assert [len(c.split()) for c in chunks] == [3, 6, 12, 20, 19]
    assert " ".join(chunks).split() == words


def test_chunker_first_clause_is_short_and_long_runs_are_split():
    chunker = ClauseChunker(ChunkerOptions(first_clause_words=2, min_clause_words=4, max_words=6))
    out = chunker.push("Well, okay, so here is a very long run of words without any punctuation at all ")
    out += chunker.flush()
    assert out[0] == "Well, okay,"
    assert all(len(c.split()) <= 6 for c in out)
    assert " ".join(out) == "Well, okay, so here is a very long run of words without any punctuation at all"
