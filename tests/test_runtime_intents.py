"""Everyday requests through the real runtime and harness: the tool runs, and Venus says its result.

Typed requests use the text mouth (each clause is recorded instead of played); the spoken one goes through the
whole session: espeak-ng speech in a WAV → VAD → whisper → end of turn → intent → task → reminder → voice.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import numpy as np
import pytest
import soundfile as sf

from engine.intents.responses import clock
from engine.runtime import Runtime, RuntimeOptions, TextMouth
from engine.runtime.session import open_session
from engine.settings import Settings
from engine.timeline import Timeline
from engine.timeline import events as ev


@pytest.fixture(scope="module")
def backend():
    from engine.llm import open_backend

    b = open_backend(Settings().llm)
    yield b
    b.close()


@pytest.fixture
def session(backend, tmp_path):
    from engine.llm import Conversation, ConversationOptions
    from harness import Harness

    opened = []

    def make(permissions=None):
        settings = Settings()
        if permissions:
            settings.harness.permissions = permissions
        timeline = Timeline()
        harness = Harness(settings.harness, timeline.append, store_path=tmp_path / "tasks.db")
        conversation = Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm),
                                    tools=harness.tool_specs())
        said: list[str] = []
        runtime = Runtime(timeline, conversation, TextMouth(lambda turn_id, clause: said.append(clause)),
                          harness=harness, settings=settings, options=RuntimeOptions(proactive_gap_ms=200)).start()
        opened.append((runtime, harness))
        return timeline, runtime, said

    yield make
    for runtime, harness in opened:
        runtime.close()
        harness.shutdown()


def _ask(runtime, text: str) -> None:
    runtime.send_text(text)
    assert runtime.wait_idle(60), f"Venus did not finish answering {text!r}"


def _turn_ends(timeline) -> list[ev.AssistantTurnEnd]:
    return [e for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd)]


def test_what_time_is_it_speaks_the_machines_clock_not_a_guess(session) -> None:
    timeline, runtime, said = session()
    before = datetime.now()
    _ask(runtime, "Hey Venus, what time is it?")
    after = datetime.now()
    decisions = [e for e in timeline.events() if isinstance(e, ev.ControlDecision)]
    assert [(d.action, d.tool) for d in decisions] == [(ev.Action.DELEGATE, "current_time")]
    allowed = {f"It's {clock(moment)}." for moment in (before, after, after + timedelta(minutes=1))}
    assert said and said[-1] in allowed, said
    assert not any(isinstance(e, ev.AssistantToken) for e in timeline.events()), "the LLM was not asked"


def test_arithmetic_is_computed_and_said_in_words(session) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "What's 12 times 14?")
    assert said[-1] == "12 times 14 is 168."
    result = next(e for e in timeline.events() if isinstance(e, ev.DelegationResult))
    assert result.tool == "calculate" and result.result["value"] == 168


def test_a_typed_reminder_creates_the_task_and_is_spoken_when_it_fires(session, wait_until) -> None:
    timeline, runtime, said = session()
    runtime.send_text("Remind me in two seconds to stretch")
    assert wait_until(lambda: any(isinstance(e, ev.ReminderFired) for e in timeline.events()), timeout=30)
    assert wait_until(lambda: any("a reminder: stretch" in s for s in said), timeout=30), said
    events = timeline.events()
    dispatched = next(e for e in events if isinstance(e, ev.DelegationDispatched))
    assert dispatched.tool == "set_timer" and dispatched.arguments == {"seconds": 2.0, "text": "stretch"}
    assert said[0] == "Okay, in 2 seconds I'll remind you to stretch."
    fired = next(e for e in events if isinstance(e, ev.ReminderFired))
    assert fired.text == "stretch"


def test_a_missing_slot_gets_a_question_and_no_task(session) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "Set a timer")
    assert said == ["For how long should the timer run?"]
    assert not any(isinstance(e, ev.DelegationDispatched) for e in timeline.events())


def test_a_slot_outside_the_tools_schema_gets_a_clarifying_question_not_a_crash(session) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "Set a timer for 500 days")  # set_timer allows a year at most
    assert len(said) == 1 and said[0].startswith("I can't do that as asked") and said[0].endswith("another way?")
    assert "seconds" in said[0]  # says which value was wrong
    assert not any(isinstance(e, ev.DelegationDispatched) for e in timeline.events())
    assert not any(isinstance(e, ev.SystemNotice) and e.level == "error" for e in timeline.events())


def test_a_tool_turned_off_in_settings_is_not_run(session) -> None:
    timeline, runtime, said = session(permissions={"current_time": "off"})
    _ask(runtime, "What time is it?")
    assert said and "turned off in settings" in said[-1]
    assert not any(isinstance(e, ev.DelegationDispatched) for e in timeline.events())


def test_cancel_the_timer_cancels_the_reminder_not_a_running_task(session, wait_until) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "Set a timer for 10 minutes")
    assert said[-1] == "Okay, a timer for 10 minutes is running."
    _ask(runtime, "Cancel the timer")
    assert said[-1] == "Okay, it's cancelled."
    cancel = [e for e in timeline.events() if isinstance(e, ev.DelegationDispatched) and e.tool == "cancel_reminder"]
    assert len(cancel) == 1
    _ask(runtime, "Do I have any timers?")
    assert said[-1] == "You have no timers or reminders."


def test_small_talk_still_goes_to_the_model(session) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "Is this your first time doing this?")
    assert not any(isinstance(e, ev.DelegationDispatched) for e in timeline.events())
    assert any(isinstance(e, ev.AssistantToken) for e in timeline.events()), "the LLM answered"


def _hear(timeline, text: str, alternatives: tuple[str, ...] = ()) -> None:
    # what the perception thread reports for one spoken segment that ends the user's turn
    start = timeline.now_ms()
    timeline.append(ev.UserSpeechStart(start_ms=start))
    timeline.append(ev.UserSpeechEnd(start_ms=start, end_ms=start + 1200))
    timeline.append(ev.AsrFinal(text=text, alternatives=alternatives, segment_start_ms=start,
                                segment_end_ms=start + 1200))


def test_a_request_misheard_in_the_best_reading_is_taken_from_another_reading(session, wait_until) -> None:
    timeline, runtime, said = session()
    _hear(timeline, "Set a tiger for ten minutes.", ("Set a tiger for 10 minutes.", "Set a timer for ten minutes."))
    assert wait_until(lambda: any(isinstance(e, ev.DelegationDispatched) for e in timeline.events()), timeout=30)
    dispatched = next(e for e in timeline.events() if isinstance(e, ev.DelegationDispatched))
    assert (dispatched.tool, dispatched.arguments) == ("set_timer", {"seconds": 600.0})
    assert runtime.wait_idle(30)
    assert any("10 minutes" in clause for clause in said), said


def test_other_readings_never_turn_conversation_into_a_task(session) -> None:
    # the best reading is what the user meant when it is no request: the readings below it are not searched
    # for one unless it fails, and here none of them is a request either
    timeline, runtime, _ = session()
    _hear(timeline, "I had a long day at work.", ("I had a long day at work", "I had a long day of work."))
    assert runtime.wait_idle(60)
    assert not any(isinstance(e, ev.DelegationDispatched) for e in timeline.events())
    assert any(isinstance(e, ev.AssistantTurnEnd) and e.reason != "intent" for e in timeline.events())


def test_a_spoken_reminder_runs_from_the_microphone_to_the_voice(tmp_path, speech, wait_until) -> None:
    _, voice = speech("Remind me in two seconds to stretch.", speed=150)
    quiet = np.zeros(16000 * 20, np.float32)
    mic = tmp_path / "request.wav"
    sf.write(mic, np.concatenate([np.zeros(8000, np.float32), voice, quiet]), 16000)
    settings = Settings()
    session = open_session(settings, mic=mic, speaker=tmp_path / "venus.wav", persist=False, harness=True)
    timeline = session.timeline
    try:
        assert wait_until(lambda: any(isinstance(e, ev.ReminderFired) for e in timeline.events()), timeout=60), [
            (e.kind, getattr(e, "text", "")) for e in timeline.events() if e.kind != ev.Kind.ASSISTANT_TOKEN]
        fired = next(e for e in timeline.events() if isinstance(e, ev.ReminderFired))
        assert wait_until(lambda: any(isinstance(e, ev.AssistantTurnEnd) and e.text.endswith(f"a reminder: {fired.text}")
                                      for e in timeline.events()), timeout=30)
        reminder = next(e for e in timeline.events() if isinstance(e, ev.AssistantTurnEnd) and "a reminder" in e.text)
        assert wait_until(lambda: any(isinstance(e, ev.SpeechSpan) and e.turn_id == reminder.turn_id
                                      and e.end_sample > e.start_sample for e in timeline.events()), timeout=30), \
            "the reminder was played, not only written"
    finally:
        session.close()
    events = timeline.events()
    dispatched = [e for e in events if isinstance(e, ev.DelegationDispatched)]
    assert [d.tool for d in dispatched] == ["set_timer"]
    # whisper tiny may mishear espeak's "stretch" (it heard "just to match" once): the words are its to get
    assert dispatched[0].arguments["seconds"] == 2.0 and dispatched[0].arguments["text"]
    acknowledged = next(e for e in events if isinstance(e, ev.AssistantTurnEnd) and e.reason == "intent")
    assert acknowledged.text.startswith("Okay, in 2 seconds I'll remind you to")


def test_missing_templates_leave_venus_talking_with_a_notice(backend, tmp_path, monkeypatch) -> None:
    from engine.llm import Conversation, ConversationOptions
    from harness import Harness

    monkeypatch.setenv("VENUS_ASSETS_DIR", str(tmp_path / "no-assets"))
    settings = Settings()
    timeline = Timeline()
    harness = Harness(settings.harness, timeline.append, store_path=tmp_path / "tasks.db")
    conversation = Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm), tools=())
    runtime = Runtime(timeline, conversation, TextMouth(), harness=harness, settings=settings).start()
    try:
        assert runtime.intents is None
        notices = [e for e in timeline.events() if isinstance(e, ev.SystemNotice)]
        assert [n.code for n in notices] == ["intents-unavailable"] and "no intent templates" in notices[0].text
    finally:
        runtime.close()
        harness.shutdown()


def test_the_end_of_a_turn_matches_its_words_once_until_a_task_starts(tmp_path) -> None:
    from engine.intents import IntentMatcher
    from engine.runtime.assistant_turns import VenusTurn
    from engine.runtime.local_requests import LocalRequests
    from harness import Harness

    class CountingMatcher(IntentMatcher):  # the real templates; only the calls are counted
        calls = 0

        def match(self, text, context):
            CountingMatcher.calls += 1
            return super().match(text, context)

    settings, timeline = Settings(), Timeline()
    harness = Harness(settings.harness, timeline.append, store_path=tmp_path / "tasks.db")
    try:
        requests = LocalRequests(timeline, harness, RuntimeOptions(), CountingMatcher.load())
        text = "set a timer for ten minutes"
        assert requests.closed(text) is False  # a timer's length could still grow ("... and thirty seconds")
        first = requests.match(text)
        assert first is not None and first.tool == "set_timer" and requests.match(text) is first
        assert CountingMatcher.calls == 1
        assert requests.match("what time is it") is not None and CountingMatcher.calls == 2
        requests.submit(first, VenusTurn(from_llm=False), 0)
        again = requests.match(text)
        assert again is not None and again is not first and CountingMatcher.calls == 3
    finally:
        harness.shutdown()


def test_a_request_that_could_grow_is_actionable_as_heard(tmp_path) -> None:
    # "set a timer for ten minutes" is not closed ("... and thirty seconds" may follow), but it runs as heard:
    # the end of turn waits no longer than a short pause for more (EndOfTurnOptions.request_max_silence_ms)
    from engine.intents import IntentMatcher
    from engine.runtime.local_requests import LocalRequests
    from harness import Harness

    settings, timeline = Settings(), Timeline()
    harness = Harness(settings.harness, timeline.append, store_path=tmp_path / "tasks.db")
    try:
        requests = LocalRequests(timeline, harness, RuntimeOptions(), IntentMatcher.load())
        for text in ("set a timer for ten minutes", "launch the terminal", "remind me in an hour to call mom"):
            assert not requests.closed(text) and requests.actionable(text), text
        assert requests.closed("what time is it") and requests.actionable("what time is it")
        assert not requests.actionable("set a timer")  # a question back first: nothing to run yet
        assert not requests.actionable("remind me to call mom")  # when? is asked
        assert not requests.actionable("I had a long day at work")
    finally:
        harness.shutdown()


def test_what_can_you_do_is_answered_from_the_tools_that_are_on(session) -> None:
    # the 135M model answered "I can do everything I can for you"; the answer now comes from the harness's tools
    timeline, runtime, said = session()
    _ask(runtime, "What can you do?")
    assert said[-1].startswith("I can set timers and reminders, take notes, keep lists, tell the time")
    assert "read your screen" in said[-1]
    assert not any(isinstance(e, ev.DelegationDispatched) for e in timeline.events())  # an answer, no task

    timeline, runtime, said = session(permissions={"read_screen": "off", "set_timer": "off", "set_reminder": "off"})
    _ask(runtime, "what else can you help me with")
    assert "tell the time" in said[-1] and "screen" not in said[-1] and "timer" not in said[-1]


def test_a_reminder_is_cancelled_by_its_time_and_a_running_timer_counts_as_work(session) -> None:
    # The harness keeps due times as Unix time, which the builders read as ISO only: "cancel my reminder at 9"
    # was "I can't find a timer or reminder about 9." And "What are you working on?" with a timer running said
    # "Nothing right now."
    timeline, runtime, said = session()
    _ask(runtime, "Set a timer for ten minutes")
    _ask(runtime, "What are you working on?")
    assert said[-1].startswith("Nothing is running. One timer or reminder is set, due in "), said[-1]
    assert said[-1].endswith(("10 minutes.", "59 seconds.")), said[-1]
    _ask(runtime, "Remind me tomorrow at 9 to water the plants")
    _ask(runtime, "Cancel my reminder for tomorrow at 9")
    assert said[-1] == "Okay, it's cancelled.", said
    cancelled = [e for e in timeline.events() if isinstance(e, ev.DelegationDispatched) and e.tool == "cancel_reminder"]
    assert len(cancelled) == 1
    pending = runtime._machine._requests.harness.pending_reminders()
    assert len(pending) == 1 and "water" not in pending[0]["text"], pending  # the timer is left


def test_who_are_you_and_what_are_my_notes_are_answered_without_the_model(session) -> None:
    # typed as a new user would: the 135M model answered "My name is Max, and I'm a creative AI assistant" to
    # "what are my notes?" and "You're not here, you're here." to "who are you"
    timeline, runtime, said = session()
    _ask(runtime, "Who are you?")
    assert said[-1] == "I'm Venus, a voice assistant running here on your computer. Ask me what I can do."
    _ask(runtime, "Take a note: buy milk and eggs")
    _ask(runtime, "what are my notes?")
    assert "buy milk and eggs" in said[-1], said
    _ask(runtime, "read my last note")
    assert "buy milk and eggs" in said[-1], said
    assert not any(isinstance(e, ev.AssistantToken) for e in timeline.events()), "the LLM was not asked"


def test_time_left_on_a_timer_is_counted_down_from_the_harness(session) -> None:
    # "How much time is left on my timer?" listed the timer by the words it will say when it ends: "You have one:
    # Your 5 minutes timer is done. at 1:36 PM." (the words of that time)
    import re

    timeline, runtime, said = session()
    _ask(runtime, "Set a timer for five minutes")
    _ask(runtime, "Remind me in an hour to call the bank")
    _ask(runtime, "How much time is left on my timer?")
    answer = _turn_ends(timeline)[-1].text
    assert re.fullmatch(r"Your 5-minute timer has (5 minutes|4 minutes and \d+ seconds?) left\.", answer), answer
    _ask(runtime, "how long until my reminder goes off")
    answer = _turn_ends(timeline)[-1].text
    assert re.fullmatch(r"Your reminder, call the bank, is in (59 minutes|an hour), at .+\.", answer), answer
    _ask(runtime, "What timers do I have?")
    answer = _turn_ends(timeline)[-1].text
    assert answer.startswith("You have 2: a 5-minute timer at "), answer
    assert "timer is done" not in answer and "call the bank at" in answer, answer


def test_a_shopping_list_is_kept_read_back_and_emptied_after_a_yes(session) -> None:
    # "Add milk to my shopping list" got "1. Add milk to your shopping list 2. Want me to go on?" from the 135M
    # model, and "What is on my shopping list?" the same words again: nothing was kept
    timeline, runtime, said = session()
    _ask(runtime, "Add milk and eggs to my shopping list")
    assert _turn_ends(timeline)[-1].text == "Okay, I added milk and eggs to your shopping list."
    _ask(runtime, "put the milk on the shopping list")
    assert _turn_ends(timeline)[-1].text == "You already have milk on your shopping list."
    _ask(runtime, "What is on my shopping list?")
    assert _turn_ends(timeline)[-1].text == "Your shopping list has 2 things: milk and eggs."
    _ask(runtime, "take the eggs off my shopping list")
    assert _turn_ends(timeline)[-1].text == "Okay, I took eggs off your shopping list."
    _ask(runtime, "Clear my shopping list")
    asked = [e for e in timeline.events() if isinstance(e, ev.ConfirmationRequested)]
    assert len(asked) == 1 and "empty your shopping list" in asked[0].prompt, asked
    _ask(runtime, "Yes")
    assert _turn_ends(timeline)[-1].text == "Okay, your shopping list is empty now.", _turn_ends(timeline)[-1]
    _ask(runtime, "what's on my shopping list")
    assert _turn_ends(timeline)[-1].text == "Your shopping list is empty."
    assert not any(isinstance(e, ev.AssistantToken) for e in timeline.events()), "the LLM was not asked"


def test_the_answer_to_a_question_back_completes_the_request(session) -> None:
    # "Set a timer" - "For how long should the timer run?" - "5 minutes" went to the 135M model, which said "The
    # timer should run for 5 minutes." and set nothing; every question back was a dead end
    timeline, runtime, said = session()

    def dispatched() -> list[tuple[str, dict]]:
        return [(e.tool, e.arguments) for e in timeline.events() if isinstance(e, ev.DelegationDispatched)]

    _ask(runtime, "Set a timer")
    assert _turn_ends(timeline)[-1].text == "For how long should the timer run?"
    _ask(runtime, "for five minutes.")
    assert dispatched()[-1] == ("set_timer", {"seconds": 300.0})
    _ask(runtime, "Remind me to buy eggs")
    _ask(runtime, "tomorrow at 6 pm")
    tomorrow = (datetime.now() + timedelta(days=1)).strftime("%Y-%m-%d")
    assert dispatched()[-1] == ("set_reminder", {"at": f"{tomorrow}T18:00", "text": "buy eggs"})
    _ask(runtime, "Put it on my list")
    _ask(runtime, "Bananas and apples")
    assert dispatched()[-1] == ("add_to_list", {"list": "shopping", "items": ["Bananas", "apples"]})
    count = len(dispatched())
    _ask(runtime, "Take a note")
    _ask(runtime, "Never mind.")  # the request is dropped, not noted
    assert _turn_ends(timeline)[-1].text == "Okay, never mind." and len(dispatched()) == count
    _ask(runtime, "Set a timer")
    _ask(runtime, "Tell me about Rome.")  # another subject: the model answers, and the question is closed
    assert len(dispatched()) == count
    assert any(isinstance(e, ev.AssistantToken) for e in timeline.events())
    _ask(runtime, "ten minutes")  # no longer an answer to anything
    assert len(dispatched()) == count


def test_the_weather_is_declined_in_words_not_invented(session) -> None:
    # "What's the weather like today?" -> "The weather today is mostly sunny. I'm expecting 20% chance of sunshine"
    timeline, runtime, said = session()
    _ask(runtime, "What's the weather like today?")
    assert _turn_ends(timeline)[-1].text.startswith("I can't check the weather")
    assert _turn_ends(timeline)[-1].text.endswith("Want me to open weather.com?")
    assert not any(isinstance(e, ev.AssistantToken | ev.DelegationDispatched) for e in timeline.events())
    _ask(runtime, "Yes please.")  # takes the offer; opening a site still asks, as the permission says
    asked = [e for e in timeline.events() if isinstance(e, ev.ConfirmationRequested)]
    assert [(e.tool, e.arguments) for e in asked] == [("open", {"target": "https://weather.com"})]
    _ask(runtime, "No.")
    assert not [e for e in timeline.events() if isinstance(e, ev.DelegationResult)]  # nothing was opened


def test_cancel_it_ends_what_was_just_set_and_answers_an_open_question(session) -> None:
    # "Set a timer for 10 minutes" - "Cancel it" went to the 135M model: "Timer set for 10 minutes Cancel it </cite>"
    timeline, runtime, said = session()
    _ask(runtime, "Remind me tomorrow at 9 to water the plants")
    _ask(runtime, "Set a timer for 10 minutes")
    _ask(runtime, "Cancel it")
    assert _turn_ends(timeline)[-1].text == "Okay, it's cancelled."
    pending = runtime._machine._requests.harness.pending_reminders()
    assert [r["text"] for r in pending] == ["water the plants"], pending  # the timer went, the older reminder stays

    _ask(runtime, "Add soap to my shopping list")
    _ask(runtime, "Clear my shopping list")  # a question is open: "cancel that" answers it
    _ask(runtime, "cancel that")
    cancelled = [e for e in timeline.events() if isinstance(e, ev.DelegationDispatched) and e.tool == "cancel_reminder"]
    assert len(cancelled) == 1 and len(runtime._machine._requests.harness.pending_reminders()) == 1
    _ask(runtime, "What's on my shopping list?")
    assert _turn_ends(timeline)[-1].text == "Your shopping list has one thing: soap."


def test_and_more_too_continues_the_list_just_added_to(session) -> None:
    timeline, runtime, said = session()

    def dispatched() -> list[tuple[str, dict]]:
        return [(e.tool, e.arguments) for e in timeline.events() if isinstance(e, ev.DelegationDispatched)]

    _ask(runtime, "Add bread to my packing list")
    _ask(runtime, "and a toothbrush too")
    assert dispatched()[-1] == ("add_to_list", {"list": "packing", "items": ["toothbrush"]})
    _ask(runtime, "Also set a timer for two minutes.")  # a request of its own, not an item
    assert dispatched()[-1] == ("set_timer", {"seconds": 120.0})
    _ask(runtime, "What's on my packing list?")
    assert _turn_ends(timeline)[-1].text == "Your packing list has 2 things: bread and toothbrush."


def test_say_that_again_repeats_her_last_answer(session) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "What did you say?")
    assert _turn_ends(timeline)[-1].text == "I haven't said anything yet."
    _ask(runtime, "Tell me about Rome.")  # an answer of the model's
    answer = _turn_ends(timeline)[-1].text
    assert answer and any(isinstance(e, ev.AssistantToken) for e in timeline.events())
    tokens = len([e for e in timeline.events() if isinstance(e, ev.AssistantToken)])
    _ask(runtime, "Sorry, I didn't catch that.")
    assert _turn_ends(timeline)[-1].text == answer
    assert len([e for e in timeline.events() if isinstance(e, ev.AssistantToken)]) == tokens  # said, not written anew


def test_snooze_says_the_reminder_that_went_off_again_later(session) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "Remind me in 1 second to take the bread out")
    fired = []
    deadline = time.monotonic() + 20
    while not fired and time.monotonic() < deadline:
        time.sleep(0.1)
        fired = [e for e in timeline.events() if isinstance(e, ev.ReminderFired)]
    assert fired and runtime.wait_idle(30)
    _ask(runtime, "Snooze for five minutes")
    assert _turn_ends(timeline)[-1].text == "Okay, I'll remind you again in 5 minutes."
    pending = runtime._machine._requests.harness.pending_reminders()
    assert [r["text"] for r in pending] == ["take the bread out"], pending


@pytest.mark.parametrize(("text", "reply"), [
    ("Hi", "Hi! What can I do for you?"),
    ("Hey Venus, how are you?", "Hi, I'm doing well, thanks! How about you?"),
    ("Thanks, bye!", "You're welcome! Bye for now!"),
    ("Good night.", "Good night!"),
    ("I'm good, thanks.", "Glad to hear it! What can I do for you?"),  # SmolLM2: "I'm glad of you. Can you help..."
    ("Oh, never mind.", "Okay."),  # SmolLM2: "No, I'm sorry, I'm not going to give you a recipe." (twice)
    ("No thanks, that's all.", "Okay, I'm here if you need me."),
])
def test_a_greeting_thanks_or_goodbye_gets_its_reply_without_the_tiny_model(session, text: str, reply: str) -> None:
    # SmolLM2-135M: "Hi" - "Hi, welcome to my little friend! You're on the right planet, I'm not too far off.";
    # "Thanks, bye" - "Bye, I'm glad to know you're not here."
    timeline, runtime, said = session()
    _ask(runtime, text)
    assert _turn_ends(timeline)[-1].text == reply
    assert not any(isinstance(e, ev.AssistantToken) for e in timeline.events())
    _ask(runtime, "Hi, can you tell me about the moon?")  # more than a formula: the model answers
    assert any(isinstance(e, ev.AssistantToken) for e in timeline.events())


def test_make_it_ten_minutes_moves_the_timer_just_set(session) -> None:
    # "Set a timer for 5 minutes" - "Actually make it 15 minutes" went to the model, which set nothing new and said
    # "Timer set for 10 minutes 15 minutes </cite>"
    import re

    timeline, runtime, said = session()
    _ask(runtime, "Remind me tomorrow at 9 to water the plants")
    _ask(runtime, "Set a timer for 5 minutes")
    _ask(runtime, "Actually, make it 15 minutes.")
    assert _turn_ends(timeline)[-1].text == "Okay, it's now set for 15 minutes from now."
    _ask(runtime, "How much time is left on my timer?")
    answer = _turn_ends(timeline)[-1].text
    assert re.fullmatch(r"Your 15-minute timer has (15 minutes|14 minutes and \d+ seconds?) left\.", answer), answer
    _ask(runtime, "Move it to 6 pm")  # still the timer: the one set last
    pending = runtime._machine._requests.harness.pending_reminders()
    moved = [r for r in pending if "timer" in r["text"]]
    assert len(pending) == 2 and len(moved) == 1, pending
    due = datetime.fromtimestamp(moved[0]["due_at"])
    assert (due.hour, due.minute) == (18, 0), due


def test_undo_right_after_adding_to_a_list_takes_the_items_off_again(session) -> None:
    timeline, runtime, said = session()
    _ask(runtime, "Set a timer for 10 minutes")
    _ask(runtime, "Add pears and plums to my shopping list")
    _ask(runtime, "Undo that")
    assert _turn_ends(timeline)[-1].text == "Okay, I took pears and plums off your shopping list."
    assert len(runtime._machine._requests.harness.pending_reminders()) == 1  # the timer stays
    _ask(runtime, "What's on my shopping list?")
    assert _turn_ends(timeline)[-1].text == "Your shopping list is empty."
