"""The local-intent benchmark's data and scoring (bench/intents): the task sets load, every expected call is one the
real harness accepts, the splits share no phrasing pattern, argument equality behaves, and the matcher reaches
its typed target on the dev split (the test split stays out of the test suite: it is held out)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from harness_support import make_harness

from bench.intents.smalltalk import leak, load_conversations, loops, overlong
from bench.intents.tasks import SPLITS, Outcome, arguments_equal, load_cases, normalize_text
from harness.builtin.calc import calculate, convert

TOOLS = ("set_timer", "set_reminder", "list_reminders", "cancel_reminder", "create_note", "search_notes",
         "current_time", "calculate", "convert_units", "open", "read_clipboard", "write_clipboard", "read_screen",
         "system_status", "find_files", "list_tasks", "cancel_task", "add_to_list", "read_list", "remove_from_list",
         "clear_list")
BUSIER = ("set_timer", "set_reminder", "create_note", "calculate", "convert_units", "open")  # more than the minimum


def test_the_task_sets_cover_every_builtin_tool_with_negatives():
    cases = load_cases("all")
    per_tool = Counter(c.tool for c in cases)
    assert sum(n for tool, n in per_tool.items() if tool) >= 180 and per_tool[None] >= 40, per_tool
    assert set(per_tool) - {None} == set(TOOLS), set(per_tool) ^ set(TOOLS)
    assert all(per_tool[tool] >= 6 for tool in TOOLS), per_tool
    assert all(per_tool[tool] >= 12 for tool in BUSIER), per_tool
    for split in SPLITS:
        assert {c.tool for c in load_cases(split)} == {*TOOLS, None}, f"{split} lacks a tool"


def test_the_splits_share_no_phrasing_pattern_and_no_utterance():
    dev, test = load_cases("dev"), load_cases("test")
    for one, other in ((dev, test), (load_cases("train"), test), (load_cases("train"), dev)):
        assert not {c.pattern for c in one} & {c.pattern for c in other}
        assert not {normalize_text(c.say) for c in one} & {normalize_text(c.say) for c in other}
    assert 0.25 <= len(dev) / (len(dev) + len(test)) <= 0.4, "about a third of the utterances are dev"


def test_every_expected_call_is_one_the_real_harness_accepts():
    """Schemas from the real registry; units, expressions, times and ids checked against what the tools do."""
    harness, _ = make_harness([])
    try:
        registered = set(harness.registry.names())
        unregistered: Counter = Counter()
        for case in load_cases("all"):
            if case.tool is None or case.clarify:
                continue
            for args in case.expected():
                if case.tool not in registered:
                    unregistered[case.tool] += 1
                    continue
                harness.registry.validate(case.tool, args)  # InvalidArguments names the argument
                if case.tool == "convert_units":
                    convert(args["value"], args["from_unit"], args["to_unit"])
                if case.tool == "calculate":
                    calculate(args["expression"])
                if case.tool == "set_reminder":
                    assert datetime.fromisoformat(args["at"]) > datetime.fromisoformat(case.context["now"]), case
                if case.tool == "cancel_reminder":
                    assert args["reminder_id"] in {r["reminder_id"] for r in case.context["reminders"]}, case
                if case.tool == "cancel_task":
                    assert args["task_id"] in {t["task_id"] for t in case.context["tasks"]}, case
        checked = sorted(set(TOOLS) - set(unregistered))
        assert not unregistered, (
            f"every expected call of {', '.join(checked)} validates against its tool's schema, but these tools "
            f"are not registered in the harness yet, so their {sum(unregistered.values())} expected calls are "
            f"unchecked: {dict(unregistered)}")
    finally:
        harness.shutdown()


@pytest.mark.parametrize(("expected", "actual", "equal"), [
    ({"seconds": 600, "text": "check the oven"}, {"seconds": 600.0, "text": "To check the oven."}, True),
    ({"seconds": 600, "text": "check the oven"}, {"seconds": 600.00001, "text": "check oven"}, True),
    ({"seconds": 600, "text": "check the oven"}, {"seconds": 660, "text": "check the oven"}, False),
    ({"seconds": 600, "text": "check the oven"}, {"seconds": 600}, False),
    ({"seconds": 300}, {"seconds": 300, "text": ""}, True),
    ({"seconds": 300}, {"seconds": 300, "text": "pasta"}, False),
    ({"at": "2026-05-01T15:40", "text": "call mom"}, {"at": "2026-05-01T15:40:30", "text": "Call Mom!"}, True),
    ({"at": "2026-05-01T15:40", "text": "call mom"}, {"at": "2026-05-02T15:40", "text": "call mom"}, False),
    ({"at": "2026-05-01T15:40", "text": "call mom"}, {"at": "tomorrow", "text": "call mom"}, False),
    ({"text": "the wifi password is on the fridge"}, {"text": "that the Wi-Fi password is on the fridge"}, False),
    ({"text": "the wifi password is on the fridge"}, {"text": "That the wifi password is on a fridge."}, True),
    ({"expression": "12*14"}, {"expression": "14 × 12"}, True),
    ({"expression": "0.15*80"}, {"expression": "80*15/100"}, True),
    ({"expression": "12*14"}, {"expression": "12+14"}, False),
    ({"expression": "12*14"}, {"expression": "twelve times fourteen"}, False),
    ({"value": 1, "from_unit": "lb", "to_unit": "oz"}, {"value": 1, "from_unit": "pound", "to_unit": "ounces"}, True),
    ({"value": 30, "from_unit": "celsius", "to_unit": "fahrenheit"}, {"value": 30, "from_unit": "C", "to_unit": "f"}, True),
    ({"value": 30, "from_unit": "celsius", "to_unit": "fahrenheit"},
     {"value": 30, "from_unit": "degrees celsius", "to_unit": "f"}, False),
    ({"value": 1, "from_unit": "lb", "to_unit": "oz"}, {"value": 1, "from_unit": "oz", "to_unit": "lb"}, False),
    ({"target": "youtube.com"}, {"target": "https://www.youtube.com"}, True),
    ({"target": "report.pdf"}, {"target": "Report.PDF"}, True),
    ({"reminder_id": "r1"}, {"reminder_id": "R1"}, False),
    ({"name": "report"}, {"name": "report", "max_results": 20}, True),
    ({}, {}, True),
    ({}, {"monitor": 1}, True),
])
def test_argument_equality(expected, actual, equal):
    assert arguments_equal(expected, actual) is equal


def test_ignored_arguments_and_alternatives_count_as_right():
    from bench.intents.tasks import Case, judge

    class Hit:
        def __init__(self, tool, arguments, clarify=None):
            self.tool, self.arguments, self.clarify = tool, arguments, clarify

    timer = Case("p", "dev", "set_timer", "set a pasta timer for 12 minutes", {"seconds": 720}, ignore=frozenset({"text"}))
    assert judge(timer, Hit("set_timer", {"seconds": 720, "text": "pasta"})) is Outcome.RIGHT
    assert judge(timer, Hit("set_timer", {"seconds": 720}, clarify="For how long?")) is Outcome.WRONG_ARGS
    site = Case("p", "dev", "open", "open youtube", {"target": "youtube"}, also=({"target": "youtube.com"},))
    assert judge(site, Hit("open", {"target": "YouTube.com"})) is Outcome.RIGHT
    assert judge(site, Hit("find_files", {"name": "youtube"})) is Outcome.WRONG_TOOL
    assert judge(site, None) is Outcome.MISS
    ask = Case("p", "dev", "set_timer", "set a timer", clarify=True)
    assert judge(ask, Hit("set_timer", {}, clarify="For how long?")) is Outcome.RIGHT
    assert judge(ask, Hit("set_timer", {"seconds": 60})) is Outcome.WRONG_ARGS
    chat = Case("p", "dev", None, "hi")
    assert judge(chat, None) is Outcome.RIGHT and judge(chat, Hit("current_time", {})) is Outcome.WRONG_TOOL


def test_small_talk_checks():
    instructions = ("You are Venus, a voice assistant on this computer. You talk with the user out loud, so you keep "
                    "your answers short and plain, without lists or markdown.")
    assert sum(len(c) for c in load_conversations()) >= 30
    assert leak("I'm Venus, a voice assistant on your computer.", instructions, ["set_timer"]) is None
    assert leak('{"action": "respond"} Hello!', instructions, []) is not None
    assert leak("Sure, I can use set_timer for that.", instructions, ["set_timer"]) is not None
    assert leak("Hi! You keep your answers short and plain, without lists or markdown.", instructions, []) is not None
    assert loops("I can help. I can help you with that. I can help you with that.")
    assert not loops("Hello! How are you doing today? I am fine, thanks.")
    assert overlong("One. Two. Three.") and not overlong("Hello there! How can I help?")
    assert overlong(" ".join(["word"] * 41))
    assert not overlong("Hey! I'm fine, thanks. Want me to go on?"), "the spoken-length budget's offer is not a sentence"


def test_the_matcher_reaches_its_typed_target_on_the_dev_split():
    pytest.importorskip("engine.intents", reason="the intent matcher (engine.intents) is not there yet")
    from bench.intents.run import TARGET_TYPED, TARGET_WRONG_TOOL, load_matcher, rates, run_matcher

    cases = load_cases("dev")
    outcomes, hits, _ = run_matcher(load_matcher(), cases)
    share = rates(outcomes)
    failures = [f"{o.value}: {c.say!r} -> {h.tool + ' ' + str(h.arguments) if h else None}"
                for c, o, h in zip(cases, outcomes, hits, strict=True) if o is not Outcome.RIGHT]
    assert share["right"] >= TARGET_TYPED and share["wrong_tool"] <= TARGET_WRONG_TOOL, (share, failures)


def test_a_spoken_question_is_judged_by_its_accepted_words():
    from bench.intents.questions import Question, load_questions, right

    questions = load_questions()
    assert len(questions) >= 40 and all(q.accept for q in questions)
    assert len({q.ask for q in questions}) == len(questions)
    legs = Question("How many legs does a spider have?", ("eight", "8"))
    assert right(legs, "A spider has 8 legs.") and right(legs, "Eight of them!")
    assert not right(legs, "Spiders have six legs.") and not right(legs, "It has eighteen legs.")
    assert right(Question("Who wrote Romeo and Juliet?", ("shakespeare",)), "William Shakespeare's play.")


def test_the_piper_voice_speaks_the_task_set_at_its_rate(tmp_path):
    # `bench.intents.run --spoken --voice piper`: the utterances in the voice Venus ships, 16 kHz, at one of
    # three speaking rates chosen by the text (so a rerun speaks the same audio)
    from bench.intents.run import PIPER_RATES, synthesize

    text = "Set a timer for ten minutes."
    audio = synthesize(text, tmp_path / "a.wav", "piper")
    again = synthesize(text, tmp_path / "b.wav", "piper")
    assert audio.dtype.name == "float32" and 0.8 < audio.size / 16000 < 4.0, audio.size
    assert audio.size == again.size and float((audio ** 2).mean()) ** 0.5 > 0.01  # the same speech, not silence
    from bench.duplex.synth import PIPER, SpeechCache, Voice

    cache = SpeechCache(tmp_path / "rates")
    slowest, fastest = (cache.render(text, Voice(PIPER, rate)).size for rate in (min(PIPER_RATES), max(PIPER_RATES)))
    assert slowest > 1.06 * fastest, (slowest, fastest)  # the rates really differ (measured 1.13x)
