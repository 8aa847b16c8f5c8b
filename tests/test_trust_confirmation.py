"""Confirmations: a spoken yes counts only as an answer to the question Venus asked aloud, read from the whole
utterance, in the user's voice; it answers the task Venus asked about (or the one it names), never the newest.

Through the real harness (its executor holds the tasks awaiting a yes) and, for spoken answers, the real runtime
with the default LLM; voices are scored by the real speaker embeddings on espeak-ng speech.
"""

from __future__ import annotations

import pytest

from engine.runtime import Runtime, RuntimeOptions, TextMouth
from engine.settings import Settings
from engine.timeline import Timeline
from engine.timeline import events as ev


def _harness(tmp_path, timeline: Timeline):
    from harness import Harness

    settings = Settings()
    settings.harness.permissions = {"create_note": "ask"}
    return settings, Harness(settings.harness, timeline.append, store_path=tmp_path / "tasks.db")


def _answered(timeline: Timeline) -> list[tuple[str, bool]]:
    return [(e.task_id, e.approved) for e in timeline.events() if isinstance(e, ev.ConfirmationAnswered)]


def test_a_typed_yes_answers_the_question_asked_or_else_the_oldest_and_a_spoken_one_only_what_was_asked(
        tmp_path, wait_until) -> None:
    timeline = Timeline()
    _, harness = _harness(tmp_path, timeline)
    try:
        first = harness.submit("create_note", {"title": "one", "text": "first note"})
        second = harness.submit("create_note", {"title": "two", "text": "second note"})
        assert wait_until(lambda: harness.pending_confirmations() == [first, second])
        assert harness.handle_user_text("Yes, go ahead.", "voice") is None  # nothing was asked aloud
        assert harness.handle_user_text("Yes, go ahead.", "ui") == "yes"  # on screen: the oldest is shown first
        assert wait_until(lambda: _answered(timeline) == [(first, True)])
        third = harness.submit("create_note", {"title": "three", "text": "third note"})
        assert wait_until(lambda: harness.pending_confirmations() == [second, third])
        assert harness.handle_user_text("No.", "voice", asked=third) == "no"  # the one that was asked about
        assert wait_until(lambda: _answered(timeline) == [(first, True), (third, False)])
        assert harness.pending_confirmations() == [second]
    finally:
        harness.shutdown()


@pytest.mark.parametrize("heard", [
    "Okay, so tonight on the news they said it would rain.",  # the TV, starting like a yes
    "Sure thing, Bob.",  # an answer to someone else
    "Alright everyone, dinner is ready.",
    "Okay, going ahead.",  # Venus's own acknowledgement, had it leaked back
    "Yes, I'm going to the store later.",
])
def test_a_sentence_that_merely_starts_like_a_yes_answers_nothing(tmp_path, wait_until, heard) -> None:
    timeline = Timeline()
    _, harness = _harness(tmp_path, timeline)
    try:
        task = harness.submit("create_note", {"title": "one", "text": "first note"})
        assert wait_until(lambda: harness.pending_confirmations() == [task])
        assert harness.handle_user_text(heard, "voice", asked=task) is None
        assert harness.handle_user_text(heard, "ui", asked=task) is None
        assert harness.pending_confirmations() == [task] and not _answered(timeline)
    finally:
        harness.shutdown()


def test_an_answer_may_name_its_task_and_a_mixed_one_decides_nothing(tmp_path, wait_until) -> None:
    timeline = Timeline()
    settings = Settings()
    settings.harness.permissions = {"create_note": "ask", "set_timer": "ask"}
    from harness import Harness

    harness = Harness(settings.harness, timeline.append, store_path=tmp_path / "tasks.db")
    try:
        note = harness.submit("create_note", {"title": "one", "text": "first note"})
        timer = harness.submit("set_timer", {"seconds": 600, "text": "tea"})
        other = harness.submit("create_note", {"title": "two", "text": "second note"})
        assert wait_until(lambda: harness.pending_confirmations() == [note, timer, other])
        assert harness.handle_user_text("Yeah, no.", "voice", asked=note) == "unclear"
        assert harness.handle_user_text("Yes, the note.", "voice", asked=note) == "unclear"  # two notes wait
        assert not _answered(timeline)
        assert harness.handle_user_text("Yes to the timer.", "voice", asked=note) == "yes"
        assert wait_until(lambda: _answered(timeline) == [(timer, True)])
        assert harness.handle_user_text("No, not the second one.", "ui") == "no"
        assert wait_until(lambda: _answered(timeline) == [(timer, True), (other, False)])
        assert harness.pending_confirmations() == [note]
    finally:
        harness.shutdown()


@pytest.fixture(scope="module")
def backend():
    from engine.llm import open_backend

    b = open_backend(Settings().llm)
    yield b
    b.close()


