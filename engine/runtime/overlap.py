"""Overlap policy: speech heard while Venus speaks is an interruption, a backchannel, speech to someone else,
background speech or echo of Venus's own voice.

The runtime ducks at once and calls `OverlapPolicy.decide` repeatedly as audio and partial transcripts
arrive. It answers *undecided* (keep ducked) until the cues are clear or the deadline (300 ms from onset) is
reached; at the deadline it must commit. A verdict reached without any words is *provisional*: the runtime
pauses playback instead of discarding it, and `review` re-judges the segment once words arrive, so a false
interruption resumes the unfinished answer. The cues it weighs (words, lexicons, names) are read in
engine.runtime.cues.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine.runtime import _addressee_weights
from engine.runtime.cues import (
    GIVEN_NAMES,
    OTHER_VOCATIVES,
    addressee_cues,
    asks_with_question_word,
    backchannel_score,
    cue_words,
    opens_with_stop,
    overlap_scores,
)
from engine.timeline.events import OverlapDecision, OverlapKind

# GIVEN_NAMES, OTHER_VOCATIVES and backchannel_score live in engine.runtime.cues and are re-exported here
__all__ = [
    "GIVEN_NAMES", "OTHER_VOCATIVES", "ConversationContext", "OverlapFeatures", "OverlapOptions", "OverlapPolicy",
    "OverlapVerdict", "backchannel_score",
]


@dataclass(frozen=True)
class OverlapOptions:
    """Thresholds of the overlap policy."""

    deadline_ms: int = 300  # the policy commits to a verdict by this time after speech onset
    sensitivity: float = 0.5  # settings.conversation.duplex_sensitivity: higher yields sooner
    same_speaker_threshold: float = 0.2  # speaker similarity below this is someone other than the user
    user_voice_threshold: float = 0.7  # at or above this the voice is the enrolled user's (overrides "quiet")
    min_speaker_ms: int = 1000  # similarity from less speech than this is too noisy to act on
    # speech whose loud part is this far below the loud part of the user's own speech is background; measured
    # on the benchmark's inputs (seed 31, 80 overlaps, first 250-800 ms): the user's own speech -4.8..+3.3 dB,
    # background speech and TV -23.4..-13.3 dB
    background_level_db: float = -10.0
    plausible_level_db: float = -40.0  # a level below this for speech the VAD heard is a measuring error
    #   (e.g. one quiet block between syllables, or a level taken after echo suppression): it is ignored
    backchannel_max_ms: int = 1200  # a backchannel is shorter than this
    short_remark_ms: int = 800  # a closed segment this short with <= 3 words and no question is a backchannel
    interruption_min_words: int = 3  # this many non-backchannel words from the user claim the floor
    echo_word_overlap: float = 0.8  # share of heard words found in Venus's current sentence that means echo
    # A closed burst under backchannel_max_ms of at most 3 words that asks nothing, which whisper transcribed
    # with less mean word confidence than this, is a sound it could not make out ("mm-hmm" -> "and then
    # them."), not words that claim the floor. Sure short turns ("Sorry, can you...") score 0.9 and more.
    unsure_words_confidence: float = 0.75
    # the user's own speech this soon after Venus began answering goes on with the user's turn (Venus took a
    # mid-sentence pause for its end: "I'd like to book a table for ... four people tonight")
    continuation_ms: int = 1200
    # speech with no words yet whose level so far (early_loudness_db) is this far below background_level_db may
    # keep Venus talking up to level_wait_ms past the deadline while its level settles, instead of pausing her
    # on nothing: the VAD reports quiet speech (TV across the room) late, 300-450 ms after its onset
    early_quiet_margin_db: float = 6.0
    level_wait_ms: int = 300
    # speech judged background for its level alone, at most this far below background_level_db, whose final
    # words call someone by name ("Kids." at -10.3 dB) is the user turned away from the mic, talking to them
    named_quiet_margin_db: float = 3.0
    # the cues read from English words (backchannels, stop cues, requests, vocatives and names, addressee cues);
    # off for a conversation in another language: then only the assistant's and the household's names, echo,
    # the number of words, a question mark, loudness, the voice and the camera count
    english_words: bool = True
    # final words the word rules would stop Venus for, which the chat LLM reads as said to the room by more than
    # this (nats a token; ConversationContext.addressee_score), do not stop her; chosen on the train and dev splits' text
    addressee_threshold: float = _addressee_weights.THRESHOLD

    def __post_init__(self) -> None:
        if not 50 <= self.deadline_ms <= 2000:
            raise ValueError(f"deadline_ms must be 50-2000, got {self.deadline_ms}")
        if not 0.0 <= self.sensitivity <= 1.0:
            raise ValueError(f"sensitivity must be within 0..1, got {self.sensitivity}")
        if not 0.0 < self.same_speaker_threshold < self.user_voice_threshold <= 1.0:
            raise ValueError(f"need 0 < same_speaker_threshold < user_voice_threshold <= 1, got "
                             f"{self.same_speaker_threshold}, {self.user_voice_threshold}")
        if not 0.0 < self.same_speaker_threshold < 1.0:
            raise ValueError(f"same_speaker_threshold must be within (0, 1), got {self.same_speaker_threshold}")
        if self.background_level_db >= 0:
            raise ValueError(f"background_level_db must be negative, got {self.background_level_db}")
        if self.plausible_level_db >= self.background_level_db:
            raise ValueError(f"plausible_level_db ({self.plausible_level_db}) must be below background_level_db "
                             f"({self.background_level_db})")
        if self.min_speaker_ms < 0:
            raise ValueError(f"min_speaker_ms must be >= 0, got {self.min_speaker_ms}")
        if self.backchannel_max_ms < 200:
            raise ValueError(f"backchannel_max_ms must be >= 200, got {self.backchannel_max_ms}")
        if not 100 <= self.short_remark_ms <= self.backchannel_max_ms:
            raise ValueError(f"short_remark_ms must be 100..backchannel_max_ms, got {self.short_remark_ms}")
        if not 0.0 <= self.unsure_words_confidence <= 1.0:
            raise ValueError(f"unsure_words_confidence must be within 0..1, got {self.unsure_words_confidence}")
        if self.interruption_min_words < 1:
            raise ValueError(f"interruption_min_words must be >= 1, got {self.interruption_min_words}")
        if not 0.0 < self.echo_word_overlap <= 1.0:
            raise ValueError(f"echo_word_overlap must be within (0, 1], got {self.echo_word_overlap}")
        if self.named_quiet_margin_db < 0:
            raise ValueError(f"named_quiet_margin_db must be >= 0, got {self.named_quiet_margin_db}")
        if self.early_quiet_margin_db < 0 or self.level_wait_ms < 0:
            raise ValueError(f"early_quiet_margin_db and level_wait_ms must be >= 0, got "
                             f"{self.early_quiet_margin_db}, {self.level_wait_ms}")


@dataclass(frozen=True)
class OverlapFeatures:
    """What is known about one overlapping speech segment so far."""

    elapsed_ms: int  # since the segment's speech onset
    speech_active: bool = True  # the VAD still hears speech
    words: str = ""  # partial (or final) transcript of the segment
    is_final: bool = False  # `words` is the final transcript of the closed segment
    loudness_db: float | None = None  # segment level minus the user's calibrated level, in dB
    early_loudness_db: float | None = None  # the same from fewer blocks than loudness_db needs (a hint only)
    speaker_similarity: float | None = None  # to the enrolled user's voice, 0..1
    facing_screen: bool | None = None  # from the camera, when it is on
    echo_likelihood: float | None = None  # from the echo canceller, 0..1: the mic hears Venus's own output
    duration_ms: int | None = None  # how long the segment's speech lasted, once it closed
    word_confidence: float | None = None  # whisper's mean word probability, with the final transcript
    previous_words: str = ""  # the partial transcript before `words`, of the same segment

    def __post_init__(self) -> None:
        if self.elapsed_ms < 0:
            raise ValueError(f"elapsed_ms must be >= 0, got {self.elapsed_ms}")
        for name in ("speaker_similarity", "echo_likelihood", "word_confidence"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be within 0..1, got {value}")


@dataclass(frozen=True)
class ConversationContext:
    """The conversation so far, as far as the overlap policy cares."""

    assistant_name: str = "Venus"  # settings.conversation.assistant_name
    speaking_text: str = ""  # the sentence Venus is speaking now (echo and question checks)
    other_names: tuple[str, ...] = ()  # people the user mentioned earlier ("my wife Anna")
    user_name: str = ""  # settings.conversation.user_name
    side_conversation: bool = False  # the previous overlap, moments ago, was the user talking to someone else
    topic_text: str = ""  # the user's last request to Venus: words that follow its topic are aimed at Venus
    # the previous overlap, which ended moments ago, was judged this kind (one that did not claim the floor):
    # a burst right after it, before any words, is most likely more of the same ("John," then "can you...")
    follows: OverlapKind | None = None
    # how long Venus's answer had been playing when the overlap began (None: unknown); speech a moment after
    # Venus started is the user going on with a turn Venus thought was over
    answer_age_ms: int | None = None
    # whether words are a request the local intents parse for one of Venus's tools ("convert 5 miles to
    # kilometers", "set a timer for ten minutes"): the grammar of what she is asked to do (None: not known)
    tool_request: Callable[[str], bool] | None = None
    # the chat LLM's reading of who final words are said to (engine.runtime.addressee_probe): nats a token by
    # which it prefers them as the user's next message to Venus over words said at home (None: not known)
    addressee_score: Callable[[str], float | None] | None = None


_NAME_SCORES = ("assistant_named", "other_named", "lone_name", "repeated_word")  # the scores that are names


@dataclass(frozen=True)
class OverlapVerdict:
    """The policy's answer: a kind (None while undecided), why, and the scores behind it."""

    kind: OverlapKind | None
    reason: str
    scores: dict[str, float] = field(default_factory=dict)
    provisional: bool = False  # decided at the deadline without words: pause, do not discard; `review` later
    elapsed_ms: int = 0

    @property
    def named(self) -> bool:
        """True when the verdict rests on a name: the assistant's, or someone else's called out."""
        return any(self.scores.get(key) for key in _NAME_SCORES)

    @property
    def decided(self) -> bool:
        """True once the policy committed to a kind."""
        return self.kind is not None

    @property
    def stop(self) -> bool:
        """True when Venus should stop (or, if provisional, pause) speaking."""
        return self.kind == OverlapKind.INTERRUPTION

    def to_event(self) -> OverlapDecision:
        """The timeline event recording this decision; an undecided verdict has no event."""
        if self.kind is None:
            raise ValueError("an undecided verdict is not a decision; keep calling decide() until it decides")
        reason = f"provisional: {self.reason}" if self.provisional else self.reason
        return OverlapDecision(verdict=self.kind, reason=reason, scores=dict(self.scores),
                               latency_ms=self.elapsed_ms)


