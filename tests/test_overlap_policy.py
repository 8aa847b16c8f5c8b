"""The overlap policy on the situations of the issue: what it decides, when, and why."""

from __future__ import annotations

import dataclasses

import pytest

from engine.runtime.overlap import (
    ConversationContext,
    OverlapFeatures,
    OverlapOptions,
    OverlapPolicy,
    backchannel_score,
)
from engine.timeline import Kind, OverlapKind, Timeline

SPEAKING = ConversationContext(assistant_name="Venus", speaking_text="The Eiffel Tower was finished in 1889 and")
USER = dict(speaker_similarity=0.85, loudness_db=0.0)


def decide(words: str = "", elapsed: int = 250, active: bool = True, final: bool = False,
           context: ConversationContext = SPEAKING, **acoustics):
    acoustics = {**USER, **acoustics}
    return OverlapPolicy().decide(OverlapFeatures(elapsed_ms=elapsed, speech_active=active, words=words,
                                                  is_final=final, **acoustics), context)


@pytest.mark.parametrize("words", ["Wait, what year was that?", "Stop.", "Hold on", "Can you repeat that?",
                                   "Venus, what about London", "Actually tell me about Rome"])
def test_interruptions_stop_at_once(words: str) -> None:
    verdict = decide(words, elapsed=200)
    assert verdict.kind == OverlapKind.INTERRUPTION and verdict.stop, verdict.reason
    # the final transcript confirms it: Venus stays stopped
    final = OverlapFeatures(elapsed_ms=900, speech_active=False, words=words, is_final=True, **USER)
    confirmed = OverlapPolicy().review(verdict, final, SPEAKING)
    assert confirmed.kind == OverlapKind.INTERRUPTION and not confirmed.provisional, confirmed.reason


def test_a_stop_cue_whisper_invented_in_a_partial_is_revised_by_the_final_words() -> None:
    verdict = decide("And uh, wait.", elapsed=900)
    assert verdict.stop and verdict.provisional
    final = OverlapFeatures(elapsed_ms=2000, speech_active=False, words="And where did you put the keys?",
                            is_final=True, **USER)
    revised = OverlapPolicy().review(verdict, final, SPEAKING)
    assert revised.kind == OverlapKind.OTHER_ADDRESSEE and "resume" in revised.reason


@pytest.mark.parametrize("words", ["Uh-huh.", "Uh -huh.", "Mm -mm.", "Yeah.", "Mm-hmm", "Okay", "Oh wow.", "I see.",
                                   "Right, right."])
def test_backchannels_keep_going(words: str) -> None:
    verdict = decide(words, elapsed=450, active=False, final=True)
    assert verdict.kind == OverlapKind.BACKCHANNEL and not verdict.stop, verdict.reason


def test_backchannel_words_wait_while_the_user_may_go_on() -> None:
    assert decide("Yeah", elapsed=150).kind is None
    assert decide("Yeah but what about the", elapsed=600).kind == OverlapKind.INTERRUPTION


def test_a_short_remark_that_asks_nothing_keeps_going() -> None:
    assert decide("That's it.", elapsed=600, active=False, final=True).kind == OverlapKind.BACKCHANNEL
    assert decide("What?", elapsed=400, active=False, final=True).kind == OverlapKind.INTERRUPTION


def test_a_short_sound_whisper_could_not_make_out_keeps_going() -> None:
    # espeak's "Mm-hmm." over Venus's voice came back from whisper tiny as "and then them." (mean p 0.52)
    unsure = decide("and then them.", elapsed=1400, active=False, final=True, duration_ms=808, word_confidence=0.52)
    assert unsure.kind == OverlapKind.BACKCHANNEL and not unsure.stop, unsure.reason
    assert "could not make out" in unsure.reason
    # the same words heard clearly claim the floor; so does an unsure question, and a long unsure segment
    assert decide("and then them.", elapsed=1400, active=False, final=True, duration_ms=808,
                  word_confidence=0.9).kind == OverlapKind.INTERRUPTION
    assert decide("and then what?", elapsed=1400, active=False, final=True, duration_ms=808,
                  word_confidence=0.5).kind == OverlapKind.INTERRUPTION
    assert decide("tell me more now", elapsed=2400, active=False, final=True, duration_ms=2000,
                  word_confidence=0.5).kind == OverlapKind.INTERRUPTION
    with pytest.raises(ValueError):
        OverlapFeatures(elapsed_ms=10, word_confidence=1.5)


def test_a_yes_after_venus_asked_a_question_is_an_answer() -> None:
    asking = ConversationContext(speaking_text="Shall I book it for seven?")
    assert decide("Yes.", elapsed=400, active=False, final=True, context=asking).kind == OverlapKind.INTERRUPTION


@pytest.mark.parametrize("words", ["John, can you grab the mail?", "Hey Sarah, dinner is ready",
                                   "Honey, where are my keys?", "I'll be there in a minute, Mike."])
def test_speech_to_someone_else_keeps_going(words: str) -> None:
    verdict = decide(words, elapsed=280)
    assert verdict.kind == OverlapKind.OTHER_ADDRESSEE and not verdict.stop, verdict.reason


