"""The overlap tracker on its own: speech over Venus, fed as the pipeline reports it, and the steps it returns."""

from __future__ import annotations

from engine.runtime.options import RuntimeOptions
from engine.runtime.overlap import ConversationContext, OverlapPolicy
from engine.runtime.overlap_tracker import OverlapAction, OverlapStep, OverlapTracker
from engine.timeline import OverlapKind
from engine.timeline import events as ev

SCENE = ConversationContext(assistant_name="Venus", speaking_text="Paris is mild today, with light rain later on.")
ONSET = 10_000


def actions(steps: list[OverlapStep]) -> list[OverlapAction]:
    return [step.action for step in steps]


def recorded(steps: list[OverlapStep]) -> list[OverlapKind]:
    return [step.decision.verdict for step in steps if step.decision is not None]


def partial(tracker: OverlapTracker, text: str) -> None:
    assert tracker.hear_partial(ev.AsrPartial(text=text, segment_start_ms=ONSET))


def final(tracker: OverlapTracker, text: str) -> None:
    assert tracker.hear_final(ev.AsrFinal(text=text, segment_start_ms=ONSET))


def started() -> OverlapTracker:
    tracker = OverlapTracker(OverlapPolicy())
    assert tracker.begin(ONSET, "turn-1")
    return tracker


def test_speech_without_words_pauses_at_the_deadline_and_a_stop_cue_stops_once_the_segment_closes() -> None:
    tracker = started()
    assert tracker.judge(ONSET + 100, SCENE, final=False) == []  # before the deadline: ducked, undecided
    assert tracker.judging
    steps = tracker.judge(ONSET + 350, SCENE, final=False)
    assert actions(steps) == [OverlapAction.RECORD, OverlapAction.PAUSE]
    assert recorded(steps) == [OverlapKind.INTERRUPTION] and steps[0].decision.segment_start_ms == ONSET
    assert tracker.current is not None and tracker.current.held
    partial(tracker, "Hold on, wait a second")
    assert tracker.judge(ONSET + 900, SCENE, final=False) == []  # still talking: the pause holds
    assert tracker.end_segment(ONSET, ONSET + 1200) is tracker.current
    steps = tracker.judge(ONSET + 1250, SCENE, final=False)
    assert actions(steps) == [OverlapAction.STOP] and "stop cue" in steps[0].reason
    assert tracker.current.stopped and not tracker.current.held and not tracker.judging
    final(tracker, "Hold on, wait a second.")
    assert actions(tracker.judge(ONSET + 1600, SCENE, final=True)) == [OverlapAction.TAKE_FINAL]
    assert tracker.current is None


def test_a_paused_answer_goes_on_when_the_words_are_only_a_backchannel() -> None:
    tracker = started()
    assert actions(tracker.judge(ONSET + 350, SCENE, final=False)) == [OverlapAction.RECORD, OverlapAction.PAUSE]
    partial(tracker, "Oh, wow.")
    steps = tracker.judge(ONSET + 500, SCENE, final=False)
    assert actions(steps) == [OverlapAction.RECORD, OverlapAction.KEEP]
    assert recorded(steps) == [OverlapKind.BACKCHANNEL] and "resume the paused answer" in steps[0].reason
    assert not tracker.current.held


def test_a_short_backchannel_keeps_venus_talking_without_a_pause() -> None:
    tracker = started()
    partial(tracker, "Mm-hmm.")
    assert tracker.judge(ONSET + 200, SCENE, final=False) == []  # more may follow
    tracker.end_segment(ONSET, ONSET + 500)
    steps = tracker.judge(ONSET + 520, SCENE, final=False)
    assert actions(steps) == [OverlapAction.RECORD, OverlapAction.KEEP]
    assert recorded(steps) == [OverlapKind.BACKCHANNEL]
    final(tracker, "Mm-hmm.")
    assert tracker.judge(ONSET + 800, SCENE, final=True) == []  # the final agrees: nothing changes
    assert tracker.current is None


def test_quiet_speech_is_background_counting_the_level_blocks_heard_before_the_vad_reported_it() -> None:
    tracker = OverlapTracker(OverlapPolicy())
    for i in range(30):  # the user's own speech calibrates the level
        tracker.hear_level(ONSET - 3000 + 10 * i, -20.0, user_speaking=True)
    for t in (ONSET - 100, ONSET - 50):  # before the onset: not the overlap's
        tracker.hear_level(t, -5.0, user_speaking=False)
    for i in range(10):  # a TV across the room, 20 dB down, which the VAD reports only 450 ms after its onset
        tracker.hear_level(ONSET + 5 + 45 * i, -40.0, user_speaking=False)
    assert tracker.begin(ONSET, "turn-1")
    assert tracker.current.levels == [-40.0] * 10
    steps = tracker.judge(ONSET + 400, SCENE, final=False)
    assert recorded(steps) == [OverlapKind.BACKGROUND] and actions(steps)[-1] == OverlapAction.KEEP
    assert "below the user's level" in steps[0].reason


