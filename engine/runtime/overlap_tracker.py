"""Speech over Venus's voice, followed from its onset to a settled verdict.

The tracker keeps what is known about the current overlap (its words, level blocks, voice score and final),
asks the `OverlapPolicy` for a verdict as that grows, and answers with steps for the runtime to apply in
order: record a decision, keep talking, pause, stop (yield the floor), resume after a false interruption. It
never touches the voice, the LLM or the timeline, so it can be driven and tested with plain values.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from engine.runtime.options import RuntimeOptions
from engine.runtime.overlap import ConversationContext, OverlapFeatures, OverlapPolicy, OverlapVerdict
from engine.timeline import events as ev

SIDE_CONVERSATION_MS = 6000  # after a settled "talking to someone else", speech this soon is likely more of it


class OverlapAction(StrEnum):
    """What the runtime does about an overlap."""

    RECORD = "record"  # put the step's decision on the timeline
    KEEP = "keep"  # Venus goes on: resume a paused voice and restore its volume
    PAUSE = "pause"  # pause in place while the words confirm or revise a provisional stop
    STOP = "stop"  # yield the floor: cut Venus's turn; the overlap becomes the user's turn
    TAKE_FINAL = "take-final"  # the final words of an overlap that stopped Venus: they complete the user's turn
    RELEASE = "release"  # the segment closed before any verdict: restore the voice's volume, nothing else


@dataclass
class TrackedOverlap:
    """Speech heard while Venus had the floor, being judged."""

    onset_ms: int
    turn_id: str
    words: str = ""
    previous_words: str = ""  # the partial before `words`
    final: str | None = None
    speech_active: bool = True
    ended_ms: int = -1
    verdict: OverlapVerdict | None = None
    stopped: bool = False
    held: bool = False  # Venus is paused in place while a provisional stop is checked against the words
    levels: list[float] = dataclasses.field(default_factory=list)  # mic level blocks since the onset (dBFS)
    reviewed_words: tuple[str, str] = ("", "")  # (previous, current) partial words the last review saw
    level_reviewed: bool = False  # the verdict was re-judged once the overlap's level became measurable
    resume_votes: int = 0  # partials in a row, while held, that said the speech does not claim the floor
    confidence: float | None = None  # whisper's mean word probability in the final transcript
    last_word_p: float | None = None  # and its last word's
    similarity: float | None = None  # to the enrolled user's voice (from the pipeline, 1 s of speech on)
    # The user may go on after a pause while Venus is held ("Okay, ... stop."): the next VAD segment continues
    # this overlap. `segment_ms` is the onset of the segment heard now; `earlier` holds the final words of the
    # earlier ones by onset ("" while a final is still to come).
    segment_ms: int = -1
    earlier: dict[int, str] = dataclasses.field(default_factory=dict)
    segment_words: str = ""  # the current segment's own latest partial
    final_wait_from: int = -1  # when a resume on a closed segment's few words began to wait for its final

    def __post_init__(self) -> None:
        if self.segment_ms < 0:
            self.segment_ms = self.onset_ms

    def continue_with(self, onset_ms: int) -> None:
        """The user spoke again before the overlap settled: the new segment is more of the same words."""
        self.earlier.setdefault(self.segment_ms, self.final or self.segment_words)
        self.segment_ms, self.segment_words, self.final = onset_ms, "", None
        self.speech_active, self.ended_ms = True, -1
        self.previous_words, self.words = self.words, self._joined("")
        self.resume_votes, self.final_wait_from = 0, -1  # the new segment's final gets its own wait

    def _joined(self, current: str) -> str:
        return " ".join(t for t in (*(self.earlier[k] for k in sorted(self.earlier)), current) if t.strip())


@dataclass(frozen=True)
class OverlapStep:
    """One step for the runtime: an action on the voice and the turns, or (RECORD) a decision to record."""

    action: OverlapAction
    overlap: TrackedOverlap
    reason: str = ""
    decision: ev.OverlapDecision | None = None  # set for RECORD


class OverlapTracker:
    """Follows speech over Venus from its onset to a settled verdict and says what to do about it."""

    def __init__(self, policy: OverlapPolicy, options: RuntimeOptions | None = None) -> None:
        self.policy = policy
        self.options = options or RuntimeOptions()
        self.current: TrackedOverlap | None = None
        self.facing_screen: bool | None = None  # from the camera, when it is on
        self._superseded: set[int] = set()  # onsets of ended overlaps replaced by a newer one before their final
        self._previous: tuple[ev.OverlapKind, int] | None = None  # last settled non-stop verdict, and its end
        self._side_conversation_until = -1
        # the last 2 s of level blocks with the time each was heard: the VAD reports quiet speech (TV across the
        # room) 300-400 ms after it began, and an overlap's loudness counts the blocks from its onset on
        self._recent_levels: deque[tuple[int, float]] = deque(maxlen=40)
        self._user_levels: deque[float] = deque(maxlen=200)  # the user's own speech, for calibration (dBFS)
        self._user_loud: float | None = None  # the loud part of _user_levels, kept until it grows again
        self._lock = threading.Lock()

    # ---- what is heard -------------------------------------------------------------------------------------

    def hear_level(self, now_ms: int, level_db: float, *, user_speaking: bool) -> None:
        """A mic level block (perception thread): it goes to the overlap, or calibrates the user's level."""
        with self._lock:
            self._recent_levels.append((now_ms, level_db))
            overlap = self.current
            if overlap is not None and overlap.speech_active:
                overlap.levels.append(level_db)
            elif user_speaking and overlap is None:
                self._user_levels.append(level_db)
                self._user_loud = None

    def begin(self, onset_ms: int, turn_id: str) -> bool:
        """Speech began while Venus has the floor; True when it opens a new overlap.

        An earlier burst that is over and did not stop Venus ("mm-hmm", then "wait, stop") is superseded: the new
        one is judged on its own, and the old one's final words, when they come, settle nothing.
        """
        previous = self.current
        if previous is not None and previous.held and not previous.speech_active:
            # Venus is paused on it and its words have not settled it: the user goes on ("Okay, ... stop.")
            previous.continue_with(onset_ms)
            return True
        if previous is not None and not previous.speech_active and not previous.stopped and not previous.held:
            self._superseded.add(previous.onset_ms)
            if previous.verdict is not None and not previous.verdict.stop:
                self._previous = (previous.verdict.kind, previous.ended_ms)
            previous = self.current = None
        if previous is not None:
            return False
        with self._lock:  # the blocks heard between the onset and the VAD's report count too
            heard = [db for t, db in self._recent_levels if t > onset_ms]
            self.current = TrackedOverlap(onset_ms=onset_ms, turn_id=turn_id, levels=heard)
        return True

    def hear_partial(self, event: ev.AsrPartial) -> bool:
        """True when the partial transcript is the overlap's (its words are taken)."""
        overlap = self.current
        if overlap is None or event.segment_start_ms != overlap.segment_ms:
            return False
        overlap.segment_words = event.text
        overlap.previous_words, overlap.words = overlap.words, overlap._joined(event.text)
        if event.speaker_similarity is not None:
            overlap.similarity = event.speaker_similarity
        return True

    def superseded(self, segment_start_ms: int) -> bool:
        """True for the segment of an overlap replaced by a newer one: its words settle nothing."""
        return segment_start_ms in self._superseded

    def drop_superseded(self, segment_start_ms: int) -> bool:
        """A superseded overlap's final came: forget it; True when it was one."""
        if segment_start_ms not in self._superseded:
            return False
        self._superseded.discard(segment_start_ms)
        return True

    def end_segment(self, start_ms: int, end_ms: int) -> TrackedOverlap | None:
        """The VAD closed a segment; the overlap when it was the overlap's, else None."""
        overlap = self.current
        if overlap is None or start_ms != overlap.segment_ms:
            return None
        overlap.speech_active, overlap.ended_ms = False, end_ms
        if overlap.held and not overlap.stopped:  # how long it lasted is itself a cue (a short "yeah"): re-judge
            overlap.reviewed_words = ("\0", "\0")
        return overlap

    def hear_final(self, event: ev.AsrFinal) -> bool:
        """True when the final transcript is the overlap's; `judge(final=self.final_heard)` then judges it.

        The final of an earlier segment of a continued overlap only completes its words: the overlap is settled
        by its last segment's final."""
        overlap = self.current
        if overlap is None:
            return False
        if event.segment_start_ms in overlap.earlier:
            overlap.earlier[event.segment_start_ms] = event.text.strip()
            overlap.previous_words, overlap.words = overlap.words, overlap._joined(overlap.segment_words)
            return True
        if event.segment_start_ms != overlap.segment_ms:
            return False
        overlap.final = overlap._joined(event.text.strip())
        if event.speaker_similarity is not None:
            overlap.similarity = event.speaker_similarity
        if event.words:
            overlap.confidence = sum(w.probability for w in event.words) / len(event.words)
            overlap.last_word_p = event.words[-1].probability
        return True

    @property
    def final_heard(self) -> bool:
        """The current overlap's final words are all in: the next judgement settles it."""
        return self.current is not None and self.current.final is not None

    @property
    def unsettled(self) -> bool:
        """The overlap's verdict may still change: the loop re-judges it on every tick."""
        overlap = self.current
        return overlap is not None and (overlap.verdict is None or overlap.verdict.provisional
                                        or _reviewable(overlap.verdict))

    @property
    def judging(self) -> bool:
        """Speech over Venus is being judged and has not stopped her: it should get the CPU."""
        overlap = self.current
        return overlap is not None and not overlap.stopped and (overlap.verdict is None
                                                                 or overlap.verdict.provisional)

    # ---- verdicts --------------------------------------------------------------------------------------------

    def judge(self, now_ms: int, scene: ConversationContext, *, final: bool,
              answer_started_ms: int | None = None) -> list[OverlapStep]:
        """Judge (or re-judge) the overlap with what is known now; the steps to apply, in order.

        `scene`: the conversation as the runtime knows it; the tracker adds what earlier overlaps said.
        `answer_started_ms`: when Venus's current answer began to play, when it is playing.
        """
        overlap = self.current
        if overlap is None:
            return []
        features = self._features(overlap, now_ms)
        context = self._context(overlap, now_ms, scene, answer_started_ms)
        steps: list[OverlapStep] = []
        if overlap.verdict is None:
            verdict = self.policy.decide(features, context)
            if verdict.kind is None:
                if final:  # the segment closed before the policy could tell: it was not a claim on the floor
                    self.current = None
                    steps.append(OverlapStep(OverlapAction.RELEASE, overlap, verdict.reason))
                return steps
            overlap.verdict = verdict
            steps.append(_record(verdict, overlap))
            if verdict.stop and verdict.provisional and not final:
                overlap.held = True  # pause in place until the words confirm or revise it
                steps.append(OverlapStep(OverlapAction.PAUSE, overlap, verdict.reason))
            elif verdict.stop:
                steps.append(_yield(overlap, f"overlap judged {verdict.kind}: {verdict.reason}"))
            else:
                steps.append(self._keep(overlap, verdict, now_ms))
        if self.current is not overlap:
            return steps
        if final:
            steps += self._review(overlap, features, context, now_ms, final=True)
        elif (overlap.verdict.provisional or _reviewable(overlap.verdict)) \
                and (features.words or not features.speech_active) \
                and (features.previous_words, features.words) != overlap.reviewed_words:
            # new partial words (or the same words heard again): a provisional verdict is re-judged
            overlap.reviewed_words = (features.previous_words, features.words)
            steps += self._review(overlap, features, context, now_ms, final=False)
        elif overlap.verdict.provisional and features.loudness_db is not None and not overlap.level_reviewed:
            overlap.level_reviewed = True  # the overlap's level is measured now: it may show background speech
            steps += self._review(overlap, features, context, now_ms, final=False)
        return steps

    def _features(self, overlap: TrackedOverlap, now_ms: int) -> OverlapFeatures:
        loudness = self._relative_loudness(overlap, self.options.min_overlap_level_blocks)
        early = self._relative_loudness(overlap, self.options.early_level_blocks) if loudness is None else None
        return OverlapFeatures(
            elapsed_ms=max(0, now_ms - overlap.onset_ms), speech_active=overlap.speech_active,
            words=overlap.final if overlap.final is not None else overlap.words, is_final=overlap.final is not None,
            loudness_db=loudness, early_loudness_db=early, facing_screen=self.facing_screen,
            duration_ms=overlap.ended_ms - overlap.onset_ms if overlap.ended_ms >= 0 else None,
            word_confidence=overlap.confidence, speaker_similarity=overlap.similarity,
            previous_words=overlap.previous_words if overlap.final is None else "",
        )

    def _context(self, overlap: TrackedOverlap, now_ms: int, scene: ConversationContext,
                 answer_started_ms: int | None) -> ConversationContext:
        previous = self._previous
        follows = previous[0] if previous is not None and now_ms - previous[1] <= self.options.follow_ms else None
        age = overlap.onset_ms - answer_started_ms if answer_started_ms is not None else None
        return dataclasses.replace(scene, follows=follows, answer_age_ms=age,
                                   side_conversation=now_ms < self._side_conversation_until)

    def _relative_loudness(self, overlap: TrackedOverlap, min_blocks: int) -> float | None:
        # The overlap's loud part (90th percentile of its blocks) against the loud part of the user's speech:
        # like with like. The user's median block was the reference before, but the user's segments hold
        # pauses and the VAD's padding, so background speech 14-22 dB down measured only 3-10 dB down.
        # About a second of the user calibrates; the overlap needs min_overlap_level_blocks of its own, from its
        # onset (its first blocks are the soft start of a word: the user's "Actually" measured -29 dB there)
        # the user's part is sorted once per change of it, not on each of the overlap's ticks (it does not
        # change during an overlap)
        if len(self._user_levels) < 20 or len(overlap.levels) < min_blocks:
            return None
        if self._user_loud is None:
            self._user_loud = _loud_part(self._user_levels)
        return _loud_part(overlap.levels) - self._user_loud

    def _keep(self, overlap: TrackedOverlap, verdict: OverlapVerdict, now_ms: int) -> OverlapStep:
        self._note_side_conversation(verdict, now_ms)
        return OverlapStep(OverlapAction.KEEP, overlap, verdict.reason)

    def _note_side_conversation(self, verdict: OverlapVerdict, now_ms: int) -> None:
        # A settled "talking to someone else" makes the next few seconds of speech likely more of the same;
        # a provisional one must not, or it would confirm itself when its own final words are judged.
        if verdict.kind == ev.OverlapKind.OTHER_ADDRESSEE and not verdict.provisional:
            self._side_conversation_until = now_ms + SIDE_CONVERSATION_MS

    def _review(self, overlap: TrackedOverlap, features: OverlapFeatures, context: ConversationContext,
                now_ms: int, *, final: bool) -> list[OverlapStep]:
        if final:
            self.current = None
        earlier = overlap.verdict
        assert earlier is not None
        review = self.policy.review(earlier, features, context)
        if review.kind is None:
            review = earlier
        if overlap.held and not review.stop:
            # Early partials are often garbled ("hold on" heard as "that will not."): while the user still
            # speaks, a held answer goes on only on a name or background cues, or when two partials agree.
            if overlap.earlier and not overlap.segment_words and not final:
                return []  # the user spoke again after a pause: nothing resumes before the new words are in
            overlap.resume_votes += 1
            # a name, a level/voice cue, or words that are all backchannel ("Oh, wow.") settle it at once
            settled = review.named or review.kind == ev.OverlapKind.BACKGROUND or (
                review.kind == ev.OverlapKind.BACKCHANNEL and review.scores.get("backchannel", 0) >= 0.99)
            agreed = overlap.resume_votes >= 2 and review.scores.get("words", 0) >= self.options.resume_min_words
            if not (final or not features.speech_active or settled or agreed):
                return []
            if not (final or settled or agreed) and review.scores.get("words", 0) <= 2:
                # closed on a word or two that say nothing known: the final decode, due in a moment, decides
                if overlap.final_wait_from < 0:
                    overlap.final_wait_from = now_ms
                if now_ms - overlap.final_wait_from < self.options.short_words_final_wait_ms:
                    overlap.resume_votes -= 1  # this look is not a vote
                    overlap.reviewed_words = ("\0", "\0")  # look again on the next tick
                    return []
        elif overlap.held:
            overlap.resume_votes = 0
        steps = [_record(review, overlap)] if review.kind != earlier.kind else []
        overlap.verdict = review
        if final:
            self._note_side_conversation(review, now_ms)
            if not review.stop:
                self._previous = (review.kind, overlap.ended_ms if overlap.ended_ms >= 0 else now_ms)
        if overlap.held:
            if review.stop and (final or not review.provisional):
                steps.append(_yield(overlap, f"overlap judged {review.kind}: {review.reason}"))
            elif not review.stop:
                overlap.held = False
                steps.append(self._keep(overlap, review, now_ms))  # a held answer simply goes on: nothing was lost
            return steps
        if overlap.stopped:
            # A stop is settled when it is made (before the final only on words no longer provisional), and the
            # policy keeps a settled stop: what remains is its final, even an empty one ("Venus," alone often
            # decodes to nothing). A stop the words take back is never made: the voice pauses instead (held).
            if final:
                steps.append(OverlapStep(OverlapAction.TAKE_FINAL, overlap, review.reason))
            return steps
        if review.stop and review.provisional and not final:
            overlap.held = True  # Venus went on, then the words turned: pause again until they settle
            steps.append(OverlapStep(OverlapAction.PAUSE, overlap, review.reason))
        elif review.stop:
            steps.append(_yield(overlap, f"overlap judged {review.kind} once the words were in: {review.reason}"))
        return steps


def _loud_part(levels: Iterable[float]) -> float:
    ordered = sorted(levels)
    return ordered[int(0.9 * (len(ordered) - 1))]


def _yield(overlap: TrackedOverlap, reason: str) -> OverlapStep:
    overlap.held, overlap.stopped = False, True
    return OverlapStep(OverlapAction.STOP, overlap, reason)


def _record(verdict: OverlapVerdict, overlap: TrackedOverlap) -> OverlapStep:
    decision = dataclasses.replace(verdict.to_event(), segment_start_ms=overlap.onset_ms)
    return OverlapStep(OverlapAction.RECORD, overlap, verdict.reason, decision)


def _reviewable(verdict: OverlapVerdict) -> bool:
    # a settled "talking to someone else" that rests on a name is still checked against later words: the
    # name may have been misheard (OverlapPolicy.review)
    return verdict.kind == ev.OverlapKind.OTHER_ADDRESSEE and verdict.named