def test_a_person_named_earlier_in_the_conversation_is_someone_else() -> None:
    context = ConversationContext(speaking_text="Sure.", other_names=("Anna",))
    assert decide("did anna call back", context=context).kind == OverlapKind.OTHER_ADDRESSEE


def test_looking_away_without_a_request_is_someone_else() -> None:
    verdict = decide("the blue one is mine I think", elapsed=280, facing_screen=False)
    assert verdict.kind == OverlapKind.OTHER_ADDRESSEE


def test_facing_the_screen_with_a_request_is_an_interruption() -> None:
    assert decide("what time is it", facing_screen=True).kind == OverlapKind.INTERRUPTION


@pytest.mark.parametrize(("acoustics", "elapsed"), [(dict(speaker_similarity=0.1), 1200), (dict(loudness_db=-20.0), 120)])
def test_other_voices_and_quiet_speech_are_background(acoustics: dict, elapsed: int) -> None:
    verdict = decide("and now the weather for the weekend", elapsed=elapsed, **acoustics)
    assert verdict.kind == OverlapKind.BACKGROUND, verdict.reason


def test_speaker_similarity_from_too_little_speech_is_ignored() -> None:
    verdict = decide("what about tomorrow", elapsed=300, speaker_similarity=0.05)
    assert verdict.kind == OverlapKind.INTERRUPTION, verdict.reason


def test_the_other_person_answering_the_user_is_part_of_the_side_conversation() -> None:
    context = ConversationContext(speaking_text="The tower is", side_conversation=True)
    assert decide("Sure, in a minute.", context=context, active=False, final=True).kind == OverlapKind.OTHER_ADDRESSEE
    assert decide("Venus, go on", context=context).kind == OverlapKind.INTERRUPTION


def test_venus_own_words_are_echo() -> None:
    assert decide("eiffel tower was finished in", elapsed=200).kind == OverlapKind.ECHO
    assert decide("", elapsed=100, echo_likelihood=0.95).kind == OverlapKind.ECHO


def test_undecided_before_the_deadline_then_provisional_without_words() -> None:
    policy = OverlapPolicy()
    early = policy.decide(OverlapFeatures(elapsed_ms=120, **USER), SPEAKING)
    assert early.kind is None and not early.decided
    late = policy.decide(OverlapFeatures(elapsed_ms=300, **USER), SPEAKING)
    assert late.kind == OverlapKind.INTERRUPTION and late.provisional
    # the words that arrive later show it was a backchannel: the paused answer resumes
    revised = policy.review(late, OverlapFeatures(elapsed_ms=700, speech_active=False, words="Mm-hmm.",
                                                  is_final=True, **USER), SPEAKING)
    assert revised.kind == OverlapKind.BACKCHANNEL and "resume" in revised.reason
    # a real interruption stays a (provisional) stop on partial words, and the final words confirm it
    partial = policy.review(late, OverlapFeatures(elapsed_ms=700, words="what about tomorrow", **USER), SPEAKING)
    assert partial.kind == OverlapKind.INTERRUPTION and partial.provisional
    confirmed = policy.review(partial, OverlapFeatures(elapsed_ms=1100, speech_active=False, is_final=True,
                                                       words="what about tomorrow?", **USER), SPEAKING)
    assert confirmed.kind == OverlapKind.INTERRUPTION and not confirmed.provisional


def test_speech_quiet_so_far_waits_for_its_level_past_the_deadline_but_not_for_long() -> None:
    # The VAD reports TV speech across the room late; its first blocks already read far below the user's level.
    # Pausing Venus on no words and no level would be a stop the user hears: the policy waits for the level.
    policy = OverlapPolicy()
    quiet = dict(speaker_similarity=None, loudness_db=None, early_loudness_db=-20.0)
    waiting = policy.decide(OverlapFeatures(elapsed_ms=450, **quiet), SPEAKING)
    assert waiting.kind is None and "waiting for its level" in waiting.reason
    settled = policy.decide(OverlapFeatures(elapsed_ms=500, speaker_similarity=None, loudness_db=-20.0), SPEAKING)
    assert settled.kind == OverlapKind.BACKGROUND and not settled.stop
    # not for long: past the wait the voice at the deadline still pauses the answer
    late = policy.decide(OverlapFeatures(elapsed_ms=650, **quiet), SPEAKING)
    assert late.kind == OverlapKind.INTERRUPTION and late.provisional
    # and a start at the user's level pauses at the deadline, as before
    loud = policy.decide(OverlapFeatures(elapsed_ms=300, speaker_similarity=None, early_loudness_db=-3.0), SPEAKING)
    assert loud.kind == OverlapKind.INTERRUPTION and loud.provisional


def test_low_sensitivity_keeps_talking_without_words() -> None:
    policy = OverlapPolicy(OverlapOptions(sensitivity=0.2))
    verdict = policy.decide(OverlapFeatures(elapsed_ms=300, **USER), SPEAKING)
    assert verdict.kind == OverlapKind.BACKCHANNEL and verdict.provisional and not verdict.stop


def test_a_short_wordless_burst_is_a_backchannel() -> None:
    assert decide("", elapsed=260, active=False).kind == OverlapKind.BACKCHANNEL


