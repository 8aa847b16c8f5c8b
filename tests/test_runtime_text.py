"""The foreground loop with the real default LLM and the real harness, typed input, text output."""

from __future__ import annotations

import contextlib
import threading

import pytest

from engine.llm import ChatMessage
from engine.runtime import Runtime, RuntimeOptions, TextMouth
from engine.settings import Settings
from engine.timeline import Timeline
from engine.timeline import events as ev


@pytest.fixture(scope="module")
def backend():
    from engine.llm import open_backend

    settings = Settings()
    settings.llm.n_threads = 2
    b = open_backend(settings.llm)
    yield b
    b.close()


def _session(backend, *, harness_permissions=None, on_clause=None, options=None, with_harness=True,
             max_tokens=48):
    from engine.llm import Conversation, ConversationOptions
    from harness import Harness

    settings = Settings()
    settings.llm.max_tokens = max_tokens
    settings.llm.temperature = 0.0
    if harness_permissions:
        settings.harness.permissions = harness_permissions
    timeline = Timeline()
    harness = Harness(settings.harness, timeline.append) if with_harness else None
    conversation = Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm),
                                tools=harness.tool_specs() if harness is not None else ())
    mouth = TextMouth(on_clause)
    runtime = Runtime(timeline, conversation, mouth, harness=harness, settings=settings,
                      options=options or RuntimeOptions(proactive_gap_ms=300)).start()
    return timeline, runtime, harness


@contextlib.contextmanager
def _held_overlap(backend, wait_until):
    """Venus telling a long story, the first clause held, and speech over it with no words yet: she is paused on
    it (a provisional stop at the deadline). Yields (timeline, runtime, segment start)."""
    first, release, slow_reader = _first_clause_held()
    timeline, runtime, _ = _session(backend, on_clause=slow_reader, with_harness=False, max_tokens=400)
    try:
        runtime.send_text("Tell me a long story about a dragon and a knight.")
        assert first.wait(60)
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start, overlapping_assistant=True))
        assert wait_until(lambda: runtime._overlap is not None and runtime._overlap.held)
        yield timeline, runtime, start
    finally:
        release.set()
        runtime.close()


def _first_clause_held():
    """A clause reader that holds the first clause until released: Venus keeps "speaking" it meanwhile."""
    first, release = threading.Event(), threading.Event()

    def slow_reader(turn_id: str, clause: str) -> None:
        first.set()
        release.wait(30)

    return first, release, slow_reader


def test_a_typed_question_gets_an_answer_through_the_state_machine(backend, wait_until) -> None:
    timeline, runtime, harness = _session(backend, with_harness=False)
    try:
        runtime.send_text("What is the capital of France?")
        assert wait_until(lambda: any(isinstance(e, ev.AssistantTurnEnd) for e in timeline.events()))
        assert runtime.wait_idle(60)
        events = timeline.events()
        decision = next(e for e in events if isinstance(e, ev.ControlDecision))
        end = next(e for e in events if isinstance(e, ev.AssistantTurnEnd))
        assert decision.turn_id == end.turn_id and end.text.strip()
        tokens = [e for e in events if isinstance(e, ev.AssistantToken) and e.turn_id == end.turn_id]
        assert "".join(t.text for t in tokens) == end.text
        states = [e.state for e in events if isinstance(e, ev.RuntimeState)]
        assert states[:2] == [ev.RuntimeStateName.LISTENING, ev.RuntimeStateName.THINKING]
        assert ev.RuntimeStateName.SPEAKING in states and states[-1] == ev.RuntimeStateName.LISTENING
    finally:
        runtime.close()
        if harness is not None:
            harness.shutdown()


def test_stop_cuts_the_answer_to_what_was_delivered_and_a_new_question_is_answered(backend, wait_until) -> None:
    release = threading.Event()
    delivered: list[str] = []

    def slow_reader(turn_id: str, clause: str) -> None:
        delivered.append(clause)
        release.wait(30)  # the "listener" takes its time with the first clause

    timeline, runtime, harness = _session(backend, on_clause=slow_reader, with_harness=False)
    try:
        runtime.send_text("Tell me a long story about a dragon and a knight.")
        assert wait_until(lambda: delivered)
        runtime.stop_talking()
        release.set()
        assert wait_until(lambda: any(isinstance(e, ev.Interruption) for e in timeline.events()))
        cut = next(e for e in timeline.events() if isinstance(e, ev.Interruption))
        assert cut.heard_text == delivered[0].strip()
        assert cut.reason == "the user pressed stop"
        # the model's context remembers only what was heard, marked as interrupted
        from engine.llm import INTERRUPTED_MARK

        remembered = [m for m in runtime.conversation.messages() if m.role == "assistant"]
        assert remembered[-1].content.endswith(INTERRUPTED_MARK)
        assert remembered[-1].content.lstrip().startswith(delivered[0].strip()[:10])
        runtime.send_text("What is two plus two?")
        assert wait_until(lambda: sum(isinstance(e, ev.AssistantTurnEnd) for e in timeline.events()) >= 2)
        assert runtime.wait_idle(60)
    finally:
        release.set()
        runtime.close()


