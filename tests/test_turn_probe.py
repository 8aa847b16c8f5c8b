"""End of turn with the chat LLM's own judgement (engine.runtime.turn_probe): the default model read on its worker,
fused with the lexical model. The sentences here are written for this test, not taken from the benchmark's pools.
Outcomes are asserted over sets, with margins: the model's numbers differ a little between CPUs."""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.runtime.turn_probe import TurnProbe
from engine.runtime.turn_taking import EndOfTurnDetector
from engine.runtime.user_turn import TurnEnd, UserTurn
from engine.settings import Settings
from engine.timeline import Timeline

# cut off where a speaker stops to think: after a preposition, an article, a conjunction, a possessive
FRAGMENTS = ["Could you look up the train times to", "I need to send a long message to my", "Please add eggs and",
             "How many days are left until the", "Remind me to water the", "What's the best way to cook a"]
WHOLE = ["How tall is Mount Everest?", "Please turn off the kitchen lights.", "What's the capital of Canada?",
         "Is this your first time doing this?", "What time is it?", "I'd like to hear some music."]


@pytest.fixture(scope="module")
def conversation():
    from engine.llm import Conversation, ConversationOptions, open_backend

    settings = Settings()
    backend = open_backend(settings.llm)
    yield Conversation(Timeline(), backend, ConversationOptions.from_settings(settings.llm))
    backend.close()


@pytest.fixture
def probe(conversation):
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-llm-worker")
    yield TurnProbe(conversation, worker.submit, Settings().llm.model)
    worker.shutdown(wait=True)


def judged(probe: TurnProbe, text: str) -> float:
    value, coming = probe.lookup(text)
    deadline = time.monotonic() + 60
    while coming and time.monotonic() < deadline:
        time.sleep(0.01)
        value, coming = probe.lookup(text)
    assert not coming and value is not None, f"no judgement of {text!r}"
    return value


def test_the_llm_tells_cut_off_words_from_whole_turns(probe) -> None:
    fragments = [judged(probe, t) for t in FRAGMENTS]
    whole = [judged(probe, t) for t in WHOLE]
    assert max(fragments) < 0.2, dict(zip(FRAGMENTS, fragments, strict=True))
    assert sum(p > 0.5 for p in whole) >= len(WHOLE) - 1, dict(zip(WHOLE, whole, strict=True))