def test_every_decision_goes_on_the_timeline_with_its_reason() -> None:
    timeline = Timeline()
    verdict = decide("Stop.", elapsed=180)
    event = timeline.append(verdict.to_event())
    assert event.kind == Kind.OVERLAP_DECISION and event.verdict == OverlapKind.INTERRUPTION
    assert "stop cue" in event.reason and event.latency_ms == 180 and event.scores["stop_cue"] == 1.0
    with pytest.raises(ValueError, match="undecided"):
        decide("", elapsed=10).to_event()


def test_backchannel_score() -> None:
    assert backchannel_score(["uh-huh"]) == 1.0
    assert backchannel_score(["i", "see"]) == 1.0
    assert backchannel_score(["what", "time", "is", "it"]) == 0.0
    assert backchannel_score([]) == 0.0


@pytest.mark.parametrize("kwargs", [dict(deadline_ms=10), dict(sensitivity=1.5), dict(same_speaker_threshold=0),
                                    dict(background_level_db=3), dict(backchannel_max_ms=50),
                                    dict(interruption_min_words=0), dict(echo_word_overlap=0),
                                    dict(min_speaker_ms=-1), dict(level_wait_ms=-1),
                                    dict(early_quiet_margin_db=-2.0)])
def test_bad_options_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        OverlapOptions(**kwargs)


def test_bad_features_are_refused() -> None:
    with pytest.raises(ValueError, match="elapsed_ms"):
        OverlapFeatures(elapsed_ms=-1)
    with pytest.raises(ValueError, match="speaker_similarity"):
        OverlapFeatures(elapsed_ms=0, speaker_similarity=2.0)


def test_speech_judged_quiet_is_revised_when_the_users_voice_asks_or_stops() -> None:
    # The first word came in soft, so the level said "background"; the words and the voice say it is the user.
    early = decide("", elapsed=300, loudness_db=-16.0, speaker_similarity=None)
    assert early.kind == OverlapKind.BACKGROUND and early.provisional and not early.stop
    later = OverlapFeatures(elapsed_ms=1200, words="Stop, what time is it now?", loudness_db=-16.0,
                            speaker_similarity=0.83)
    revised = OverlapPolicy().review(early, later, SPEAKING)
    assert revised.kind == OverlapKind.INTERRUPTION and revised.stop, revised.reason
    # a quiet request in another voice (the TV) stays background
    tv = OverlapFeatures(elapsed_ms=1200, words="Can you believe what happened next?", loudness_db=-16.0,
                         speaker_similarity=0.3)
    assert OverlapPolicy().review(early, tv, SPEAKING).kind == OverlapKind.BACKGROUND
    # and so does one whose voice is not known yet, until the final words
    unknown = OverlapFeatures(elapsed_ms=700, words="Can you see where I left it?", loudness_db=-10.0)
    assert OverlapPolicy().review(early, unknown, SPEAKING).kind == OverlapKind.BACKGROUND
    # unless the level, measured over more of the speech, is now clearly the user's (a soft first syllable)
    louder = OverlapFeatures(elapsed_ms=900, words="Can you give me the short version?", loudness_db=-3.0)
    assert OverlapPolicy().review(early, louder, SPEAKING).stop


def test_a_name_called_out_first_is_someone_else_until_the_words_say_otherwise() -> None:
    # the first partial often holds only the name ("Mike."): provisional, so the words that follow decide
    called = decide("Mike.", elapsed=600)
    assert called.kind == OverlapKind.OTHER_ADDRESSEE and called.provisional, called.reason
    assert decide("Hey Sarah.", elapsed=600).kind == OverlapKind.OTHER_ADDRESSEE
    # whisper drops the vocative's comma in later partials: the name at the start still counts
    assert decide("Mike did you...", elapsed=900).kind == OverlapKind.OTHER_ADDRESSEE
    # a capitalised first word that is no given name is not taken for one, nor is the assistant's name
    assert decide("Weight.", elapsed=600).kind == OverlapKind.INTERRUPTION
    assert decide("Will you stop?", elapsed=600).kind == OverlapKind.INTERRUPTION
    assert decide("Venus.", elapsed=600).kind == OverlapKind.INTERRUPTION
    # once the segment closed, a lone name is no longer "the rest still being said"
    assert decide("Mike.", elapsed=600, active=False, final=True).scores["lone_name"] == 0.0
    policy = OverlapPolicy()
    revised = policy.review(called, OverlapFeatures(elapsed_ms=1500, words="Mike, stop talking, what time is it?",
                                                    **USER), SPEAKING)
    assert revised.kind == OverlapKind.INTERRUPTION, revised.reason


def test_a_closed_short_sound_of_backchannel_words_goes_on_before_the_final() -> None:
    # the partial of a "mm-hmm" ("and then the.") once the segment closed: keep going now; the final's
    # word confidence may still revise it
    early = decide("and then the.", elapsed=1000, active=False, duration_ms=800)
    assert early.kind == OverlapKind.BACKCHANNEL and early.provisional, early.reason
    assert decide("and then what?", elapsed=1000, active=False, duration_ms=800).kind == OverlapKind.INTERRUPTION