def test_ask_tool_confirmation_by_voice_then_result_is_delivered_after_a_gap(backend, tmp_path, wait_until) -> None:
    timeline, runtime, harness = _session(backend, harness_permissions={"create_note": "ask"})
    try:
        task = harness.submit("create_note", {"title": "shopping", "text": "milk and eggs"})
        assert wait_until(lambda: any(isinstance(e, ev.ConfirmationRequested) for e in timeline.events()))
        # Venus asks out loud (a fixed sentence, no model involved) at the next gap
        assert wait_until(lambda: any(isinstance(e, ev.AssistantTurnEnd) and "Say yes or no." in e.text
                                 for e in timeline.events()))
        # the user answers as they would by voice, once the question has been said (the turn's text is on the
        # timeline as it starts; a "yes" over the question itself is an overlap, judged as one)
        assert runtime.wait_idle(30)
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start))
        timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=start + 900))
        timeline.append(ev.AsrFinal(text="Yes, go ahead.", segment_start_ms=start, segment_end_ms=start + 900))
        assert wait_until(lambda: any(isinstance(e, ev.ConfirmationAnswered) for e in timeline.events()))
        answer = next(e for e in timeline.events() if isinstance(e, ev.ConfirmationAnswered))
        assert answer.task_id == task and answer.approved and answer.source == "voice"
        assert wait_until(lambda: any(isinstance(e, ev.DelegationResult) for e in timeline.events()))
        result = next(e for e in timeline.events() if isinstance(e, ev.DelegationResult))
        # the result is woven in by an LLM turn that may only answer in words, after the user went quiet
        # (Venus's fixed "Okay, going ahead." for the yes is a notice turn, not the weave)
        def weave() -> ev.ControlDecision | None:
            notices = {e.turn_id for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd) and e.reason == "notice"}
            return next((e for e in timeline.events() if isinstance(e, ev.ControlDecision) and e.seq > result.seq
                         and e.turn_id not in notices), None)

        assert wait_until(lambda: weave() is not None)
        follow_up = weave()
        assert follow_up.action == ev.Action.RESPOND
        # it waited for a quiet gap (300 ms here) after the last thing said, the user's or Venus's own "Okay, going
        # ahead.", instead of jumping in (measured from the quiet, not from the result: the result may come late)
        before = [e for e in timeline.events() if e.seq < follow_up.seq]
        quiet_since = max(e.t_ms for e in before if isinstance(e, ev.UserSpeechEnd) or (
            isinstance(e, ev.RuntimeState) and e.state == ev.RuntimeStateName.LISTENING))
        assert follow_up.t_ms - quiet_since >= 250
        assert runtime.wait_idle(60)
    finally:
        runtime.close()
        if harness is not None:
            harness.shutdown()


def test_partial_words_reach_the_model_cache_before_the_final(backend, wait_until) -> None:
    # The perception side (tested with real audio in test_runtime_speech) posts partials while the user
    # speaks; the runtime hands the newest one to the model, so its tokens are cached before the turn ends.
    timeline, runtime, _ = _session(backend, with_harness=False)
    try:
        assert runtime.wait_idle(60)  # the system prompt is prefilled
        words = "Could you tell me how far away the moon is"
        timeline.append(ev.UserSpeechStart(start_ms=100))
        timeline.append(ev.AsrPartial(text=words, segment_start_ms=100))
        expected = backend.context_tokens([*runtime.conversation.messages(), ChatMessage("user", words)])
        assert wait_until(lambda: backend.cached_tokens[: len(expected)] == expected, timeout=30)
        assert not timeline.events(kinds=[ev.Kind.CONTROL_DECISION])  # nothing was answered yet
    finally:
        runtime.close()