def test_the_fused_detector_waits_through_a_pause_after_a_fragment_and_answers_a_whole_turn_soon(probe) -> None:
    detector = EndOfTurnDetector()
    fragment_ms = [detector.decide(0, t, is_final=True, llm_probability=judged(probe, t)).required_silence_ms
                   for t in FRAGMENTS]
    whole_ms = [detector.decide(0, t, is_final=True, llm_probability=judged(probe, t)).required_silence_ms
                for t in WHOLE]
    assert min(fragment_ms) >= 1200, dict(zip(FRAGMENTS, fragment_ms, strict=True))
    assert sorted(whole_ms)[len(whole_ms) // 2] <= 600, dict(zip(WHOLE, whole_ms, strict=True))
    assert max(whole_ms) < min(fragment_ms)


def test_without_an_answer_from_the_model_the_turn_waits_a_little_then_the_lexical_model_decides(conversation) -> None:
    jobs: list = []
    # a worker busy with something else: the job never runs
    busy = TurnProbe(conversation, jobs.append, Settings().llm.model)
    turn = UserTurn(texts=["What's the capital of Canada?"], silence_since=0)
    detector = EndOfTurnDetector()
    kwargs = dict(final_wait_ms=8000, closed=lambda text: False, probe=busy, probe_wait_ms=600)
    assert turn.end(590, detector, **kwargs) == TurnEnd.WAIT
    assert len(jobs) == 1, "the words are asked about once"
    lexical = detector.decide(601, turn.text, is_final=True)
    assert lexical.end_of_turn, lexical.reason  # the lexical model alone ends it by now
    assert turn.end(601, detector, **kwargs) == TurnEnd.OVER
    assert len(jobs) == 1


def test_another_chat_model_than_the_probes_leaves_the_lexical_model_deciding(conversation) -> None:
    # the probe reads the default model's logits; another model's are weighed differently
    probe = TurnProbe(conversation, lambda job: pytest.fail("nothing is asked"), "gemma3-270m-q4_k_m")
    assert not probe.enabled and probe.lookup("Please add eggs and") == (None, False)


def test_a_closed_worker_leaves_the_lexical_model_deciding(conversation) -> None:
    worker = ThreadPoolExecutor(max_workers=1)
    worker.shutdown()
    # Venus is closing: nothing more runs on the LLM worker
    probe = TurnProbe(conversation, worker.submit, Settings().llm.model)
    assert probe.lookup("Please add eggs and") == (None, False)
    assert probe.lookup("Please add eggs and") == (None, False)


def test_a_backend_that_cannot_read_its_logits_leaves_the_lexical_model_deciding() -> None:
    from engine.llm import Conversation, ConversationOptions
    from engine.llm.remote import RemoteBackend, RemoteOptions

    settings = Settings()
    remote = RemoteBackend(RemoteOptions(base_url="http://127.0.0.1:9/v1", model="any"))
    conversation = Conversation(Timeline(), remote, ConversationOptions.from_settings(settings.llm))
    probe = TurnProbe(conversation, lambda job: pytest.fail("nothing is asked of a remote model"),
                      settings.llm.model)
    assert not probe.enabled and probe.lookup("Please add eggs and") == (None, False)


def _runtime(conversation):
    from engine.runtime import Runtime, RuntimeOptions, TextMouth

    return Runtime(conversation.timeline, conversation, TextMouth(lambda turn_id, clause: None),
                   settings=Settings(), options=RuntimeOptions()).start()


@contextlib.contextmanager
def _live(conversation_class=None):
    """A started runtime on the default chat model (answers cut at 8 tokens): (conversation, runtime)."""
    from engine.llm import Conversation, ConversationOptions, open_backend

    settings = Settings()
    settings.llm.max_tokens = 8
    backend = open_backend(settings.llm)
    conversation = (conversation_class or Conversation)(Timeline(), backend,
                                                        ConversationOptions.from_settings(settings.llm))
    runtime = _runtime(conversation)
    try:
        yield conversation, runtime
    finally:
        runtime.close()
        backend.close()


def _say(timeline, text: str, seconds: float = 1.0) -> None:
    from engine.timeline import events as ev

    start = timeline.now_ms()
    timeline.append(ev.UserSpeechStart(start_ms=start))
    time.sleep(seconds)
    end = timeline.now_ms()
    timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=end))
    timeline.append(ev.AsrFinal(text=text, segment_start_ms=start, segment_end_ms=end))