def test_a_burst_moments_after_a_settled_overlap_is_more_of_the_same_until_its_words_say_otherwise() -> None:
    # "John," (closed, judged a short remark), then "can you grab the mail?" 150 ms later: no pause at the
    # deadline of the second segment; its words still decide
    for earlier in (OverlapKind.BACKCHANNEL, OverlapKind.OTHER_ADDRESSEE, OverlapKind.BACKGROUND):
        context = ConversationContext(speaking_text="The tower is", follows=earlier)
        verdict = decide("", elapsed=300, context=context)
        assert verdict.kind == earlier and verdict.provisional and not verdict.stop, verdict.reason
        revised = OverlapPolicy().review(verdict, OverlapFeatures(elapsed_ms=700, words="Venus, stop.", **USER),
                                         context)
        assert revised.stop, revised.reason
    # without a recent overlap, the same burst pauses Venus at the deadline
    assert decide("", elapsed=300).stop
    # the talk with someone else going on: the next burst without words keeps going too
    side = ConversationContext(speaking_text="The tower is", side_conversation=True)
    assert decide("", elapsed=300, context=side).kind == OverlapKind.OTHER_ADDRESSEE


def test_words_moments_after_the_user_called_someone_are_said_to_that_person() -> None:
    # seed 121, talking to others 011: "Tom." closed as its own segment, then "Turn the oven off." began 544 ms
    # later, under a second after Venus started: it was taken for the user going on with their turn
    after_name = ConversationContext(speaking_text="Marie Curie was", follows=OverlapKind.OTHER_ADDRESSEE,
                                     answer_age_ms=974)
    for words in ("Turn the oven.", "Can you grab the mail?", "where did you put the keys?"):
        verdict = decide(words, elapsed=900, context=after_name)
        assert verdict.kind == OverlapKind.OTHER_ADDRESSEE and not verdict.stop, verdict.reason
        assert not verdict.provisional
    for words in ("Venus, what time is it?", "Wait, stop.", "Hold on."):
        assert decide(words, elapsed=900, context=after_name).stop, words
    # without the call before it, the same words that soon after Venus began go on with the user's turn
    alone = ConversationContext(speaking_text="Marie Curie was", answer_age_ms=974)
    assert decide("Turn the oven.", elapsed=900, context=alone).stop


def test_words_that_began_before_venus_spoke_go_on_with_the_users_turn() -> None:
    # live, seed 111 pause 001: "Tell me the news about" [pause; Venus starts 80 ms after the user goes on]
    # "the football game", heard first as "Therefore, talk.", was taken for a call to someone named Therefore
    before = ConversationContext(speaking_text="The news is about:", answer_age_ms=-81)
    verdict = decide("Therefore, talk.", elapsed=700, context=before)
    assert verdict.stop and "goes on with their turn" in verdict.reason, verdict.reason
    assert decide("Mm-hmm.", elapsed=700, context=before).kind == OverlapKind.BACKCHANNEL
    # a sentence adverb and a comma is no name, whenever it comes
    later = ConversationContext(speaking_text="The news is about:", answer_age_ms=3000)
    assert decide("Therefore, talk.", elapsed=700, context=later).scores["other_named"] == 0.0


def test_a_short_burst_whose_final_holds_no_words_is_judged_by_how_long_it_lasted() -> None:
    # seed 131, backchannel 026: the user's "Yeah, yeah." (1.0 s) over Venus decoded as a loop and then as nothing;
    # the empty final arrives 1.3 s after the onset, which is not how long the burst was
    short = decide("", elapsed=1300, active=False, final=True, duration_ms=1000)
    assert short.kind == OverlapKind.BACKCHANNEL and not short.provisional, short.reason
    assert decide("", elapsed=1700, active=False, final=True, duration_ms=1500).stop


def test_speech_judged_quiet_that_opens_with_a_stop_cue_stops_unless_the_voice_is_someone_elses() -> None:
    early = decide("", elapsed=300, loudness_db=-13.0, speaker_similarity=None)
    assert early.kind == OverlapKind.BACKGROUND and early.provisional
    policy = OverlapPolicy()
    # the voice is not known yet (under a second of speech): the stop cue at the start decides
    stop = policy.review(early, OverlapFeatures(elapsed_ms=700, words="stop.", loudness_db=-13.0), SPEAKING)
    assert stop.kind == OverlapKind.INTERRUPTION and stop.stop, stop.reason
    named = policy.review(early, OverlapFeatures(elapsed_ms=900, words="Venus, what time is it?",
                                                 loudness_db=-13.0), SPEAKING)
    assert named.stop, named.reason
    # a quiet voice that is clearly not the user's saying "wait" (a TV) stays background
    tv = OverlapFeatures(elapsed_ms=1500, words="Wait, there is more after the break!", loudness_db=-15.0,
                         speaker_similarity=0.1)
    assert policy.review(early, tv, SPEAKING).kind == OverlapKind.BACKGROUND
    # a stop cue deep inside quiet speech is not a claim on the floor either
    late_cue = OverlapFeatures(elapsed_ms=1500, words="and then she said we should stop at the station",
                               loudness_db=-15.0)
    assert policy.review(early, late_cue, SPEAKING).kind == OverlapKind.BACKGROUND


