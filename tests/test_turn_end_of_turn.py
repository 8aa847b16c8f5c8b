"""End-of-turn detection: complete questions end fast, unfinished sentences wait, every bad option is refused."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package

import pytest

from bench.duplex.turn_corpus import corpus
from engine.runtime.turn_taking import (
    FEATURE_NAMES,
    EndOfTurnDetector,
    EndOfTurnOptions,
    LexicalTurnModel,
    turn_features,
)

COMPLETE = ["What's the weather in Paris?", "Set a timer for ten minutes.", "Tell me a joke.", "Yeah.",
            "Who wrote Hamlet?", "Please turn the music down."]
UNFINISHED = ["I'd like to book a table for", "I'd like to book a table for.", "Can you tell me",
              "How much does it cost to fly to?",  # whisper puts a question mark on a cut-off question
              "So um", "Remind me to call my", "I was wondering if you could", "What's the weather in",
              "Tell me the news about!"]  # whisper ends a cut-off request with "!" too


@pytest.mark.parametrize("text", COMPLETE)
def test_complete_utterance_ends_after_a_short_silence(text: str) -> None:
    verdict = EndOfTurnDetector().decide(300, text)
    assert verdict.end_of_turn, verdict.reason
    assert verdict.probability > 0.7
    assert verdict.required_silence_ms <= 350


@pytest.mark.parametrize("text", UNFINISHED)
def test_unfinished_utterance_waits_through_a_long_pause(text: str) -> None:
    detector = EndOfTurnDetector()
    verdict = detector.decide(1000, text)
    assert not verdict.end_of_turn, verdict.reason
    assert verdict.probability < 0.35
    assert "waits" in verdict.reason
    # ... but not forever: the maximum silence always ends the turn
    assert detector.decide(detector.options.max_silence_ms, text).end_of_turn


def test_the_pause_example_from_the_issue_waits_then_the_full_sentence_ends() -> None:
    detector = EndOfTurnDetector()
    assert not detector.decide(800, "I'd like to book a table for").end_of_turn
    assert detector.decide(250, "I'd like to book a table for four people.", is_final=True).end_of_turn


@pytest.mark.parametrize("text, last_p", [("My flight lead net.", 0.41), ("I'd like to work at table 4.", 0.58),
                                           ("Might likely net.", 0.44)])
def test_a_final_whose_last_word_whisper_was_unsure_of_waits_through_the_pause(text: str, last_p: float) -> None:
    # whisper tiny's finals of "My flight leaves at" and "I'd like to book a table for" before the user paused
    detector = EndOfTurnDetector()
    sure = detector.decide(0, text, is_final=True, last_word_probability=0.95)
    unsure = detector.decide(0, text, is_final=True, last_word_probability=last_p)
    assert sure.required_silence_ms < 1500 <= unsure.required_silence_ms, (sure.reason, unsure.reason)
    assert "unsure of the last word" in unsure.reason


@pytest.mark.parametrize("text, last_p", [("How tall is mountain Everest?", 0.1), ("Yeah, thanks.", 0.3),
                                           ("Tell me a joke.", 0.9), ("Stop.", 0.2)])
def test_an_unsure_last_word_does_not_hold_a_question_a_closer_or_a_sure_turn(text: str, last_p: float) -> None:
    detector = EndOfTurnDetector()
    verdict = detector.decide(350, text, is_final=True, last_word_probability=last_p)
    unknown = detector.decide(350, text, is_final=True)
    assert verdict.required_silence_ms == unknown.required_silence_ms <= 500, verdict.reason
    assert "unsure" not in verdict.reason


@pytest.mark.parametrize("text", ["What's the best way to get, too?", "How do I get to?", "Is it far to go, too."])
def test_a_motion_verb_then_too_is_the_preposition_heard_as_its_homophone(text: str) -> None:
    # whisper (beam 4) writes the cut-off "What's the best way to get to" as "What's the best way to get, too?"
    verdict = EndOfTurnDetector().decide(0, text, is_final=True, last_word_probability=0.95)
    assert verdict.required_silence_ms >= 1500, verdict.reason


def test_a_lone_bye_after_a_question_is_the_preposition_a_beam_split_off() -> None:
    # live, seed 111 pause 026: "Can you play some music by" [pause] decoded as "Can you play some music? Bye."
    detector = EndOfTurnDetector()
    split = detector.decide(0, "Can you play some music? Bye.", is_final=True, last_word_probability=0.93)
    assert split.required_silence_ms >= 1500, split.reason
    # seed 131 pause 018, the one cut-in of that run: "Could you play some music by" as "... music, bye?"
    asked = detector.decide(0, "Could you play some music, bye?", is_final=True, last_word_probability=0.67)
    assert asked.required_silence_ms >= 1500, asked.reason
    for closing in ("Okay, bye.", "Thanks. Bye."):  # a goodbye is not read as a preposition
        assert detector.decide(0, closing, is_final=True).required_silence_ms < split.required_silence_ms


@pytest.mark.parametrize("text", ["Could you recommend a good science fiction book?", "Can you find me a good book?",
                                  "Can you show me the new book?"])
def test_an_object_verb_after_a_determiner_is_a_noun_that_ends_the_question(text: str) -> None:
    verdict = EndOfTurnDetector().decide(0, text, is_final=True, last_word_probability=0.95)
    assert verdict.required_silence_ms <= 500, verdict.reason
    assert "wants its object" not in verdict.reason


@pytest.mark.parametrize("text", ["Please add", "Can you remind me to call", "I need to book", "And then send"])
def test_an_object_verb_after_to_please_or_a_subject_still_wants_its_object(text: str) -> None:
    verdict = EndOfTurnDetector().decide(0, text, is_final=True, last_word_probability=0.95)
    assert "still wants its object" in verdict.reason
    assert verdict.required_silence_ms >= 1500


def test_no_words_needs_the_maximum_silence() -> None:
    detector = EndOfTurnDetector(options=EndOfTurnOptions(min_silence_ms=100, max_silence_ms=900))
    assert not detector.decide(899, "  ").end_of_turn
    assert detector.decide(900, "").end_of_turn


def test_required_silence_falls_as_completeness_rises() -> None:
    detector = EndOfTurnDetector()
    waits = [detector.required_silence_ms(p / 10) for p in range(11)]
    assert waits == sorted(waits, reverse=True)
    assert waits[0] == detector.options.max_silence_ms and waits[-1] == detector.options.min_silence_ms


def test_model_separates_held_out_corpus() -> None:
    model = LexicalTurnModel()
    held_out = corpus(600, seed=4242)
    correct = sum((model.probability_complete(text) > 0.5) == bool(label) for text, label in held_out)
    assert correct / len(held_out) > 0.9


def test_features_have_one_value_per_name() -> None:
    assert len(turn_features("hello there?")) == len(FEATURE_NAMES)
    assert turn_features("book a table for")[FEATURE_NAMES.index("last_preposition")] == 1.0


def test_settings_scale_the_waits() -> None:
    options = EndOfTurnOptions.from_base_silence(1000)
    assert (options.min_silence_ms, options.max_silence_ms) == (400, 4000)


@pytest.mark.parametrize("kwargs", [dict(min_silence_ms=900, max_silence_ms=100), dict(curve=0),
                                    dict(final_bonus=0.9), dict(cache_size=-1), dict(min_silence_ms=-1),
                                    dict(unsure_last_word_probability=1.5), dict(unsure_last_word_cap=-0.1)])
def test_bad_options_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        EndOfTurnOptions(**kwargs)


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="lack"):
        LexicalTurnModel({"bias": 1.0})
    with pytest.raises(ValueError, match="silence_ms"):
        EndOfTurnDetector().decide(-5, "hi")


@pytest.mark.parametrize("words", ["Hiya, Venus!", "Hello there, how have you been?", "Thanks a lot, see you soon.",
                                   "Oh, hey Venus. What's up?", "Good evening, nice to meet you.", "Bye-bye!",
                                   "Not too bad, and you?"])
def test_social_formulas_said_alone_are_whole_turns(words):
    from engine.runtime.cues import social_formula

    assert social_formula(words, "Venus")


@pytest.mark.parametrize("words", ["Hi, could you", "Hey, what's the capital of", "Thanks for the", "Venus.",
                                   "Good morning everyone", "How are you feeling about", "Hello world",
                                   "I'm good at"])
def test_words_beyond_the_formulas_leave_the_turn_to_the_end_of_turn_model(words):
    from engine.runtime.cues import social_formula

    assert not social_formula(words, "Venus")


@pytest.mark.parametrize(("words", "only"), [
    ("Okay, stop.", True), ("Stop it, please.", True), ("Wait, wait.", True), ("Hang on a minute, Venus.", True),
    ("Never mind.", True), ("Stop, what time is it?", False), ("Wait, I meant Tuesday.", False), ("Okay.", False),
    ("Stop the download.", False), ("", False),
])
def test_a_turn_that_only_asks_venus_to_stop_is_told_from_one_with_a_message(words: str, only: bool) -> None:
    from engine.runtime.cues import only_stop

    assert only_stop(words, "Venus") is only


@pytest.mark.parametrize(("words", "reply"), [
    ("Never mind.", "Okay."), ("Venus, forget about it.", "Okay."), ("Um, not now, thanks.", "Okay."),
    ("That'll be all, thank you.", "Okay, I'm here if you need me."), ("No thank you.", "Okay, I'm here if you need me."),
    ("Never mind the weather, tell me a joke.", None), ("Thanks!", None), ("No.", None), ("Nothing much, you?", None),
    ("", None),
])
def test_a_turn_that_only_says_nothing_is_wanted_gets_a_short_okay(words: str, reply: str | None) -> None:
    from engine.runtime.cues import nothing_wanted_reply

    assert nothing_wanted_reply(words, "Venus") == reply