def test_the_runtime_waits_through_a_pause_after_a_fragment_and_answers_once_it_is_whole() -> None:
    # the final words are on the timeline (so in the conversation's context) when the probe reads them
    from engine.timeline import events as ev

    with _live() as (conversation, _runtime_):
        timeline = conversation.timeline
        _say(timeline, "Could you look up the train times to")
        time.sleep(1.5)  # a pause to think of the place
        assert not timeline.events(kinds=[ev.Kind.CONTROL_DECISION]), "Venus cut into the pause"
        _say(timeline, "Boston for tomorrow morning?")
        deadline = time.monotonic() + 1.5
        while not timeline.events(kinds=[ev.Kind.CONTROL_DECISION]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert timeline.events(kinds=[ev.Kind.CONTROL_DECISION]), "the whole request got no answer"


def _decisions(timeline) -> int:
    from engine.timeline import events as ev

    return len(timeline.events(kinds=[ev.Kind.CONTROL_DECISION]))


def _decided_within(timeline, seconds: float, before: int = 0) -> bool:
    deadline = time.monotonic() + seconds
    while _decisions(timeline) == before and time.monotonic() < deadline:
        time.sleep(0.02)
    return _decisions(timeline) > before


def test_the_words_decoded_at_a_pause_are_judged_before_the_segment_closes() -> None:
    # They are the segment's final if the pause holds: the model reads them at once, on every core (the recogniser
    # is idle in a pause), so the turn's end does not wait for the probe once the VAD closes the segment.
    # An ordinary partial is not judged: the words are still coming.
    import psutil

    from engine.llm import Conversation
    from engine.timeline import events as ev

    class Recording(Conversation):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.judged: list[str] = []

        def next_token_logprobs(self, text, groups):
            self.judged.append(text)
            return super().next_token_logprobs(text, groups)

    with _live(Recording) as (conversation, runtime):
        timeline, backend = conversation.timeline, conversation.backend
        assert runtime.wait_ready(120)
        steps = dict(backend.steps_by_threads)
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start))
        timeline.append(ev.AsrPartial(text="What's the capital of", segment_start_ms=start))
        time.sleep(0.5)
        assert conversation.judged == [], "an ordinary partial was judged"
        timeline.append(ev.AsrPartial(text="What's the capital of Canada?", segment_start_ms=start, at_pause=True))
        deadline = time.monotonic() + 10
        while not conversation.judged and time.monotonic() < deadline:
            time.sleep(0.02)
        assert conversation.judged == ["What's the capital of Canada"]
        assert _decisions(timeline) == 0, "the segment is still open: no answer yet"
        lent = {n: count - steps.get(n, 0) for n, count in backend.steps_by_threads.items() if n > backend.n_threads}
        if (psutil.cpu_count(logical=False) or 1) > backend.n_threads:
            assert sum(lent.values()) >= 1, backend.steps_by_threads  # the words were evaluated on every core


def test_a_greeting_or_a_how_are_you_is_answered_after_a_short_silence() -> None:
    # The 135M model reads "Hi" and "How are you?" as the start of a longer message (probe 0.30 and 0.19: 2.1 and
    # 2.5 s of silence); said alone they are whole, and a listener answers at once. Words after a greeting are not.
    with _live() as (conversation, runtime):
        timeline = conversation.timeline
        assert runtime.wait_ready(120)
        _say(timeline, "Hi, could you", seconds=0.6)
        assert not _decided_within(timeline, 1.2), "Venus answered a greeting that went on"
        _say(timeline, "tell me a joke?", seconds=0.6)
        assert _decided_within(timeline, 3.0)
        for greeting in ("Hi", "How are you?"):
            runtime.wait_idle(30)
            before = _decisions(timeline)
            _say(timeline, greeting, seconds=0.5)
            assert _decided_within(timeline, 1.2, before), f"{greeting!r} waited"  # the probe alone: 2.1-2.5 s


def test_a_request_the_intents_parse_waits_no_longer_than_a_short_pause() -> None:
    # "Launch the terminal." could grow, and a model that reads it as unfinished would hold it up to 2 s; a
    # request the templates parse into a tool call as heard ends after request_max_silence_ms at most
    from engine.intents import IntentContext, IntentMatcher
    from engine.runtime.turn_taking import EndOfTurnOptions, NeutralTurnModel

    matcher = IntentMatcher.load()

    def actionable(text: str) -> bool:
        match = matcher.match(text, IntentContext())
        return match is not None and not match.clarify

    unsure = EndOfTurnDetector(NeutralTurnModel(0.0))  # reads every turn as unfinished: 1.8 s of silence
    cap = unsure.options.request_max_silence_ms
    request = UserTurn(texts=["Launch the terminal."], silence_since=0)
    talk = UserTurn(texts=["I went to the park with my"], silence_since=0)
    kwargs = dict(final_wait_ms=8000, closed=lambda text: False, actionable=actionable)
    assert request.end(cap - 10, unsure, **kwargs) == TurnEnd.WAIT
    assert request.end(cap, unsure, **kwargs) == TurnEnd.OVER
    assert talk.end(cap, unsure, **kwargs) == TurnEnd.WAIT  # no request: the words decide, and they wait
    assert request.end(cap, unsure, final_wait_ms=8000, closed=lambda text: False) == TurnEnd.WAIT  # without
    assert EndOfTurnOptions.from_base_silence(1000).request_max_silence_ms == 2 * cap  # follows the setting