def test_the_person_the_user_talks_to_may_answer_with_a_stop_cue_without_stopping_venus() -> None:
    # "Kids, please keep it down." then, from the kids, "Okay, sorry!": another voice in the side conversation
    reply = dict(elapsed=1200, loudness_db=-7.0, speaker_similarity=0.03)
    for context in (ConversationContext(speaking_text="The tower is", side_conversation=True),
                    ConversationContext(speaking_text="The tower is", follows=OverlapKind.OTHER_ADDRESSEE)):
        verdict = decide("Okay, sorry.", context=context, **reply)
        assert verdict.kind == OverlapKind.BACKGROUND and not verdict.stop, verdict.reason
        assert "answers" in verdict.reason
        # the assistant's name still stops Venus, whoever says it
        assert decide("Venus, stop.", context=context, **reply).stop
    # outside a side conversation, a stop cue from another voice still stops Venus (a guest may stop it)
    assert decide("Okay, sorry.", **reply).stop


def test_names_the_user_mentioned_count_as_other_addressees() -> None:
    from engine.runtime.addressee import names_mentioned, overlap_hint

    assert names_mentioned("My wife Anna and my son's name is Tom, and my boss is here") == ["Anna", "Tom"]
    assert names_mentioned("my roommate, Jake, cooks") == ["Jake"]
    assert names_mentioned("my dad is at work and I told my friend I would call") == []
    assert overlap_hint(["Anna", "dad", "Tom"]) == "Mom, Dad, honey, kids, guys, Anna, Tom."
    assert overlap_hint(["Anna"], "Venus") == "Mom, Dad, honey, kids, guys, Anna, Venus."
    many = overlap_hint([f"Name{chr(65 + i)}" for i in range(26)], "Venus")
    assert many.endswith(", Venus.") and many.count(",") == 23  # the assistant's name is never cut off
    knows_ines = ConversationContext(speaking_text="The tower is", other_names=("Ines",))
    # a lone name whisper wrote so far, not among the common given names: known only from what the user said
    assert decide("Ines.", elapsed=500, context=knows_ines).kind == OverlapKind.OTHER_ADDRESSEE
    assert decide("Ines.", elapsed=500).kind != OverlapKind.OTHER_ADDRESSEE
    assert decide("Ines did you see my phone", elapsed=900, context=knows_ines).kind == OverlapKind.OTHER_ADDRESSEE


def test_a_misheard_name_gives_way_to_a_stop_cue_that_replaces_it() -> None:
    # whisper primed with household names heard "Hang on" as "Honey on.": the next words settle it
    policy = OverlapPolicy()
    named = decide("Honey on.", elapsed=750)
    assert named.kind == OverlapKind.OTHER_ADDRESSEE and named.named and not named.provisional
    stop = policy.review(named, OverlapFeatures(elapsed_ms=1500, words="Hang on, what does that?", **USER), SPEAKING)
    assert stop.stop, stop.reason
    # words that still hold the name, or that only happen to contain a stop cue later, keep it
    kept = policy.review(named, OverlapFeatures(elapsed_ms=1500, words="Honey, can you wait for me?", **USER),
                         SPEAKING)
    assert kept is named
    assert policy.review(named, OverlapFeatures(elapsed_ms=1500, words="the pasta, stop it boiling", **USER),
                         SPEAKING) is named


def test_speech_just_after_venus_began_goes_on_with_the_users_turn() -> None:
    # Venus took "I'd like to book a table for" for a whole turn; 500 ms into its answer the user goes on
    just_began = ConversationContext(speaking_text="I'm sorry,", answer_age_ms=500)
    verdict = decide("for people to hide.", elapsed=1100, context=just_began)
    assert verdict.stop and "goes on with their turn" in verdict.reason
    # a backchannel, a name called out, or quiet speech at that moment are not a continuation
    assert not decide("Okay.", elapsed=700, active=False, context=just_began).stop
    assert decide("John, can you grab the mail?", elapsed=1100, context=just_began).kind == \
        OverlapKind.OTHER_ADDRESSEE
    assert decide("for people to hide.", elapsed=1100, context=just_began, loudness_db=-18.0,
                  speaker_similarity=None).kind == OverlapKind.BACKGROUND
    # two seconds into the answer the same words are judged on their own
    later = ConversationContext(speaking_text="I'm sorry,", answer_age_ms=2000)
    assert not decide("for people to hide.", elapsed=1100, context=later).stop


def test_a_short_remark_judged_before_its_final_is_revised_by_a_stop_cue_in_it() -> None:
    # the VAD closed "Wait," on its own; the partial said "We", the final says "wait."
    policy = OverlapPolicy()
    early = policy.decide(OverlapFeatures(elapsed_ms=640, speech_active=False, words="We", **USER), SPEAKING)
    assert early.kind == OverlapKind.BACKCHANNEL and early.provisional
    final = OverlapFeatures(elapsed_ms=740, speech_active=False, words="wait.", is_final=True, **USER)
    assert policy.review(early, final, SPEAKING).stop