def test_a_burst_that_did_not_stop_venus_is_superseded_by_the_next_and_its_final_settles_nothing() -> None:
    tracker = started()
    partial(tracker, "Mm-hmm.")
    tracker.end_segment(ONSET, ONSET + 400)
    assert actions(tracker.judge(ONSET + 420, SCENE, final=False)) == [OverlapAction.RECORD, OverlapAction.KEEP]
    assert tracker.begin(ONSET + 2000, "turn-1")  # a new burst: judged on its own
    assert not tracker.begin(ONSET + 2100, "turn-1")  # the same burst reported again opens nothing
    assert tracker.current.onset_ms == ONSET + 2000 and tracker.superseded(ONSET)
    assert not tracker.hear_final(ev.AsrFinal(text="Mm-hmm.", segment_start_ms=ONSET))
    assert tracker.drop_superseded(ONSET) and not tracker.drop_superseded(ONSET)


def test_speech_right_after_someone_was_called_is_taken_for_more_of_the_same() -> None:
    tracker = started()
    partial(tracker, "Tom, can you take the trash out?")
    tracker.end_segment(ONSET, ONSET + 1500)
    steps = tracker.judge(ONSET + 1520, SCENE, final=False)
    assert recorded(steps) == [OverlapKind.OTHER_ADDRESSEE] and actions(steps)[-1] == OverlapAction.KEEP
    final(tracker, "Tom, can you take the trash out?")
    tracker.judge(ONSET + 1800, SCENE, final=True)
    # the next burst, before any words, follows the side conversation instead of pausing Venus
    assert tracker.begin(ONSET + 2500, "turn-1")
    steps = tracker.judge(ONSET + 2900, SCENE, final=False)
    assert recorded(steps) == [OverlapKind.OTHER_ADDRESSEE] and OverlapAction.PAUSE not in actions(steps)


def test_a_segment_that_closes_before_anything_could_be_told_is_released() -> None:
    tracker = OverlapTracker(OverlapPolicy())
    for i in range(30):  # the user's own level
        tracker.hear_level(ONSET - 3000 + 10 * i, -20.0, user_speaking=True)
    assert tracker.begin(ONSET, "turn-1")
    for i in range(5):  # too few blocks for a level, but quiet so far: the policy waits for the rest
        tracker.hear_level(ONSET + 20 + 40 * i, -45.0, user_speaking=False)
    assert tracker.judge(ONSET + 350, SCENE, final=False) == []
    final(tracker, "")  # the final came first, and it holds no words
    steps = tracker.judge(ONSET + 400, SCENE, final=True)
    assert actions(steps) == [OverlapAction.RELEASE] and recorded(steps) == []
    assert tracker.current is None


def test_a_remark_settled_on_the_partials_stops_venus_when_the_final_names_her() -> None:
    # the partials heard a remark that asks nothing ("It's a pity. The garden looks dry."): Venus goes on; the
    # final transcript of the whole segment holds her name, and she stops then
    tracker = started()
    partial(tracker, "It's a pity. The garden looks dry.")
    tracker.end_segment(ONSET, ONSET + 1800)
    steps = tracker.judge(ONSET + 1850, SCENE, final=False)
    assert actions(steps) == [OverlapAction.RECORD, OverlapAction.KEEP]
    assert recorded(steps) == [OverlapKind.OTHER_ADDRESSEE]
    final(tracker, "Venus, that's wrong, it's in Lima.")
    steps = tracker.judge(ONSET + 2300, SCENE, final=True)
    assert actions(steps) == [OverlapAction.RECORD, OverlapAction.STOP], [s.reason for s in steps]
    assert recorded(steps) == [OverlapKind.INTERRUPTION] and "final words" in steps[0].reason


def test_a_request_read_from_the_last_partial_pauses_venus_until_the_final_words() -> None:
    # the VAD closed the segment on a partial that reads as a request to Venus; the final calls someone by
    # name: the held answer goes on, nothing was cut
    tracker = started()
    partial(tracker, "So, nice on. How was your trip?")
    tracker.end_segment(ONSET, ONSET + 1500)
    steps = tracker.judge(ONSET + 1550, SCENE, final=False)
    assert actions(steps) == [OverlapAction.RECORD, OverlapAction.PAUSE], [s.reason for s in steps]
    assert tracker.current.held
    final(tracker, "So, Odile, how was your trip?")
    steps = tracker.judge(ONSET + 1900, SCENE, final=True)
    assert actions(steps) == [OverlapAction.RECORD, OverlapAction.KEEP], [s.reason for s in steps]
    assert recorded(steps) == [OverlapKind.OTHER_ADDRESSEE]