@pytest.mark.parametrize("hold", [True, False])
def test_the_answer_waits_while_speech_over_venus_is_judged(backend, wait_until, hold) -> None:
    # CPU sharing: while speech over Venus is judged, the answer (seconds ahead of the voice) stops decoding,
    # so whisper has the core; once the words show it was meant for someone else, the answer goes on.
    first, release, slow_reader = _first_clause_held()  # Venus is "speaking" the first clause all along

    timeline, runtime, _ = _session(backend, on_clause=slow_reader, with_harness=False, max_tokens=400,
                                    options=RuntimeOptions(proactive_gap_ms=300, hold_answer_during_overlap=hold))
    try:
        runtime.send_text("Tell me a long story about a dragon and a knight.")
        assert first.wait(60)
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start, overlapping_assistant=True))
        assert wait_until(lambda: runtime._overlap is not None)
        steps = backend.decode_steps
        assert wait_until(lambda: timeline.events(kinds=[ev.Kind.OVERLAP_DECISION]))  # provisional, no words
        threading.Event().wait(0.5)
        moved = backend.decode_steps - steps
        assert (moved <= 1) if hold else (moved > 1), moved
        timeline.append(ev.AsrPartial(text="Mike, did you feed the cat?", segment_start_ms=start))
        assert wait_until(lambda: any(e.verdict == ev.OverlapKind.OTHER_ADDRESSEE
                                      for e in timeline.events(kinds=[ev.Kind.OVERLAP_DECISION])))
        steps = backend.decode_steps
        assert wait_until(lambda: backend.decode_steps > steps + 3)  # released: the answer goes on
        assert not timeline.events(kinds=[ev.Kind.INTERRUPTION])
    finally:
        release.set()
        runtime.close()


def test_the_answer_starts_on_every_core_and_gives_them_back_to_the_voice(backend, wait_until) -> None:
    # From the end of the user's turn to the first clause nothing else needs the CPU: the decision and the
    # first words decode with answer_start_threads; the rest of the answer with the configured count.
    base = backend.n_threads  # the default backend is in process: a remote one has no threads to share
    before = dict(backend.steps_by_threads)
    timeline, runtime, _ = _session(backend, with_harness=False, max_tokens=40,
                                    options=RuntimeOptions(proactive_gap_ms=300, answer_start_threads=base + 1))
    try:
        runtime.send_text("Tell me about the history of Rome in a few sentences.")
        assert wait_until(lambda: any(isinstance(e, ev.AssistantTurnEnd) for e in timeline.events()))
        assert runtime.wait_idle(60)
    finally:
        runtime.close()
    steps = {n: backend.steps_by_threads.get(n, 0) - before.get(n, 0) for n in (base, base + 1)}
    end = next(e for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd))
    assert len(end.text.split()) > 4, end.text  # more than the first clause was written
    assert steps[base + 1] > 0 and steps[base] > 0, steps
    assert backend.threads_in_use == base


def test_the_end_of_turn_probe_reads_the_final_words_on_every_core(backend, wait_until) -> None:
    # Once the final is in, the recogniser has nothing left to decode: the LLM's judgement of the final words
    # (whose end the last partial did not have) runs on every core, and the cores go back after it while the
    # turn goes on waiting (the words are cut off, so Venus waits for more of them).
    base = backend.n_threads
    timeline, runtime, _ = _session(backend, with_harness=False,
                                    options=RuntimeOptions(proactive_gap_ms=300, answer_start_threads=base + 1))
    try:
        assert runtime.wait_ready(120)
        before = backend.steps_by_threads.get(base + 1, 0)
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start))
        timeline.append(ev.AsrPartial(text="Could you", segment_start_ms=start))
        timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=start + 900))
        timeline.append(ev.AsrFinal(text="Could you look up the train times from Leeds to the",
                                    segment_start_ms=start, segment_end_ms=start + 900))
        assert wait_until(lambda: backend.steps_by_threads.get(base + 1, 0) > before, timeout=30)
        assert not timeline.events(kinds=[ev.Kind.CONTROL_DECISION]), "the words are cut off: the turn waits"
        assert wait_until(lambda: backend._threads_wanted == base, timeout=10), "the cores go back after it"
    finally:
        runtime.close()