def test_the_same_unknown_lone_word_in_two_partials_is_taken_for_a_name_whisper_does_not_know() -> None:
    # "Tom, turn the oven off" decodes as "Time." and again "Time." before the rest is heard: a name, not a cue
    once = decide("Time.", elapsed=500)
    assert once.stop and once.scores["repeated_word"] == 0.0, once.reason
    twice = decide("Time.", elapsed=750, previous_words="Time.")
    assert twice.kind == OverlapKind.OTHER_ADDRESSEE and twice.provisional and twice.named, twice.reason
    # the words that follow decide: a question to the assistant after the word stops Venus
    policy = OverlapPolicy()
    first = decide("Paris.", elapsed=750, previous_words="Paris.")
    assert first.kind == OverlapKind.OTHER_ADDRESSEE, first.reason
    later = policy.review(first, OverlapFeatures(elapsed_ms=1200, words="Paris. What about Paris?", **USER), SPEAKING)
    assert later.stop, later.reason
    # a different unknown word the second time is a name whisper does not know too ("John," -> "job.", "DOG")
    other = decide("DOG", elapsed=680, previous_words="job.")
    assert other.kind == OverlapKind.OTHER_ADDRESSEE and other.provisional and other.named, other.reason
    # a stop cue cut short changes into the cue as more of it is heard ("Back." then "Actually..."): no name
    for before, now in (("Back.", "Actually..."), ("Way.", "wait."), ("Top.", "Stop."), ("Ven.", "Venice.")):
        assert decide(now, elapsed=750, previous_words=before).stop, (before, now)
    # nor is the same word twice a name when it is a cue's first word, a backchannel, a question or a request
    for word in ("Hold.", "Yeah.", "What?", "Tell", "Venus.", "The."):
        verdict = decide(word, elapsed=750, previous_words=word)
        assert verdict.scores["repeated_word"] == 0.0 and verdict.kind != OverlapKind.OTHER_ADDRESSEE, word
    # and a closed segment is judged on its final words, not on the partials before them
    closed = decide("Time.", elapsed=800, active=False, final=True, previous_words="Time.")
    assert closed.scores["repeated_word"] == 0.0


@pytest.mark.parametrize("words", ["Honestly, how tall is it?", "Anyway, what about the tower?",
                                   "So, who built it?", "Seriously, what does that word mean?",
                                   "Me, let's skip that and tell me a joke.", "Skip, not, and tell me a joke."])
def test_a_sentence_adverb_with_a_comma_is_no_name(words: str) -> None:
    # whisper writes "Honestly," like "John,": only a word that may be a name makes it speech to someone else
    verdict = decide(words, elapsed=600)
    assert verdict.scores["other_named"] == 0.0 and verdict.stop, verdict.reason


@pytest.mark.parametrize("words", ["Emily, did you feed the cat?", "Beverly, did you feed the cat?"])
def test_a_name_ending_in_ly_is_still_a_name(words: str) -> None:
    # a common one, or one the user mentioned ("my aunt Beverly")
    context = ConversationContext(assistant_name="Venus", speaking_text=SPEAKING.speaking_text,
                                  other_names=("Beverly",))
    verdict = decide(words, elapsed=600, context=context)
    assert verdict.kind == OverlapKind.OTHER_ADDRESSEE and not verdict.stop, verdict.reason


def test_quiet_speech_that_calls_someone_by_name_is_the_user_turned_away() -> None:
    # "Kids." measured 10.3 dB under the user's level (turned away from the mic): first background, then the
    # final words show the user calling someone, and the side conversation begins
    policy = OverlapPolicy()
    closed = dict(elapsed_ms=750, speech_active=False, loudness_db=-10.3, speaker_similarity=0.35)
    early = policy.decide(OverlapFeatures(words="Good.", **closed), SPEAKING)
    assert early.kind == OverlapKind.BACKGROUND and not early.provisional, early.reason
    called = policy.review(early, OverlapFeatures(words="kids.", is_final=True, **closed), SPEAKING)
    assert called.kind == OverlapKind.OTHER_ADDRESSEE and not called.provisional and not called.stop, called.reason
    # words that call nobody, much quieter speech (a TV across the room), a voice known to be someone else's,
    # or a stop cue stay background
    for words, level, voice, elapsed in (("Good night.", -10.3, 0.35, 750), ("Honey, look at this.", -18.0, 0.35, 750),
                                         ("Honey, look at this.", -10.3, 0.05, 1500),
                                         ("Kids, stop that.", -10.3, 0.35, 750)):
        heard = OverlapFeatures(elapsed_ms=elapsed, speech_active=False, words=words, is_final=True,
                                loudness_db=level, speaker_similarity=voice)
        assert policy.review(early, heard, SPEAKING).kind == OverlapKind.BACKGROUND, words
    with pytest.raises(ValueError, match="named_quiet_margin_db"):
        OverlapOptions(named_quiet_margin_db=-1.0)


def test_a_partial_cut_inside_the_assistants_name_stops_venus() -> None:
    # "Venus," then a breath: the partial holds "V." and the segment closes; whisper's final of it is empty
    closed = decide("V.", elapsed=650, active=False)
    assert closed.stop and not closed.provisional, closed.reason
    assert "began" in closed.reason
    assert decide("Venu", elapsed=400).stop
    # ...but not a whole word, a final, another name's letter, or a letter that fillers begin with
    max_context = ConversationContext(assistant_name="Max", speaking_text="The tower is")
    anna_context = ConversationContext(assistant_name="Anna", speaking_text="The tower is")
    for words, context, final in (("Very.", SPEAKING, False), ("V.", SPEAKING, True), ("An.", anna_context, False),
                                  ("M.", max_context, False), ("T.", SPEAKING, False)):
        verdict = decide(words, elapsed=650, active=False, final=final, context=context)
        assert not verdict.scores["assistant_named"], (words, verdict.reason)
        assert not verdict.stop, (words, verdict.reason)