class OverlapPolicy:
    """Decides what overlapping speech is; pure and cheap, so the runtime may call it on every audio block."""

    def __init__(self, options: OverlapOptions | None = None) -> None:
        self.options = options or OverlapOptions()

    def decide(self, features: OverlapFeatures, context: ConversationContext | None = None) -> OverlapVerdict:
        """The verdict so far: undecided (kind None) until the cues are clear or the deadline passes."""
        context = context or ConversationContext()
        o, f = self.options, features
        s = overlap_scores(f, context, self.options)
        at_deadline = f.elapsed_ms >= o.deadline_ms or not f.speech_active or f.is_final

        def verdict(kind: OverlapKind | None, reason: str, provisional: bool = False) -> OverlapVerdict:
            # while the user still speaks a stop is a pause: whisper's partials garble and invent words
            # ("And uh, wait."), so the final words confirm it or resume the answer. So is a stop read from the
            # words of a partial once the segment closed (the final decodes the whole segment better: "So, nice
            # on. How was your date?" is "So, Nashon, how was your date?"), unless a stop cue or the assistant's
            # name made it: their final is often empty ("Venus," alone)
            hard = s["stop_cue"] or s["assistant_named"]
            provisional |= kind == OverlapKind.INTERRUPTION and not f.is_final and (f.speech_active or not hard)
            return OverlapVerdict(kind, reason, s, provisional, f.elapsed_ms)

        if s["echo"] >= o.echo_word_overlap:
            return verdict(OverlapKind.ECHO, f"the mic hears Venus's own words (echo {s['echo']:.2f})")
        if s["assistant_named"]:
            said = "said" if context.assistant_name.lower() in cue_words(f.words) else f"began ({f.words!r})"
            return verdict(OverlapKind.INTERRUPTION, f"the user {said} the assistant's name ({context.assistant_name})")
        # the voice cue is weak (see speaker.py): it does not outvote a stop cue or a request at user level
        other_voice = (f.speaker_similarity is not None and f.speaker_similarity < o.same_speaker_threshold
                       and f.elapsed_ms >= o.min_speaker_ms)
        # ...except while the user talks with someone in the room: then another voice is that person
        # answering the user ("Okay, sorry!" from the kids), not a guest stopping Venus
        side_talk = context.side_conversation or context.follows == OverlapKind.OTHER_ADDRESSEE
        not_user = other_voice and (side_talk or not (s["stop_cue"] or s["request"]))
        quiet = f.loudness_db is not None and o.plausible_level_db <= f.loudness_db < o.background_level_db
        if quiet and not not_user and s["words"] and f.speaker_similarity is not None \
                and f.speaker_similarity >= o.user_voice_threshold and (s["stop_cue"] or s["request"]):
            quiet = False  # the user's own voice asking or stopping, only measured quiet (a soft first word)
        if quiet and self._claims_despite_level(f, s):
            quiet = False
        if not_user or quiet:
            why = f"{f.loudness_db:.0f} dB below the user's level" if not not_user else \
                "the person the user is talking to answers" if side_talk else "a voice unlike the enrolled user's"
            # quiet alone is judged before any words: the words and the voice may still show it is the user
            return verdict(OverlapKind.BACKGROUND, f"background speech: {why}",
                           provisional=quiet and not not_user and f.speech_active and not f.is_final)
        if s["words"] > 0:
            return self._decide_from_words(f, s, context, at_deadline, verdict)
        return self._decide_from_acoustics(f, s, context, at_deadline, verdict)

    def _decide_from_words(self, f, s, context, at_deadline, verdict) -> OverlapVerdict:
        o = self.options
        still_talking = f.speech_active and not f.is_final
        if s["stop_cue"]:
            return verdict(OverlapKind.INTERRUPTION, f"a stop cue in {f.words!r}")
        if s["other_named"]:
            return verdict(OverlapKind.OTHER_ADDRESSEE, f"addressed to someone else by name in {f.words!r}")
        if s["lone_name"]:  # the words that follow the name confirm or revise it
            return verdict(OverlapKind.OTHER_ADDRESSEE, f"a name called out: {f.words!r}", provisional=True)
        if s["repeated_word"]:
            return verdict(OverlapKind.OTHER_ADDRESSEE, f"the same lone word in two partials, no cue or request: "
                           f"most likely a name whisper does not know ({f.words!r})", provisional=True)
        if s["tool_request"]:
            # a request for one of her tools is aimed at her, in a side conversation too: an imperative alone
            # does not say who is asked ("Turn the oven off"), these say it is Venus ("Convert 5 miles to
            # kilometers" was taken for talk to someone else, and the question after it with it)
            return verdict(OverlapKind.INTERRUPTION, f"a request for one of Venus's tools: {f.words!r}")
        if context.side_conversation:
            return verdict(OverlapKind.OTHER_ADDRESSEE, f"the side conversation goes on: {f.words!r}")
        if context.follows == OverlapKind.OTHER_ADDRESSEE:
            # "Tom." (its own segment), then "Turn the oven off.": what follows a call to someone moments ago is
            # said to them, even a request, unless it stops Venus or names her (both checked above)
            return verdict(OverlapKind.OTHER_ADDRESSEE, f"moments after the user called someone: {f.words!r}")
        if s["backchannel"] >= 0.99 and s["words"] <= 3:
            if s["asked_question"]:
                return verdict(OverlapKind.INTERRUPTION, f"{f.words!r} answers the question Venus asked")
            if at_deadline or f.elapsed_ms >= o.backchannel_max_ms:
                # still talking: keep going, but review once the segment closes (more words may follow)
                return verdict(OverlapKind.BACKCHANNEL, f"only backchannel words: {f.words!r}",
                               provisional=f.speech_active and not f.is_final)
            return verdict(None, f"backchannel words so far ({f.words!r}); waiting to see if more follows")
        closed = f.is_final or not f.speech_active
        asks = s["request"] or f.words.rstrip().endswith("?") \
            or (o.english_words and asks_with_question_word(f.words))
        if closed and f.elapsed_ms < o.backchannel_max_ms and s["words"] <= 2 and not s["request"]:
            # before the final, the words are a partial's ("We" for "Wait,"): the final confirms or revises it
            return verdict(OverlapKind.BACKCHANNEL, f"a short remark that does not claim the floor: {f.words!r}",
                           provisional=not f.is_final)
        duration = f.duration_ms if f.duration_ms is not None else f.elapsed_ms
        if closed and not f.is_final and duration < o.backchannel_max_ms and s["words"] <= 3 \
                and s["backchannel"] >= 0.6 and not asks:  # the final's word confidence confirms or revises it
            return verdict(OverlapKind.BACKCHANNEL, f"a short sound mostly made of backchannel words ({duration} ms): "
                           f"{f.words!r}", provisional=True)
        if f.is_final and duration < o.backchannel_max_ms and s["words"] <= 3 and s["backchannel_words"] >= 0.6 \
                and not asks:  # heard in full: a listener's phrase with a word around it ("So I see.")
            return verdict(OverlapKind.BACKCHANNEL, f"a short remark made mostly of backchannel words ({duration} ms): "
                           f"{f.words!r}")
        if closed and f.elapsed_ms < o.short_remark_ms and s["words"] <= 3 and not asks:
            return verdict(OverlapKind.BACKCHANNEL, f"a brief sound ({f.elapsed_ms} ms) that asks nothing: {f.words!r}",
                           provisional=not f.is_final)
        if closed and duration < o.backchannel_max_ms and s["words"] <= 3 and not asks \
                and f.word_confidence is not None and f.word_confidence < o.unsure_words_confidence:
            return verdict(OverlapKind.BACKCHANNEL, f"a short sound whisper could not make out ({duration} ms, "
                           f"word confidence {f.word_confidence:.2f}): {f.words!r}")
        # (a segment that opened before Venus's voice began, answer age below 0, is the clearest case of all:
        # "Tell me the news about" [pause; Venus starts as the user goes on] "the football game")
        if context.answer_age_ms is not None and context.answer_age_ms < o.continuation_ms \
                and s["words"] * (1.0 - s["backchannel"]) >= 1 and f.facing_screen is not False:
            age = context.answer_age_ms
            when = f"Venus had begun {age} ms before" if age >= 0 else f"it began {-age} ms before Venus's voice"
            return verdict(OverlapKind.INTERRUPTION, f"the user goes on with their turn ({when}): {f.words!r}")
        if f.facing_screen is False and not s["request"]:
            return verdict(OverlapKind.OTHER_ADDRESSEE, "the user looks away from the screen")
        cues = addressee_cues(f.words, context.speaking_text, context.topic_text) if o.english_words else None
        if cues is not None and cues.other_wins:
            return verdict(OverlapKind.OTHER_ADDRESSEE, f"aimed at someone in the room: {'; '.join(cues.reasons)} "
                           f"in {f.words!r}", provisional=still_talking)
        content_words = s["words"] * (1.0 - s["backchannel"])
        if s["request"] and content_words >= 1:
            if f.facing_screen is False:
                return verdict(OverlapKind.OTHER_ADDRESSEE, f"a request while looking away: {f.words!r}")
            if (room := self._said_to_room(f, s, context, verdict)) is not None:
                return room
            return verdict(OverlapKind.INTERRUPTION, f"a request to the assistant: {f.words!r}")
        if cues is not None and not asks and cues.to_assistant == 0 and content_words >= o.interruption_min_words:
            return verdict(OverlapKind.OTHER_ADDRESSEE, f"a remark that neither asks Venus anything nor follows its "
                           f"topic: {f.words!r}", provisional=still_talking)
        if content_words >= o.interruption_min_words or (f.is_final and content_words >= 1):
            if (room := self._said_to_room(f, s, context, verdict)) is not None:
                return room
            return verdict(OverlapKind.INTERRUPTION, f"the user claims the floor: {f.words!r}")
        if at_deadline:
            if o.sensitivity >= 0.5:
                return verdict(OverlapKind.INTERRUPTION, f"user speech at the deadline: {f.words!r}",
                               provisional=True)
            return verdict(OverlapKind.BACKCHANNEL, f"nothing clear by the deadline ({f.words!r}); low sensitivity "
                           "keeps talking", provisional=True)
        return verdict(None, f"too few words yet ({f.words!r})")

    def _said_to_room(self, f, s, context, verdict) -> OverlapVerdict | None:
        """Final words that the word rules alone would stop Venus for, which the chat LLM reads as said to someone
        at home: a remark to them (more than three words) or a listener's exclamation ("Oh dear."); None when
        the model reads them as said to Venus, or cannot tell."""
        if not f.is_final or context.addressee_score is None or not self.options.english_words:
            return None
        score = context.addressee_score(f.words)
        if score is None or score >= self.options.addressee_threshold:
            return None
        s["addressee_llm"] = round(score, 3)
        if s["words"] <= 3 and not s["request"]:
            return verdict(OverlapKind.BACKCHANNEL, f"a short remark the chat model reads as not said to Venus "
                           f"({score:+.2f} nats a token): {f.words!r}")
        return verdict(OverlapKind.OTHER_ADDRESSEE, f"the chat model reads it as said to someone at home "
                       f"({score:+.2f} nats a token): {f.words!r}")

    def _decide_from_acoustics(self, f, s, context, at_deadline, verdict) -> OverlapVerdict:
        o = self.options
        # how long the burst lasted, not how long ago it began (an empty final comes well after a short burst)
        lasted = f.duration_ms if f.duration_ms is not None and not f.speech_active else f.elapsed_ms
        if not f.speech_active and lasted < o.backchannel_max_ms:
            return verdict(OverlapKind.BACKCHANNEL, f"a short burst ({lasted} ms) with no words",
                           provisional=not f.is_final)
        if not at_deadline:
            return verdict(None, "no words yet; ducked while listening")
        if f.loudness_db is None and f.early_loudness_db is not None and f.speech_active \
                and f.early_loudness_db < o.background_level_db - o.early_quiet_margin_db \
                and f.elapsed_ms < o.deadline_ms + o.level_wait_ms:
            return verdict(None, f"no words yet, and quiet so far ({f.early_loudness_db:.0f} dB below the "
                           "user's level): waiting for its level")
        if f.facing_screen is False:
            return verdict(OverlapKind.OTHER_ADDRESSEE, "no words yet and the user looks away", provisional=True)
        earlier = OverlapKind.OTHER_ADDRESSEE if context.side_conversation else context.follows
        if earlier is not None and earlier != OverlapKind.INTERRUPTION:
            # the words, when they come, still stop Venus if they claim the floor
            return verdict(earlier, f"no words yet, moments after {earlier.value.replace('_', ' ')}", provisional=True)
        if o.sensitivity >= 0.5:
            return verdict(OverlapKind.INTERRUPTION, "the user's voice at the deadline, no words yet", provisional=True)
        return verdict(OverlapKind.BACKCHANNEL, "no words yet; low sensitivity keeps talking", provisional=True)

    def _claims_despite_level(self, f: OverlapFeatures, s: dict[str, float]) -> bool:
        # Speech quiet for its level only (a soft first word, a user further from the mic) that opens with a
        # stop cue or names the assistant is the user claiming the floor, unless the voice is known to be
        # someone else's.
        o, voice = self.options, f.speaker_similarity
        other_voice = voice is not None and voice < o.same_speaker_threshold and f.elapsed_ms >= o.min_speaker_ms
        return not other_voice and (opens_with_stop(f.words) or bool(s["assistant_named"]))

    def _renamed(self, earlier: OverlapVerdict, features: OverlapFeatures,
                 context: ConversationContext | None) -> OverlapVerdict:
        # A name heard in an early partial may be whisper's guess (primed with names, it heard "Hang on" as
        # "Honey on."): once the words hold no name any more and open with a stop cue, or name the assistant,
        # the user was talking to Venus after all.
        later = self.decide(features, context)
        if later.stop and not later.named and (opens_with_stop(features.words) or later.scores.get("assistant_named")):
            return OverlapVerdict(later.kind, f"revised (stop): the name was misheard: {later.reason}", later.scores,
                                  later.provisional, features.elapsed_ms)
        return earlier

    def _called_someone(self, earlier: OverlapVerdict, features: OverlapFeatures,
                        context: ConversationContext) -> OverlapVerdict:
        # Background for its level alone, only just under the line, and the final words call someone by name:
        # the user turned away from the mic to talk to a person in the room ("Kids." at -10.3 dB, then "Please
        # keep it down."). Both verdicts keep Venus talking; this one also marks the side conversation, so the
        # speech that follows it is taken for more of it. A voice known to be someone else's stays background.
        o, f = self.options, features
        voice_known = f.speaker_similarity is not None and f.elapsed_ms >= o.min_speaker_ms
        near_line = f.loudness_db is not None and f.loudness_db >= o.background_level_db - o.named_quiet_margin_db
        if (voice_known and f.speaker_similarity < o.same_speaker_threshold) or not near_line:
            return earlier
        s = overlap_scores(f, context, self.options)
        if not s["other_named"] or s["stop_cue"] or s["assistant_named"]:
            return earlier
        return OverlapVerdict(OverlapKind.OTHER_ADDRESSEE, f"revised (keep talking): {f.loudness_db:.1f} dB below the "
                              f"user's level, but the words call someone in the room: {f.words!r}", s, False,
                              f.elapsed_ms)

    def _final_claims(self, earlier: OverlapVerdict, features: OverlapFeatures,
                      context: ConversationContext | None) -> OverlapVerdict:
        # A verdict settled on a partial's words ("It's a lot of weakness." for "Venus, that's wrong") stands
        # until the final transcript, which decodes the whole segment better: if it names the assistant, or
        # (after a call to someone else) opens with a stop cue, the hard overrides apply to it too.
        later = self.decide(features, context)
        # (a stop cue only where the final calls nobody: "Mike, wait for me." is still said to Mike)
        claims = later.scores.get("assistant_named") or (earlier.kind == OverlapKind.OTHER_ADDRESSEE
                                                         and opens_with_stop(features.words) and not later.named) \
            or (later.scores.get("tool_request") and not later.named)  # "convert 5 miles to kilometers"
        if later.stop and claims:
            return OverlapVerdict(later.kind, f"revised (stop): the final words claim the floor: {later.reason}",
                                  later.scores, False, features.elapsed_ms)
        return earlier

    def review(self, earlier: OverlapVerdict, features: OverlapFeatures,
               context: ConversationContext | None = None) -> OverlapVerdict:
        """Re-judge a provisional verdict once words arrive; a changed kind means stop, or resume the answer."""
        if not earlier.provisional:
            if earlier.kind == OverlapKind.OTHER_ADDRESSEE and earlier.named and features.speech_active:
                return self._renamed(earlier, features, context)
            if earlier.kind == OverlapKind.BACKGROUND and features.is_final:
                return self._called_someone(earlier, features, context or ConversationContext())
            if earlier.kind in (OverlapKind.OTHER_ADDRESSEE, OverlapKind.BACKCHANNEL) and features.is_final:
                return self._final_claims(earlier, features, context)
            return earlier
        later = self.decide(features, context)
        if later.kind is None:
            return earlier
        voice, level = features.speaker_similarity, features.loudness_db
        # the level that made it background, measured again over more of the speech, is now clearly the user's
        loud_now = level is not None and level >= self.options.background_level_db + 3.0
        if earlier.kind == OverlapKind.BACKGROUND and later.kind != OverlapKind.BACKGROUND \
                and (voice is None or voice < self.options.user_voice_threshold) and not loud_now \
                and not (later.stop and self._claims_despite_level(features, later.scores)):
            # speech first judged background (too quiet) is the user's only if their voice or level says so
            return OverlapVerdict(OverlapKind.BACKGROUND, earlier.reason, later.scores,
                                  features.speech_active and not features.is_final, features.elapsed_ms)
        if earlier.kind == OverlapKind.OTHER_ADDRESSEE and earlier.named and later.stop \
                and not (later.scores.get("stop_cue") or later.scores.get("assistant_named")) \
                and addressee_cues(features.words, context.speaking_text if context else "",
                                   context.topic_text if context else "").to_assistant == 0:
            # after a name (perhaps only whisper's guess at one), words that neither stop Venus nor point at her
            # go on talking to that person ("And." "and." for "Anna,", then "And where did you...")
            return earlier
        if earlier.kind == later.kind == OverlapKind.OTHER_ADDRESSEE and earlier.named and not later.named:
            # the words agree it is someone else; the name heard before still stands behind the verdict
            names = {k: v for k, v in earlier.scores.items() if k in _NAME_SCORES and v}
            later = OverlapVerdict(later.kind, later.reason, {**later.scores, **names}, later.provisional,
                                   later.elapsed_ms)
        if later.kind != earlier.kind:
            action = "resume the paused answer" if earlier.stop else "stop" if later.stop else "keep talking"
            return OverlapVerdict(later.kind, f"revised ({action}): {later.reason}", later.scores,
                                  later.provisional, features.elapsed_ms)
        return later