def test_a_held_answer_goes_on_once_two_partials_agree_on_a_lone_word_that_is_no_cue(backend, wait_until) -> None:
    # Speech over Venus with no words by the deadline pauses the answer. "Tom, turn the oven off" decodes as
    # "Time." twice before the rest is heard: once is not enough to go on, twice is (a name whisper does not
    # know), and the answer resumes without waiting for the rest of the sentence.
    with _held_overlap(backend, wait_until) as (timeline, runtime, start):
        timeline.append(ev.AsrPartial(text="Time.", segment_start_ms=start))
        threading.Event().wait(0.3)
        assert runtime._overlap is not None and runtime._overlap.held  # one lone word: still paused
        timeline.append(ev.AsrPartial(text="Time.", segment_start_ms=start))
        assert wait_until(lambda: any(e.verdict == ev.OverlapKind.OTHER_ADDRESSEE and "lone word" in e.reason
                                      for e in timeline.events(kinds=[ev.Kind.OVERLAP_DECISION])))
        assert wait_until(lambda: runtime._overlap is not None and not runtime._overlap.held)
        assert not timeline.events(kinds=[ev.Kind.INTERRUPTION])


def test_the_assistants_name_cut_short_stops_venus_and_an_empty_final_leaves_her_listening(backend, wait_until) -> None:
    # "Venus," and a breath while she speaks: the only partial is "V." and whisper's final of the word alone is
    # empty. She yields to the name; the empty final means nothing is left to wait for, so she listens again
    # (she used to wait in "yielding" for words that were never coming).
    with _held_overlap(backend, wait_until) as (timeline, runtime, start):
        timeline.append(ev.AsrPartial(text="V.", segment_start_ms=start))
        timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=start + 600))
        assert wait_until(lambda: any("assistant's name" in e.reason
                                      for e in timeline.events(kinds=[ev.Kind.INTERRUPTION])))
        timeline.append(ev.AsrFinal(text="", segment_start_ms=start, segment_end_ms=start + 600))
        assert wait_until(lambda: runtime.state == ev.RuntimeStateName.LISTENING)
        assert not runtime._awaiting_final


@pytest.mark.parametrize("blocks_before_report", [8, 5])
def test_quiet_speech_the_vad_reports_late_is_measured_from_its_onset_and_never_pauses_venus(
        backend, wait_until, blocks_before_report: int) -> None:
    # The VAD reports quiet speech across the room 300-400 ms after it began (start_ms is the onset), so the
    # deadline has passed when the overlap opens. The mic levels of those blocks were heard already: they count
    # for its loudness, and speech 22 dB below the user's is background at once, with no pause. (When only the
    # blocks after the report counted, it paused Venus for 400 ms with no words and no level to go on.) Reported
    # with fewer blocks than the level needs, quiet so far, the verdict waits for the rest rather than pause.
    first, release, slow_reader = _first_clause_held()  # Venus is "speaking" the first clause all along

    timeline, runtime, _ = _session(backend, on_clause=slow_reader, with_harness=False, max_tokens=400)
    try:
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start, overlapping_assistant=False))
        assert wait_until(lambda: runtime.state == ev.RuntimeStateName.USER_SPEAKING)
        for _ in range(30):  # 1.5 s of the user's voice calibrates their level
            runtime.on_level(-18.0)
        end = timeline.now_ms()
        timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=end))
        timeline.append(ev.AsrFinal(text="Tell me a long story about a dragon and a knight.",
                                    segment_start_ms=start, segment_end_ms=end))
        assert first.wait(60)
        onset = timeline.now_ms()
        for _ in range(blocks_before_report):  # TV speech at -40 dBFS before the VAD says so, 50 ms a block
            threading.Event().wait(0.05)
            runtime.on_level(-40.0)
        timeline.append(ev.UserSpeechStart(start_ms=onset, overlapping_assistant=True))
        for _ in range(8 - blocks_before_report):
            threading.Event().wait(0.05)
            runtime.on_level(-40.0)
        assert wait_until(lambda: timeline.events(kinds=[ev.Kind.OVERLAP_DECISION]))
        first_verdict = timeline.events(kinds=[ev.Kind.OVERLAP_DECISION])[0]
        assert first_verdict.verdict == ev.OverlapKind.BACKGROUND, first_verdict.reason
        assert "22 dB below" in first_verdict.reason, first_verdict.reason
        assert runtime._overlap is not None and not runtime._overlap.held
        assert not timeline.events(kinds=[ev.Kind.INTERRUPTION])
    finally:
        release.set()
        runtime.close()