def test_a_spoken_yes_approves_the_task_venus_asked_about(backend, tmp_path, wait_until) -> None:
    from engine.llm import Conversation, ConversationOptions

    timeline = Timeline()
    settings, harness = _harness(tmp_path, timeline)
    conversation = Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm),
                                tools=harness.tool_specs())
    said: list[str] = []
    runtime = Runtime(timeline, conversation, TextMouth(lambda turn_id, clause: said.append(clause)),
                      harness=harness, settings=settings, options=RuntimeOptions(proactive_gap_ms=200)).start()
    try:
        first = harness.submit("create_note", {"title": "groceries", "text": "milk"})
        second = harness.submit("create_note", {"title": "garage", "text": "oil change"})
        assert wait_until(lambda: harness.pending_confirmations() == [first, second])
        # Venus asks about the first one first; the user answers once the question was said
        assert wait_until(lambda: any(isinstance(e, ev.AssistantTurnEnd) and "Say yes or no." in e.text
                                      for e in timeline.events()), timeout=30)
        asked = next(e for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd) and "Say yes or no." in e.text)
        assert "groceries" in asked.text or "milk" in asked.text, asked.text
        assert runtime.wait_idle(30)
        start = timeline.now_ms()
        timeline.append(ev.UserSpeechStart(start_ms=start))
        timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=start + 700))
        timeline.append(ev.AsrFinal(text="Yes.", segment_start_ms=start, segment_end_ms=start + 700))
        assert wait_until(lambda: bool(_answered(timeline)), timeout=30)
        assert _answered(timeline)[0] == (first, True)
        assert second in harness.pending_confirmations()  # still waiting for its own answer
    finally:
        runtime.close()
        harness.shutdown()


def _speak_final(timeline: Timeline, text: str, similarity: float | None = None) -> None:
    start = timeline.now_ms()
    timeline.append(ev.UserSpeechStart(start_ms=start))
    timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=start + 700))
    timeline.append(ev.AsrFinal(text=text, segment_start_ms=start, segment_end_ms=start + 700,
                                speaker_similarity=similarity))


def _said(timeline: Timeline) -> list[str]:
    return [e.text for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd)]


def _asked_about_a_note(backend, tmp_path, wait_until):
    """The real runtime with the default LLM and a harness whose note waits for a yes, once Venus asked it aloud:
    (timeline, harness, runtime, task id); the caller closes the runtime and shuts the harness down."""
    from engine.llm import Conversation, ConversationOptions

    timeline = Timeline()
    settings, harness = _harness(tmp_path, timeline)
    conversation = Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm),
                                tools=harness.tool_specs())
    runtime = Runtime(timeline, conversation, TextMouth(), harness=harness, settings=settings,
                      options=RuntimeOptions(proactive_gap_ms=200)).start()
    task = harness.submit("create_note", {"title": "groceries", "text": "milk"})
    assert wait_until(lambda: any("Say yes or no." in t for t in _said(timeline)), timeout=30)
    assert runtime.wait_idle(30)
    return timeline, harness, runtime, task


def test_background_words_and_a_mixed_answer_approve_nothing_and_venus_asks_again(backend, tmp_path,
                                                                                  wait_until) -> None:
    timeline, harness, runtime, task = _asked_about_a_note(backend, tmp_path, wait_until)
    try:
        _speak_final(timeline, "Okay, so tonight on the news they said it would rain.")
        assert runtime.wait_idle(60)
        assert not _answered(timeline) and harness.pending_confirmations() == [task]
        _speak_final(timeline, "Yeah, no.")
        assert wait_until(lambda: any(t.startswith("Sorry, was that a yes or a no?") for t in _said(timeline)),
                          timeout=30), _said(timeline)
        assert runtime.wait_idle(30)
        assert not _answered(timeline)
        _speak_final(timeline, "Yes, please.")
        assert wait_until(lambda: _answered(timeline) == [(task, True)], timeout=30)
    finally:
        runtime.close()
        harness.shutdown()


@pytest.fixture(scope="module")
def voices():
    """The real speaker profile enrolled on one espeak-ng voice, and a scorer for any text in any voice."""
    from speech_helpers import espeak, have_tools

    from engine.speaker import SpeakerProfile, default_embedder

    if not have_tools():
        pytest.fail("espeak-ng and sox are needed (make setup installs them)")
    profile = SpeakerProfile(default_embedder())
    for text in ("Hello, I would like some help with my calendar today.", "Please read me my new messages."):
        assert profile.enroll(espeak(text, "en-us"))
    return lambda text, voice: profile.similarity(espeak(text, voice))


def test_a_yes_in_another_voice_approves_nothing_and_the_users_own_yes_does(backend, voices, tmp_path,
                                                                          wait_until) -> None:
    timeline, harness, runtime, task = _asked_about_a_note(backend, tmp_path, wait_until)
    try:
        assert runtime.awaiting_answer
        other = voices("Yes, go ahead.", "en-us+f3")  # a woman's voice; the user enrolled a man's
        _speak_final(timeline, "Yes, go ahead.", other)
        assert wait_until(lambda: any("didn't sound like your voice" in t for t in _said(timeline)), timeout=30)
        assert runtime.wait_idle(30)
        assert not _answered(timeline) and harness.pending_confirmations() == [task], other
        own = voices("Yes, go ahead.", "en-us")
        _speak_final(timeline, "Yes, go ahead.", own)
        assert wait_until(lambda: _answered(timeline) == [(task, True)], timeout=30), (own, other)
        assert not runtime.awaiting_answer
    finally:
        runtime.close()
        harness.shutdown()


def test_a_no_in_another_voice_still_declines(backend, voices, tmp_path, wait_until) -> None:
    # "No." was answered "That didn't sound like your voice, so I haven't done it." (found by voice): a no only
    # declines, which is safe whoever says it
    timeline, harness, runtime, task = _asked_about_a_note(backend, tmp_path, wait_until)
    try:
        other = voices("No.", "en-us+f3")
        _speak_final(timeline, "No.", other)
        assert wait_until(lambda: _answered(timeline) == [(task, False)], timeout=30), other
        assert not any("didn't sound like your voice" in t for t in _said(timeline))
    finally:
        runtime.close()
        harness.shutdown()

