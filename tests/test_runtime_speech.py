"""The whole runtime with the real voice on file devices: background results wait for the answer to end."""

from __future__ import annotations

import time

import numpy as np
import pytest
import soundfile as sf

from engine.runtime.session import open_session
from engine.settings import Settings
from engine.timeline import events as ev


def test_results_finishing_mid_answer_are_spoken_after_it_not_over_it(tmp_path, wait_until) -> None:
    mic = tmp_path / "quiet-room.wav"
    sf.write(mic, np.zeros(16000 * 90, np.float32), 16000)  # the user stays quiet and listens
    settings = Settings()
    settings.llm.temperature = 0.0
    settings.llm.max_tokens = 80
    session = open_session(settings, mic=mic, speaker=tmp_path / "venus.wav", persist=False, harness=True)
    timeline = session.timeline
    # The harness runs the tasks; the model is offered no tools here, so the 135M model answers the story
    # instead of trying to delegate it (its choice is not what this test is about).
    session.conversation.tools = ()
    try:
        session.runtime.send_text("Tell me a story about the sea.")
        assert wait_until(lambda: any(isinstance(e, ev.RuntimeState) and e.state == ev.RuntimeStateName.SPEAKING
                                 for e in timeline.events())), [
            (e.kind, getattr(e, "text", ""), getattr(e, "action", "")) for e in timeline.events()
            if e.kind != ev.Kind.ASSISTANT_TOKEN]
        # Venus is talking now: two background jobs finish while she does
        reminder = session.harness.submit("set_timer", {"seconds": 1, "text": "the tea is ready"})
        calculation = session.harness.submit("calculate", {"expression": "6 * 7"})
        assert wait_until(lambda: any(isinstance(e, ev.AssistantTurnEnd) and e.reason == "notice"
                                 for e in timeline.events()))
        assert wait_until(lambda: any(isinstance(e, ev.DelegationResult) and e.task_id == calculation
                                 for e in timeline.events()))
        result = next(e for e in timeline.events() if isinstance(e, ev.DelegationResult) and e.task_id == calculation)
        assert wait_until(lambda: any(isinstance(e, ev.ControlDecision) and e.seq > result.seq
                                 for e in timeline.events()))
        assert session.runtime.wait_idle(180)
    finally:
        session.close()
    events = timeline.events()
    spans = [e for e in events if isinstance(e, ev.SpeechSpan) and e.end_sample > e.start_sample]
    first_decision = next(e for e in events if isinstance(e, ev.ControlDecision))
    answer = [s for s in spans if s.turn_id == first_decision.turn_id]
    fired = next(e for e in events if isinstance(e, ev.ReminderFired))
    notice_turn = next(e for e in events if isinstance(e, ev.AssistantTurnEnd) and e.reason == "notice")
    notice = [s for s in spans if s.turn_id == notice_turn.turn_id]
    follow_up = next(e for e in events if isinstance(e, ev.ControlDecision) and e.seq > result.seq
                     and e.turn_id != notice_turn.turn_id)
    weave = [s for s in spans if s.turn_id == follow_up.turn_id]
    assert "the tea is ready" in notice_turn.text
    assert fired.t_ms < answer[-1].t_ms and result.t_ms < answer[-1].t_ms, "both finished while Venus was talking"
    # nothing was spoken over the answer: each later utterance starts after the previous one ended
    assert notice and notice[0].start_sample >= answer[-1].end_sample
    assert not any(s.truncated for s in answer), "the answer was not cut short for the news"
    assert follow_up.action == ev.Action.RESPOND  # tool output may only be put into words
    # a respond turn always says something (an empty answer is retried, then a fallback is said), after the notice
    assert weave and weave[0].start_sample >= notice[-1].end_sample
    assert reminder != calculation
    # both results were woven into one turn, not one turn each
    assert sum(isinstance(e, ev.ControlDecision) and e.seq > result.seq and e.turn_id != notice_turn.turn_id
               for e in events) == 1


def _reminder_cut_off(tmp_path, wait_until, cut) -> list[ev.Event]:
    """A reminder fires while the user is quiet; `cut(runtime)` cuts it off after its first words are heard."""
    mic = tmp_path / "quiet-room.wav"
    sf.write(mic, np.zeros(16000 * 60, np.float32), 16000)
    session = open_session(Settings(), mic=mic, speaker=tmp_path / "venus.wav", persist=False, harness=True)
    timeline = session.timeline
    try:
        assert session.runtime.wait_ready()
        session.harness.submit("set_timer", {"seconds": 0.5, "text": "the tea is ready to pour"})

        def notice_begun() -> bool:
            notice = next((e for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd)
                           and e.reason == "notice"), None)
            return notice is not None and any(isinstance(e, ev.SpeechSpan) and e.turn_id == notice.turn_id
                                              and e.heard_words for e in timeline.events())

        assert wait_until(notice_begun, timeout=60)
        cut(session.runtime)
        assert wait_until(lambda: any(isinstance(e, ev.Interruption) for e in timeline.events()), timeout=30)
        wait_until(lambda: sum(isinstance(e, ev.AssistantTurnEnd) and e.reason == "notice"
                               for e in timeline.events()) > 1, timeout=20)
        assert session.runtime.wait_idle(120)
    finally:
        session.close()
    return timeline.events()


