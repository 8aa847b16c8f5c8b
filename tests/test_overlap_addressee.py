"""Addressee cues and whisper's mishearings: what the overlap policy makes of garbled or name-less speech."""

from __future__ import annotations

import pytest

from engine.runtime.cues import addressee_cues, content_words
from engine.runtime.overlap import ConversationContext, OverlapFeatures, OverlapOptions, OverlapPolicy
from engine.timeline import OverlapKind

SPEAKING = ConversationContext(speaking_text="The Eiffel Tower was built for the World's Fair in 1889, and it",
                               topic_text="Tell me the history of the Eiffel Tower.")


def closed(words: str, elapsed: int) -> OverlapKind | None:
    features = OverlapFeatures(elapsed_ms=elapsed, speech_active=False, words=words, is_final=True,
                               loudness_db=0.0, speaker_similarity=0.8)
    return OverlapPolicy().decide(features, SPEAKING).kind


# whisper tiny.en on other-addressed speech whose name it dropped or garbled
@pytest.mark.parametrize("words", ["And where did you put the keys?", "can you pick me up at 5?",
                                   "on can you grab the mail?", "I'm turning the oven off, please.",
                                   "the past time is boiling over.", "Did you feed the dog?",
                                   "I'll call you back later."])
def test_speech_to_someone_in_the_room_keeps_going_without_the_name(words: str) -> None:
    assert closed(words, 1800) == OverlapKind.OTHER_ADDRESSEE


@pytest.mark.parametrize("words", ["Can you give me the short version?", "How old is the universe?",
                                   "and tell me a joke.", "Who built it?", "I meant the one in Las Vegas.",
                                   "Can you speak more slowly?", "What year was the tower finished?"])
def test_requests_to_the_assistant_still_interrupt(words: str) -> None:
    assert closed(words, 1500) == OverlapKind.INTERRUPTION


@pytest.mark.parametrize("words", ["and then them.", "the air.", "here here.", "Uh -huh."])
def test_whispers_mishearings_of_backchannels_keep_going(words: str) -> None:
    assert closed(words, 600) == OverlapKind.BACKCHANNEL


def test_a_long_utterance_of_the_same_words_is_not_a_backchannel() -> None:
    # the soundalike "and then" only counts in a short utterance
    assert closed("and then what happened to the tower after the fair?", 2200) == OverlapKind.INTERRUPTION


def test_a_request_without_assistant_cues_pauses_while_the_user_goes_on() -> None:
    policy = OverlapPolicy()
    partial = OverlapFeatures(elapsed_ms=900, words="Can you", loudness_db=0.0)
    verdict = policy.decide(partial, SPEAKING)
    assert verdict.stop and verdict.provisional, verdict.reason
    later = policy.review(verdict, OverlapFeatures(elapsed_ms=2000, speech_active=False, is_final=True,
                                                    words="can you pick me up at five?"), SPEAKING)
    assert later.kind == OverlapKind.OTHER_ADDRESSEE and "resume" in later.reason


def test_cues_explain_themselves() -> None:
    other = addressee_cues("where did you put the keys?")
    assert other.other_wins and any("home" in r for r in other.reasons)
    mine = addressee_cues("who designed the tower?", speaking_text="The Eiffel Tower was designed by")
    assert not mine.other_wins and mine.to_assistant > 0 and any("topic" in r for r in mine.reasons)
    assert addressee_cues("").to_assistant == 0 and not addressee_cues("").other_wins
    assert content_words("the Eiffel Tower is tall") == {"eiffel", "tower", "tall"}


def test_short_remark_option_is_validated() -> None:
    with pytest.raises(ValueError, match="short_remark_ms"):
        OverlapOptions(short_remark_ms=5000)


def test_a_weak_voice_cue_does_not_outvote_a_stop_cue_at_the_users_level() -> None:
    heard = OverlapFeatures(elapsed_ms=1800, speech_active=False, is_final=True, loudness_db=-1.0,
                            words="actually what's the weather tomorrow?", speaker_similarity=0.1)
    assert OverlapPolicy().decide(heard, SPEAKING).kind == OverlapKind.INTERRUPTION
    other_voice = OverlapFeatures(elapsed_ms=1800, speech_active=False, is_final=True, loudness_db=-4.0,
                                  words="they're on the table.", speaker_similarity=0.1)
    assert OverlapPolicy().decide(other_voice, SPEAKING).kind == OverlapKind.BACKGROUND


def test_an_implausibly_low_level_is_a_measuring_error_not_background() -> None:
    policy = OverlapPolicy()
    heard = OverlapFeatures(elapsed_ms=300, words="", loudness_db=-50.0)
    verdict = policy.decide(heard, SPEAKING)
    assert verdict.kind == OverlapKind.INTERRUPTION and verdict.provisional, verdict.reason
    assert verdict.scores["loudness"] == 0.5
    tv = policy.decide(OverlapFeatures(elapsed_ms=300, words="", loudness_db=-18.0), SPEAKING)
    assert tv.kind == OverlapKind.BACKGROUND
    with pytest.raises(ValueError, match="plausible_level_db"):
        OverlapOptions(plausible_level_db=-5.0)