def test_a_household_name_heard_as_a_word_like_its_start_twice_is_that_name() -> None:
    # "Anna, where did you put the keys?" decodes as "And", "and.", "And Web.", "And where did you?", ...; with
    # Anna in the household (settings, or "my wife Anna" said earlier) the two lone "and"s are her name
    policy, household = OverlapPolicy(), ConversationContext(speaking_text="The tower is", other_names=("Anna",))
    once = decide("And", elapsed=480, context=household)
    assert once.stop, once.reason
    twice = policy.review(once, OverlapFeatures(elapsed_ms=650, words="and.", previous_words="And", **USER),
                          household)
    assert twice.kind == OverlapKind.OTHER_ADDRESSEE and twice.named, twice.reason
    verdict = twice
    for words in ("And Web.", "And a quick...", "And where did you?", "And where did you put the keys?"):
        verdict = policy.review(verdict, OverlapFeatures(elapsed_ms=1000, words=words, **USER), household)
        assert verdict.kind == OverlapKind.OTHER_ADDRESSEE and verdict.named, (words, verdict.reason)
    # without the name before them, the same words are a request to Venus
    assert decide("And where did you?", elapsed=1000, context=household).stop
    # ...and after it, a stop cue, Venus's name or a question about the world still stop her
    for words in ("And, wait.", "Venus, what about it?", "And how tall is it?"):
        later = policy.review(twice, OverlapFeatures(elapsed_ms=1000, words=words, **USER), household)
        assert later.stop, (words, later.reason)
    # with no such name in the household, "and" twice is the user going on ("And... and...")
    alone = policy.review(once, OverlapFeatures(elapsed_ms=650, words="and.", previous_words="And", **USER),
                          SPEAKING)
    assert alone.stop and not alone.named, alone.reason
    # other function words alone twice are no name, nor is the start of a stop cue that sounds like a name
    assert decide("The.", elapsed=700, previous_words="The.", context=household).scores["repeated_word"] == 0.0
    tom = ConversationContext(speaking_text="The tower is", other_names=("Tom",))
    assert decide("To.", elapsed=700, previous_words="To.", context=tom).scores["repeated_word"] == 0.0
    stephanie = ConversationContext(speaking_text="The tower is", other_names=("Stephanie",))
    assert decide("Stop.", elapsed=700, previous_words="Stop.", context=stephanie).stop


@pytest.mark.parametrize("words", ["So, Bartholomew, how did the exam go?", "Well Ingrid, are you coming with us?",
                                   "And Radu, did you feed the fish?", "Anyway, Odile, how was the trip?"])
def test_a_name_set_off_after_a_discourse_marker_calls_someone_else(words: str) -> None:
    # a vocative by its position: a capitalised word between commas at the start, after "so", "well", "and"...;
    # none of these names is on any list the policy reads
    verdict = decide(words, elapsed=1500, active=False, final=True)
    assert verdict.kind == OverlapKind.OTHER_ADDRESSEE and not verdict.stop, verdict.reason
    assert verdict.scores["other_named"] == 1.0


@pytest.mark.parametrize("words", ["So, Venus, what happened next?", "Well, Paris is lovely, but what about Rome?",
                                   "So, why was it built?", "No, Berlin, I asked about Berlin.",
                                   "So, Eiffel, who was he?"])
def test_a_discourse_marker_before_the_assistant_a_plain_word_or_the_topic_is_no_call_to_someone_else(
        words: str) -> None:
    # "No, Berlin, ..." corrects Venus; "Eiffel" is a word of what she is saying ("The Eiffel Tower was ..."): the
    # topic, not a person
    verdict = decide(words, elapsed=1500, active=False, final=True)
    assert verdict.stop and verdict.scores["other_named"] == 0.0, verdict.reason


def test_the_final_words_still_stop_venus_after_a_verdict_settled_on_a_partial() -> None:
    # the partials heard "Venus, that's wrong, it's in Lima." as a remark about something else; the final, which
    # decodes the whole segment, names the assistant (or opens with a stop cue): the hard overrides apply to it
    policy = OverlapPolicy()
    settled = decide("It's a pity. The garden needs rain.", elapsed=1800, active=False)
    assert settled.kind == OverlapKind.OTHER_ADDRESSEE and not settled.provisional, settled.reason

    def final(words: str) -> OverlapFeatures:
        return OverlapFeatures(elapsed_ms=2300, speech_active=False, words=words, is_final=True, **USER)
    for words in ("Venus, that's wrong, it's in Lima.", "Wait, that's wrong, it's in Lima."):
        assert policy.review(settled, final(words), SPEAKING).stop, words
    # the same words in the final, or others that claim nothing, keep Venus talking
    assert not policy.review(settled, final("It's a pity, the garden needs rain."), SPEAKING).stop
    # a call to someone whose final opens with a stop cue said to them is still theirs
    called = decide("Mike, the garden.", elapsed=1500, active=False)
    assert called.kind == OverlapKind.OTHER_ADDRESSEE and not called.provisional, called.reason
    assert not policy.review(called, final("Mike, wait for me."), SPEAKING).stop
    assert policy.review(called, final("Wait, what did you say?"), SPEAKING).stop
    # a backchannel settled before the final is stopped only by the assistant's name in it, not by a stop cue
    # ("Oh, sorry." is a listener's remark)
    nod = decide("Uh-huh.", elapsed=700, active=False)
    assert nod.kind == OverlapKind.BACKCHANNEL and not nod.provisional, nod.reason
    assert policy.review(nod, final("Uh-huh, Venus, hang on."), SPEAKING).stop
    assert not policy.review(nod, final("Oh, sorry."), SPEAKING).stop