def test_a_reminder_cut_off_before_its_words_were_heard_is_said_again_after_the_answer(tmp_path, wait_until):
    # Found by voice: "What time is it?" over "Excuse me, a reminder: | scratch" got the time, and the reminder was
    # never heard; the timeline also said it had been heard whole.
    events = _reminder_cut_off(tmp_path, wait_until, lambda runtime: runtime.send_text("What time is it?"))
    notices = [e for e in events if isinstance(e, ev.AssistantTurnEnd) and e.reason == "notice"]
    cut = next(e for e in events if isinstance(e, ev.Interruption))
    assert cut.turn_id == notices[0].turn_id and "pour" in cut.unheard_text and "pour" not in cut.heard_text
    answer = next(e for e in events if isinstance(e, ev.AssistantTurnEnd) and e.reason == "intent")
    assert len(notices) == 2 and notices[1].seq > answer.seq, [(e.reason, e.text) for e in notices + [answer]]
    assert notices[1].text == notices[0].text and "the tea is ready to pour" in notices[1].text
    spans = [s for s in events if isinstance(s, ev.SpeechSpan) and s.turn_id == notices[1].turn_id]
    assert "pour" in " ".join(w for s in spans for w in s.heard_words)  # said to the end this time


def test_a_reminder_dismissed_with_the_stop_button_is_not_said_again(tmp_path, wait_until):
    events = _reminder_cut_off(tmp_path, wait_until, lambda runtime: runtime.stop_talking())
    notices = [e for e in events if isinstance(e, ev.AssistantTurnEnd) and e.reason == "notice"]
    cut = next(e for e in events if isinstance(e, ev.Interruption))
    assert cut.turn_id == notices[0].turn_id and "pour" in cut.unheard_text  # heard in part, and recorded so
    assert len(notices) == 1


def test_okay_stop_over_an_answer_stops_venus_and_gets_no_answer(tmp_path, wait_until):
    # Found by voice: "Okay, stop." over a story stopped it, then got an answer of its own ("I'm afraid you're
    # right, I'm afraid you're right."), talking over the silence it asked for.
    from speech_helpers import espeak, have_tools

    if not have_tools():
        pytest.skip("espeak-ng and sox are needed to make speech inputs")
    stop_at_s = 9.0
    mic = np.zeros(16000 * 30, np.float32)
    said = espeak("Okay, stop.", "en-gb") * 0.5
    mic[int(stop_at_s * 16000):int(stop_at_s * 16000) + len(said)] += said
    sf.write(tmp_path / "mic.wav", mic, 16000)
    settings = Settings()
    settings.llm.temperature = 0.0
    session = open_session(settings, mic=tmp_path / "mic.wav", speaker=tmp_path / "venus.wav", persist=False)
    timeline = session.timeline
    try:
        assert session.runtime.wait_ready()
        start = session.speech._start_ms  # the session time of the mic file's first sample
        assert wait_until(lambda: timeline.now_ms() >= start + (stop_at_s - 3.0) * 1000, timeout=30)
        session.runtime.send_text("Tell me a long story about a dragon who lived in the mountains.")
        assert wait_until(lambda: any(isinstance(e, ev.AsrFinal) and "stop" in e.text.lower()
                                      for e in timeline.events()), timeout=60)
        assert session.runtime.wait_idle(60)
        time.sleep(1.0)  # an answer would have started by now
    finally:
        session.close()
    events = timeline.events()
    final = next(e for e in events if isinstance(e, ev.AsrFinal) and "stop" in e.text.lower())
    story = next(e for e in events if isinstance(e, ev.ControlDecision))
    assert any(isinstance(e, ev.Interruption) and e.turn_id == story.turn_id for e in events), "the story went on"
    after = [e for e in events if e.seq > final.seq]
    assert any(isinstance(e, ev.ControlDecision) and e.action == ev.Action.SILENT for e in after)
    answers = [e for e in after if isinstance(e, (ev.AssistantTurnEnd, ev.SpeechSpan)) and e.turn_id != story.turn_id]
    assert not answers, [(e.kind, getattr(e, "text", getattr(e, "planned_text", ""))) for e in answers]
