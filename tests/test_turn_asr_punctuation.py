"""End of turn on whisper's own punctuation: fragments it closed with a period still wait through the pause."""

from __future__ import annotations

import pytest

from engine.runtime.turn_taking import EndOfTurnDetector, EndOfTurnOptions, distrust_asr_punctuation

# whisper tiny.en on the first half of a paused sentence, as heard in bench/duplex cases
WHISPER_FRAGMENTS = ["set on alarm for it.", "It's a lot of room for it.", "Can you remind me to call?",
                     "I need the recipe for it.", "my flight leads.", "Send the message to..."]
COMPLETE_QUESTIONS = ["What is the capital of Canada?", "who painted the Mona Lisa.", "How far away is the moon?",
                      "Can you remind me to call my sister tomorrow?", "Yeah.", "What should I pack for a hiking trip?"]


@pytest.mark.parametrize("text", WHISPER_FRAGMENTS)
def test_whisper_closed_fragments_wait_through_a_long_pause(text: str) -> None:
    verdict = EndOfTurnDetector().decide(1200, text, is_final=True)
    assert not verdict.end_of_turn, verdict.reason


@pytest.mark.parametrize("text", COMPLETE_QUESTIONS)
def test_complete_turns_still_end_quickly(text: str) -> None:
    verdict = EndOfTurnDetector().decide(350, text, is_final=True)
    assert verdict.end_of_turn, verdict.reason


def test_trusting_the_asr_punctuation_is_what_cut_in_before() -> None:
    trusting = EndOfTurnDetector(options=EndOfTurnOptions(asr_punctuation=False, short_turn_words=0,
                                                          missing_object_cap=1.0))
    assert trusting.decide(1200, "set on alarm for it.", is_final=True).end_of_turn


def test_reasons_name_the_cue() -> None:
    detector = EndOfTurnDetector()
    assert "wants its object" in detector.decide(100, "Can you remind me to call?").reason
    assert "only 3 words" in detector.decide(100, "my flight leads.").reason
    # a wh-question may end on the verb: it asks for the object
    assert detector.decide(350, "Who should I call?", is_final=True).end_of_turn


def test_distrust_asr_punctuation() -> None:
    assert distrust_asr_punctuation("set on alarm for it.") == "set on alarm for"
    assert distrust_asr_punctuation("my flight leads.") == "my flight leads"
    assert distrust_asr_punctuation("I was going to...") == "I was going to..."
    assert distrust_asr_punctuation("What is it?") == "What is it?"


@pytest.mark.parametrize("kwargs", [dict(short_turn_words=-1), dict(short_turn_cap=1.5), dict(missing_object_cap=-0.1)])
def test_bad_options_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        EndOfTurnOptions(**kwargs)