@pytest.mark.parametrize("words", ["So I see.", "Well, got it.", "Huh, makes sense."])
def test_a_short_final_made_mostly_of_a_listeners_phrase_keeps_venus_talking(words: str) -> None:
    verdict = decide(words, elapsed=1100, active=False, final=True, duration_ms=700, word_confidence=0.95)
    assert verdict.kind == OverlapKind.BACKCHANNEL and not verdict.stop, verdict.reason
    # the same length with a question, or whisper's soundalike of a backchannel heard clearly, still claims it
    assert decide("So I see?", elapsed=1100, active=False, final=True, duration_ms=700).stop
    assert decide("and then them.", elapsed=1100, active=False, final=True, duration_ms=700,
                  word_confidence=0.95).stop


def test_a_bare_you_in_two_words_is_no_request_but_a_question_opener_is() -> None:
    assert decide("you at.", elapsed=600, active=False, duration_ms=500).scores["request"] == 0.0
    assert not decide("you at.", elapsed=600, active=False, duration_ms=500).stop
    for words in ("Are you?", "Can you?", "Tell me"):
        assert decide(words, elapsed=600, active=False, duration_ms=500).scores["request"] == 1.0, words
    assert decide("you said Paris", elapsed=900, active=False, duration_ms=800).scores["request"] == 1.0


def test_a_stop_read_from_a_closed_segments_partial_waits_for_its_final_unless_a_cue_or_the_name_made_it() -> None:
    # the last partial of a closed segment garbled the name ("So, nice on."): a pause, which the final revises
    policy = OverlapPolicy()
    early = decide("So, nice on. How was your trip?", elapsed=1500, active=False)
    assert early.stop and early.provisional, early.reason
    final = OverlapFeatures(elapsed_ms=1900, speech_active=False, words="So, Odile, how was your trip?",
                            is_final=True, **USER)
    later = policy.review(early, final, SPEAKING)
    assert later.kind == OverlapKind.OTHER_ADDRESSEE and not later.stop, later.reason
    # the final that agrees makes the stop
    agreed = dataclasses.replace(final, words="So how was your trip?")
    assert policy.review(early, agreed, SPEAKING).stop
    # a stop cue or the assistant's name in a closed segment stops at once: their final is often empty
    for words in ("Stop.", "Venus."):
        verdict = decide(words, elapsed=700, active=False)
        assert verdict.stop and not verdict.provisional, (words, verdict.reason)


@pytest.fixture(scope="module")
def tool_request():
    from engine.intents import IntentMatcher

    matcher = IntentMatcher.load()

    def parses(text: str) -> bool:
        match = matcher.match(text)
        return match is not None and bool(match.tool)

    return parses


def test_a_request_for_one_of_venus_tools_over_her_voice_is_for_her(tool_request) -> None:
    # Found by voice: "convert 5 miles to kilometers" over her answer was taken for "a remark that neither asks Venus
    # anything nor follows its topic", and "What is the capital of France?" after it for more of that side talk.
    words = "convert 5 miles to kilometers"
    assert decide(words, elapsed=2300, active=False, final=True).kind == OverlapKind.OTHER_ADDRESSEE  # without
    with_intents = dataclasses.replace(SPEAKING, tool_request=tool_request)
    verdict = decide(words, elapsed=2300, active=False, final=True, context=with_intents)
    assert verdict.kind == OverlapKind.INTERRUPTION and verdict.stop, verdict.reason
    side_talk = dataclasses.replace(with_intents, side_conversation=True)
    assert decide("set a timer for ten minutes", elapsed=1500, active=False, final=True,
                  context=side_talk).kind == OverlapKind.INTERRUPTION
    # a call by name still says who is asked
    assert decide("Tom, set a timer for ten minutes", elapsed=1500, active=False, final=True,
                  context=with_intents).kind == OverlapKind.OTHER_ADDRESSEE


def test_no_remark_to_someone_else_in_the_benchmark_pools_reads_as_a_tool_request(tool_request) -> None:
    # the cue must not take talk to others, background speech or backchannels for a request: every split's pools
    from bench.duplex import pools

    for category in ("other_addressed", "background", "backchannels"):
        for split in ("train", "dev", "test"):
            said = [part for item in pools.pool(category, split)  # (the user's line, the other's reply)
                    for part in ((item,) if isinstance(item, str) else item) if isinstance(part, str)]
            assert said and not [s for s in said if tool_request(s)], (category, split)