def test_the_user_going_on_after_a_pause_continues_the_held_overlap_and_its_words_decide() -> None:
    # Found in CI: "Okay, stop." fell into two VAD segments; the second began before the first's final, was
    # dropped, and "Okay." alone resumed the story.
    tracker = started()
    assert actions(tracker.judge(ONSET + 350, SCENE, final=False)) == [OverlapAction.RECORD, OverlapAction.PAUSE]
    partial(tracker, "So, can.")
    assert tracker.judge(ONSET + 500, SCENE, final=False) == []
    assert tracker.end_segment(ONSET, ONSET + 700) is tracker.current
    second = ONSET + 760
    assert tracker.begin(second, "turn-1")  # more of the same overlap, not a new one
    assert tracker.current.onset_ms == ONSET and tracker.current.segment_ms == second
    assert tracker.hear_final(ev.AsrFinal(text="Okay.", segment_start_ms=ONSET)) and not tracker.final_heard
    assert tracker.judge(ONSET + 800, SCENE, final=tracker.final_heard) == []  # "Okay." alone resumes nothing
    assert tracker.current.held and tracker.current.words == "Okay."
    assert tracker.end_segment(second, second + 480) is tracker.current
    assert tracker.judge(second + 500, SCENE, final=False) == []  # closed, its words not in yet: still held
    assert tracker.hear_partial(ev.AsrPartial(text="Stop.", segment_start_ms=second))
    steps = tracker.judge(second + 520, SCENE, final=False)
    assert actions(steps) == [OverlapAction.STOP] and "Okay. Stop." in steps[0].reason
    assert tracker.hear_final(ev.AsrFinal(text="stop.", segment_start_ms=second)) and tracker.final_heard
    assert actions(tracker.judge(second + 800, SCENE, final=True)) == [OverlapAction.TAKE_FINAL]
    assert tracker.current is None


def test_a_continued_overlap_of_backchannels_resumes_once_the_new_words_are_in() -> None:
    tracker = started()
    tracker.judge(ONSET + 350, SCENE, final=False)
    tracker.end_segment(ONSET, ONSET + 600)
    assert tracker.begin(ONSET + 700, "turn-1")
    assert tracker.hear_final(ev.AsrFinal(text="Yeah.", segment_start_ms=ONSET))
    assert tracker.judge(ONSET + 750, SCENE, final=False) == []
    assert tracker.hear_partial(ev.AsrPartial(text="Uh-huh.", segment_start_ms=ONSET + 700))
    steps = tracker.judge(ONSET + 1000, SCENE, final=False)
    assert OverlapAction.KEEP in actions(steps) and recorded(steps) == [OverlapKind.BACKCHANNEL]



def test_a_segment_closing_on_a_garbled_word_waits_briefly_for_its_final_before_resuming() -> None:
    # "Wait," over Venus, heard as "We" in the one partial before the segment closed: the final decodes it
    options = RuntimeOptions(short_words_final_wait_ms=250)
    tracker = OverlapTracker(OverlapPolicy(), options)
    assert tracker.begin(ONSET, "turn-1")
    tracker.judge(ONSET + 350, SCENE, final=False)
    partial(tracker, "We")
    assert tracker.judge(ONSET + 500, SCENE, final=False) == []
    tracker.end_segment(ONSET, ONSET + 620)
    assert tracker.judge(ONSET + 700, SCENE, final=False) == [] and tracker.current.held
    assert tracker.judge(ONSET + 800, SCENE, final=False) == [] and tracker.current.held
    final(tracker, "wait.")
    assert actions(tracker.judge(ONSET + 850, SCENE, final=True)) == [OverlapAction.STOP]

    # the final is late: the wait is bounded, and the answer goes on after it
    late = OverlapTracker(OverlapPolicy(), options)
    assert late.begin(ONSET, "turn-1")
    late.judge(ONSET + 350, SCENE, final=False)
    assert late.hear_partial(ev.AsrPartial(text="We", segment_start_ms=ONSET))
    late.end_segment(ONSET, ONSET + 620)
    assert late.judge(ONSET + 700, SCENE, final=False) == []
    assert late.judge(ONSET + 900, SCENE, final=False) == []
    assert OverlapAction.KEEP in actions(late.judge(ONSET + 960, SCENE, final=False))

    # words that are all backchannel resume at once, as before
    nod = started()
    nod.judge(ONSET + 350, SCENE, final=False)
    partial(nod, "Yeah.")
    nod.end_segment(ONSET, ONSET + 500)
    assert OverlapAction.KEEP in actions(nod.judge(ONSET + 520, SCENE, final=False))


def test_each_segment_of_a_continued_overlap_gets_its_own_wait_for_its_final() -> None:
    tracker = OverlapTracker(OverlapPolicy(), RuntimeOptions(short_words_final_wait_ms=250))
    assert tracker.begin(ONSET, "turn-1")
    tracker.judge(ONSET + 300, SCENE, final=False)
    tracker.end_segment(ONSET, ONSET + 400)  # closed before any partial
    assert tracker.judge(ONSET + 420, SCENE, final=False) == []  # waiting for the first segment's final
    assert tracker.current.final_wait_from >= 0
    assert tracker.begin(ONSET + 450, "turn-1")  # the user goes on before it comes
    assert tracker.hear_partial(ev.AsrPartial(text="We", segment_start_ms=ONSET + 450))
    tracker.end_segment(ONSET + 450, ONSET + 700)
    # 290 ms after the first wait began, the second segment's final is still awaited
    assert tracker.judge(ONSET + 710, SCENE, final=False) == [] and tracker.current.held
    assert OverlapAction.KEEP in actions(tracker.judge(ONSET + 970, SCENE, final=False))  # bounded, as before
