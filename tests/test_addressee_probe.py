"""Who words over Venus's voice are said to, read by the chat LLM (engine.runtime.addressee_probe), on the default
model. The sentences are written for this test, not taken from the benchmark's pools; outcomes are asserted with
margins, since the model's numbers differ a little between CPUs."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.llm import ChatMessage
from engine.runtime.addressee_probe import FRAME, AddresseeProbe, log_ratio
from engine.runtime.overlap import ConversationContext, OverlapFeatures, OverlapOptions, OverlapPolicy
from engine.settings import Settings
from engine.timeline import Timeline
from engine.timeline.events import OverlapKind

TO_VENUS = ["What year did they finish building it?", "Can you tell me how tall it is in feet?",
            "Why did they paint it orange?"]
TO_THE_ROOM = ["Did you feed the cat already?", "Honey, the kettle is boiling.", "I'm going to take a shower now, okay?"]
TOPIC = "How was the Golden Gate Bridge built?"
SPEAKING = "The Golden Gate Bridge was built in the nineteen thirties, and its towers"


@pytest.fixture(scope="module")
def backend():
    from engine.llm import open_backend

    backend = open_backend(Settings().llm)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def messages(backend):
    from engine.llm import Conversation, ConversationOptions

    system = Conversation(Timeline(), backend, ConversationOptions.from_settings(Settings().llm)).messages()
    return [*system, ChatMessage("user", TOPIC), ChatMessage("assistant", SPEAKING)]


def ratio(backend, messages, words: str) -> float:
    in_chat, at_home, tokens = backend.words_logprob(messages, words, FRAME)
    assert tokens > 0 and in_chat < 0 and at_home < 0
    return (in_chat - at_home) / tokens


def test_the_model_reads_questions_on_her_topic_as_said_to_her_and_household_talk_as_not(backend, messages) -> None:
    to_venus = [ratio(backend, messages, w) for w in TO_VENUS]
    to_room = [ratio(backend, messages, w) for w in TO_THE_ROOM]
    threshold = OverlapOptions().addressee_threshold
    assert min(to_venus) > threshold + 0.3, dict(zip(TO_VENUS, to_venus, strict=True))
    assert max(to_room) < threshold, dict(zip(TO_THE_ROOM, to_room, strict=True))
    assert min(to_venus) - max(to_room) > 1.0


def test_reading_the_words_leaves_the_conversations_cache_as_it_was(backend, messages) -> None:
    backend.sync(messages)
    before = backend.cached_tokens
    ratio(backend, messages, "Did you feed the cat already?")
    assert backend.cached_tokens == before
    # the cache still serves the conversation: the next read of the end of a turn works from it
    assert 0.0 <= backend.end_of_turn_probability(messages, "What time is it") <= 1.0


def overlap(words: str) -> OverlapFeatures:
    return OverlapFeatures(elapsed_ms=2200, speech_active=False, words=words, is_final=True, loudness_db=0.0,
                           speaker_similarity=0.9, duration_ms=2200)


def test_the_policy_keeps_talking_over_words_the_model_reads_as_said_to_the_room(backend, messages) -> None:
    policy = OverlapPolicy()
    asked: list[str] = []

    def score(words: str) -> float:
        asked.append(words)
        return ratio(backend, messages, words)

    context = ConversationContext(speaking_text=SPEAKING, topic_text=TOPIC, addressee_score=score)
    kept = policy.decide(overlap("I'm going to take a shower now, okay?"), context)
    assert kept.kind == OverlapKind.OTHER_ADDRESSEE and not kept.stop, kept.reason
    assert "chat model" in kept.reason and kept.scores["addressee_llm"] < policy.options.addressee_threshold
    stopped = policy.decide(overlap("Why did they paint it orange?"), context)
    assert stopped.stop, stopped.reason
    # the hard overrides are never put to the model: her name, a stop cue
    asked.clear()
    for words in ("Venus, did you feed the cat already?", "Wait, did you feed the cat already?"):
        assert policy.decide(overlap(words), context).stop
    assert asked == []
    # without the model's reading the word rules decide as before
    plain = policy.decide(overlap("I'm going to take a shower now, okay?"),
                          ConversationContext(speaking_text=SPEAKING, topic_text=TOPIC))
    assert plain.stop and "chat model" not in plain.reason


def test_the_probe_reads_on_the_llm_worker_and_only_for_the_model_it_was_fitted_on(backend) -> None:
    from engine.llm import Conversation, ConversationOptions

    conversation = Conversation(Timeline(), backend, ConversationOptions.from_settings(Settings().llm))
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-llm-worker")
    try:
        probe = AddresseeProbe(conversation, worker.submit, Settings().llm.model)
        assert probe.enabled
        value = probe.score("Did you feed the cat already?", wait_s=60)
        assert value is not None and value == pytest.approx(log_ratio(conversation, "Did you feed the cat already?"),
                                                            abs=1e-6)
        assert probe.score("   ", wait_s=1) is None
        assert not AddresseeProbe(conversation, worker.submit, "some-other-model").enabled
    finally:
        worker.shutdown(wait=True)


def test_a_voice_session_gives_the_overlap_policy_the_models_reading_on_a_thread_of_its_own(tmp_path) -> None:
    # the runtime as the app builds it: the scene hands the policy the probe, read on its own thread (not the
    # LLM control worker, where it would queue behind prefills and held answers)
    import threading

    import numpy as np
    import soundfile as sf

    from engine.runtime.session import open_session

    sf.write(tmp_path / "mic.wav", np.zeros(16000 * 5, np.float32), 16000)
    session = open_session(Settings(), mic=tmp_path / "mic.wav", speaker=tmp_path / "venus.wav", persist=False)
    try:
        assert session.runtime.wait_ready()
        context = session.runtime._machine._scene.context(None)
        assert context.addressee_score is not None

        def read(text: str) -> float | None:
            # The runtime waits 800 ms for a read (a real-time bound); the first read of a session also prefills the
            # conversation, which on a loaded 2-core CI machine took longer (CI, stop 40). The wiring is what this
            # test is for: ask again until the probe has the words (a later call returns the finished read).
            deadline = time.monotonic() + 120
            value = context.addressee_score(text)
            while value is None and time.monotonic() < deadline:
                time.sleep(0.1)
                value = context.addressee_score(text)
            return value

        to_family = read("Where did you put my keys?")
        to_her = read("What can you help me with?")
        assert to_family is not None and to_her is not None
        assert to_family < OverlapOptions().addressee_threshold < to_her, (to_family, to_her)
        assert any(t.name.startswith("venus-addressee") for t in threading.enumerate())
    finally:
        session.close()


def test_words_still_being_read_are_not_waited_on_twice(backend) -> None:
    # the loop asks again on a later tick: it must not block a second time on the same read
    import threading

    from engine.llm import Conversation, ConversationOptions

    conversation = Conversation(Timeline(), backend, ConversationOptions.from_settings(Settings().llm))
    jobs: list = []
    probe = AddresseeProbe(conversation, jobs.append, Settings().llm.model)  # jobs run when the test says so
    assert probe.score("Where did you put my keys?", wait_s=0.05) is None  # asked, not read yet
    answers: list = []
    again = threading.Thread(target=lambda: answers.append(probe.score("Where did you put my keys?", wait_s=600)),
                             daemon=True)
    again.start()
    again.join(timeout=30)
    assert not again.is_alive(), "the second call blocked on the read the first one asked for"
    assert answers == [None] and len(jobs) == 1  # no second wait, no second read
    jobs[0]()
    assert probe.score("Where did you put my keys?", wait_s=0) is not None


def test_a_read_runs_while_the_answers_decode_is_held_and_the_answer_goes_on_unchanged(backend, messages) -> None:
    # Found in a real-runtime trial: the read queued behind a long answer's decode on the backend's one thread, so
    # while a story was still being written the probe came too late and the word rules decided alone. Held for an
    # overlap, the decode now lets the read run between two of its steps.
    import threading

    from engine.llm import GenerateRequest

    story = [*messages[:-2], ChatMessage("user", "Tell me a long story about a lighthouse keeper.")]
    request = GenerateRequest(max_tokens=48, temperature=0.0)
    alone = backend.generate(story, request).text()

    stream = backend.generate(story, request)
    pieces = iter(stream)
    first = next(pieces)  # the decode is under way
    stream.hold()
    read: list[float] = []
    reader = threading.Thread(target=lambda: read.append(ratio(backend, messages, "Did you feed the cat already?")))
    reader.start()
    reader.join(timeout=30)
    assert read, "the read waited for the held answer"
    assert not stream.finished.is_set()  # it ran while the answer was held, not after it
    stream.release()
    assert first + "".join(pieces) == alone  # the answer's logits were its own again after the read
    assert read[0] < OverlapOptions().addressee_threshold
