"""End of turn: VAD silence plus a semantic "is this utterance complete?" signal from the transcript.

A complete question ("what's the weather in Paris?") ends the turn after a short silence; an unfinished one
("I'd like to book a table for ...") waits much longer. The signal is the chat LLM's own reading of the words
when the backend can give it (`probe_probability` over `LlamaBackend.next_token_logprobs`, read by
engine.runtime.turn_probe; weights in `_eot_probe_weights.py`, fitted by bench/duplex/eot_probe.py); otherwise a
small logistic model over cheap lexical features with its caps (bench/duplex/train_end_of_turn.py,
`_end_of_turn_weights.py`).
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from engine.runtime import _end_of_turn_weights, _eot_probe_weights
from engine.runtime.cues import split_words

_PREPOSITIONS = frozenset("for to of with about at in on from into near by under over after before than as".split())
_DETERMINERS = frozenset("the a an my your his her their our this that these those some any every each".split())
_CONJUNCTIONS = frozenset("and but or so because if when while although then".split())
_AUXILIARIES = frozenset("is are was were be am do does did can could would should will have has had i'd i'm "
                         "i'll i've it's that's what's".split())
_SUBJECTS = frozenset("i you we he she they it there".split())
_FILLERS = frozenset("um uh er erm hmm like well".split())
_QUESTION_OPENERS = frozenset("what what's how why who where when which is are do does did can could would "
                              "should will whats".split())
_CLOSERS = frozenset("please thanks thank today tomorrow tonight now".split())

FEATURE_NAMES: tuple[str, ...] = (
    "bias", "ends_question_mark", "ends_period", "ends_exclamation", "ends_comma", "ends_ellipsis", "ends_bare",
    "last_preposition", "last_determiner", "last_conjunction", "last_auxiliary", "last_subject", "last_filler",
    "last_closer", "last_number", "last_long_word", "question_opener", "one_word", "two_words", "log_words",
)


# The LLM probe (bench/duplex/eot_probe.py): the next-token log-probabilities of these after the user's words, with
# the end-of-message closers first. They are the words that carry an unfinished phrase on (articles,
# prepositions, conjunctions, pronouns, auxiliaries) and the marks that close one; the weights are learned.
PROBE_WORDS: tuple[str, ...] = (
    "the", "a", "an", "to", "of", "and", "or", "but", "in", "on", "at", "for", "with", "from", "about", "by", "my",
    "your", "me", "you", "it", "this", "that", "is", "be", "do", "have", "what", "how", "some", "like", "up", "so",
    "please", "now", ",", "?", ".", "!",
)
_PROBE_FLOOR = -25.0  # log-probabilities below this (or a word this vocabulary splits) read as this


def probe_features(logprobs: np.ndarray | list[float], words: int) -> np.ndarray:
    """The probe's inputs: the closers' and PROBE_WORDS' log-probabilities (floored), then log(1 + words)."""
    values = np.maximum(np.asarray(logprobs, dtype=np.float64), _PROBE_FLOOR)
    return np.append(values, np.log1p(words))


def probe_probability(logprobs: np.ndarray | list[float], words: int) -> float:
    """The probe's probability that the user's message is whole, from `LlamaBackend.next_token_logprobs` over
    the closers and PROBE_WORDS after the words (bench/duplex/eot_probe.py fits it)."""
    x = (probe_features(logprobs, words) - np.asarray(_eot_probe_weights.MEAN)) / np.asarray(_eot_probe_weights.SCALE)
    return _sigmoid(_eot_probe_weights.BIAS + float(np.dot(_eot_probe_weights.WEIGHTS, x)))


_ASR_CLOSE = re.compile(r"[\s.,;:!?…\-—]+$")


def strip_asr_punctuation(text: str) -> str:
    """The words without the marks whisper closed them with (it closes fragments as readily as sentences): the
    words the LLM probe reads."""
    return _ASR_CLOSE.sub("", text.strip())


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _logit(p: float) -> float:
    p = min(1.0 - 1e-4, max(1e-4, p))
    return math.log(p / (1.0 - p))


def turn_features(text: str) -> list[float]:
    """Lexical features of a (partial) transcript, in FEATURE_NAMES order."""
    stripped = text.strip()
    words = split_words(stripped)
    last = words[-1] if words else ""
    first = words[0] if words else ""
    ellipsis = stripped.endswith(("...", "…", "-", "—"))
    tail = stripped[-1:] if stripped else ""
    return [
        1.0,
        float(tail == "?"),
        float(tail == "." and not ellipsis),
        float(tail == "!"),
        float(tail == ","),
        float(ellipsis),
        float(tail.isalnum() or tail == "'"),
        float(last in _PREPOSITIONS),
        float(last in _DETERMINERS),
        float(last in _CONJUNCTIONS),
        float(last in _AUXILIARIES),
        float(last in _SUBJECTS),
        float(last in _FILLERS),
        float(last in _CLOSERS),
        float(last.isdigit() or last in {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                          "ten", "eleven", "twelve", "people", "minutes", "hours"}),
        float(len(last) >= 4 and last not in _PREPOSITIONS | _DETERMINERS | _CONJUNCTIONS | _AUXILIARIES),
        float(first in _QUESTION_OPENERS),
        float(len(words) == 1),
        float(len(words) == 2),
        math.log1p(len(words)),
    ]


_DANGLING_IT = re.compile(r"\b(for|to|of|with|about|at|in|on|from|by)\s+it\s*[.!]?\s*$", re.IGNORECASE)
# Verbs that want an object: a turn that ends on one ("remind me to call") is usually cut off, unless it asks
# for that object ("who should I call?").
_OBJECT_VERBS = frozenset("call send book buy find play get bring order add remind tell give show make put take set "
                          "text email message check cancel open need want like visit ask pay".split())
# Verbs of going somewhere: whisper writes the "to" that a cut-off "the best way to get to" ends on as ", too?"
# (7 of 200 pre-pause finals of seeds 71-111 with a beam of 4), which reads as a complete question.
_MOTION_VERBS = frozenset("get go going come coming drive driving fly flying walk walking travel move head".split())
_DANGLING_TOO = re.compile(r"\b(" + "|".join(sorted(_MOTION_VERBS)) + r"),?\s+too\s*[.?!]*\s*$", re.IGNORECASE)
# A beam decode writes a cut-off "music by" as "music? Bye." or "music, bye?": "bye" after a question, or asked
# as one, is the preposition (nobody asks something and says goodbye in one breath; "Okay, bye." and "Thanks.
# Bye." stay as they are).
_TRAILING_BYE = re.compile(r"(\?\s+bye\s*[.?!]*|[\s,]+bye\s*\?)\s*$", re.IGNORECASE)
# Words after which the next word is read as a verb ("to call", "please add", "you send", "and play").
_VERB_LEADS = frozenset("to please you i we and or then just also let's lets me can could will would should".split())
_SHORT_TURN_OK = _CLOSERS | _FILLERS | frozenset(
    "yes no yeah okay ok sure stop thanks thank bye goodbye hello hi hey cancel please right".split())


def distrust_asr_punctuation(text: str) -> str:
    """The transcript without what whisper adds to a cut-off fragment: a final period or exclamation mark, a
    trailing "for it" ("Tell me the news about!" is as unfinished as "Tell me the news about")."""
    stripped = text.strip()
    if stripped.endswith("...") or stripped.endswith("…"):
        return stripped  # whisper's ellipsis marks a trailing-off voice: keep it, it says "unfinished"
    dangling = _DANGLING_IT.search(stripped)
    if dangling:
        stripped = stripped[: dangling.start()] + dangling.group(1)
    bye = _TRAILING_BYE.search(stripped)
    if bye:
        return stripped[: bye.start()] + " by"
    too = _DANGLING_TOO.search(stripped)
    if too:  # the preposition heard as its homophone: "the best way to get, too?" is "... to get to"
        return stripped[: too.start()] + too.group(1) + " to"
    return stripped.rstrip(".!").rstrip()


def _wants_object(words: list[str]) -> bool:
    """The turn ends on a verb that still wants its object ("remind me to call", "please add"), not on a noun
    spelled like one ("recommend a good science fiction book", "where's my phone call")."""
    if len(words) < 2 or words[-1] not in _OBJECT_VERBS:
        return False
    for word in reversed(words[-5:-1]):
        if word in _DETERMINERS:
            return False  # "a ... book": a noun phrase
        if word in _VERB_LEADS:
            return True
    return True



class CompletionScorer(Protocol):
    """Probability that a transcript is a complete turn (the user is done), 0..1."""

    def probability_complete(self, text: str) -> float:
        """0 = clearly unfinished, 1 = clearly complete."""
        ...


class LexicalTurnModel:
    """Logistic regression over `turn_features`, with weights trained in-repo; microseconds per call."""

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        weights = weights if weights is not None else _end_of_turn_weights.WEIGHTS
        missing = [name for name in FEATURE_NAMES if name not in weights]
        if missing:
            raise ValueError(f"end-of-turn weights lack {missing}; retrain with bench/duplex/train_end_of_turn.py")
        self._weights = [weights[name] for name in FEATURE_NAMES]

    def probability_complete(self, text: str) -> float:
        """Logistic score of the transcript's lexical features."""
        if not text.strip():
            return 0.0
        z = sum(w * x for w, x in zip(self._weights, turn_features(text), strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


class NeutralTurnModel:
    """The completion score for a language the lexical model was not trained on (it reads English words): every
    transcript scores the same, so the turn ends on silence alone, after a moderate wait."""

    def __init__(self, probability: float = 0.5) -> None:
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"probability must be within 0..1, got {probability}")
        self.probability = probability

    def probability_complete(self, text: str) -> float:
        """The same probability for any words (0 for none)."""
        return self.probability if text.strip() else 0.0


@dataclass(frozen=True)
class EndOfTurnOptions:
    """How long a silence must last before Venus takes the turn, as a function of completeness."""

    min_silence_ms: int = 200  # silence needed after a surely complete utterance
    max_silence_ms: int = 2000  # silence after which the turn ends whatever the words say
    curve: float = 2.0  # >1 keeps waits short unless the utterance looks clearly unfinished
    final_bonus: float = 0.05  # added to the probability when the transcript is a final (not a partial)
    cache_size: int = 256  # transcripts whose score is remembered (partials repeat while silence grows)
    asr_punctuation: bool = True  # the punctuation comes from the ASR (whisper adds it itself): a final period,
    #   or a trailing "it" after a dangling preposition, says nothing about completeness and is ignored
    short_turn_words: int = 3  # a turn of 2..this many words that asks nothing is capped at short_turn_cap
    short_turn_cap: float = 0.2  # (a fragment whisper closed with a period: "my flight leads.")
    missing_object_cap: float = 0.1  # a turn ending on a verb that wants an object, asking no wh-question
    # A final whose last word whisper was unsure of, in a turn that is not a question, is capped at
    # unsure_last_word_cap: speech cut off mid-phrase leaves whisper guessing a word from the fragment, and
    # the guess reads complete ("My flight leaves at" -> "My flight lead net.", last word p 0.41-0.58; "I'd like
    # to book a table for" -> "... at table 4.", 0.58-0.61). Complete questions it is unsure of end in "?";
    # 1 of 60 complete turns of seeds 71/81/91 was capped ("which planet is closest to my son.", 0.56).
    unsure_last_word_probability: float = 0.65
    unsure_last_word_cap: float = 0.1
    # A request the local intents parse into a tool call with its slots filled, but whose last words could still
    # grow ("launch the terminal", "12 times 14", "in an hour remind me to call"), ends after at most this much silence,
    # whatever the reading of its words says: it is actionable as heard (a conventional end-pointing silence,
    # not fitted; on the benchmark's train + dev pools 3 of 145 paused halves parse as one, "Wake me up at
    # seven ...", while 8 of 121 such requests waited 1.1-2.5 s for the LLM probe).
    request_max_silence_ms: int = 700
    # the rules above that read English words (whisper's punctuation of cut-off English, short turns, verbs that
    # want an object, the unsure last word's exceptions); off for a conversation in another language
    english_words: bool = True

    def __post_init__(self) -> None:
        if not self.min_silence_ms <= self.request_max_silence_ms:
            raise ValueError(f"request_max_silence_ms must be >= min_silence_ms ({self.min_silence_ms}), got "
                             f"{self.request_max_silence_ms}")
        if not 0 <= self.min_silence_ms <= self.max_silence_ms:
            raise ValueError(f"need 0 <= min_silence_ms <= max_silence_ms, got {self.min_silence_ms}, "
                             f"{self.max_silence_ms}")
        if self.curve <= 0:
            raise ValueError(f"curve must be positive, got {self.curve}")
        if not 0 <= self.final_bonus <= 0.5:
            raise ValueError(f"final_bonus must be within 0..0.5, got {self.final_bonus}")
        if self.cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {self.cache_size}")
        if self.short_turn_words < 0:
            raise ValueError(f"short_turn_words must be >= 0, got {self.short_turn_words}")
        for name in ("short_turn_cap", "missing_object_cap", "unsure_last_word_probability", "unsure_last_word_cap"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within 0..1, got {getattr(self, name)}")

    @classmethod
    def from_base_silence(cls, end_of_turn_silence_ms: int) -> EndOfTurnOptions:
        """Options scaled from the user's `conversation.end_of_turn_silence_ms` setting (default 500)."""
        factor = end_of_turn_silence_ms / 500.0
        return cls(min_silence_ms=int(200 * factor), max_silence_ms=int(2000 * factor),
                   request_max_silence_ms=int(700 * factor))


@dataclass(frozen=True)
class EndOfTurnVerdict:
    """Whether the user's turn is over now, the completeness probability, and why."""

    end_of_turn: bool
    probability: float  # that the words so far are a complete turn
    required_silence_ms: int  # silence this transcript needs before the turn ends
    reason: str


class EndOfTurnDetector:
    """Combines VAD silence with a completion score: `decide(silence_ms, text)` is called as silence grows."""

    def __init__(self, scorer: CompletionScorer | None = None, options: EndOfTurnOptions | None = None) -> None:
        self.scorer = scorer or LexicalTurnModel()
        self.options = options or EndOfTurnOptions()
        self._cache: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def for_language(cls, language: str, end_of_turn_silence_ms: int = 500) -> EndOfTurnDetector:
        """English: the lexical model and its word rules. Another language: silence only (`NeutralTurnModel`: 650 ms,
        560 ms once the final is in, at the default `end_of_turn_silence_ms`); English word cues would misread it."""
        options = EndOfTurnOptions.from_base_silence(end_of_turn_silence_ms)
        if language == "en":
            return cls(options=options)
        return cls(NeutralTurnModel(), replace(options, english_words=False))

    def probability(self, text: str) -> float:
        """The scorer's completion probability, cached per transcript."""
        key = text.strip()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        value = float(self.scorer.probability_complete(key))
        with self._lock:
            self._cache[key] = value
            while len(self._cache) > self.options.cache_size:
                self._cache.popitem(last=False)
        return value

    def required_silence_ms(self, probability: float) -> int:
        """Silence needed for a given completeness: min_silence at 1.0, max_silence at 0.0."""
        o = self.options
        return int(round(o.min_silence_ms + (o.max_silence_ms - o.min_silence_ms) * (1.0 - probability) ** o.curve))

    @staticmethod
    def probe_odds(llm_probability: float) -> float:
        """The LLM probe's probability as calibrated log-odds of a whole turn (fitted on the train split's
        decoded speech by bench/duplex/eot_probe.py)."""
        bias, weight = _eot_probe_weights.CALIBRATION
        return bias + weight * _logit(llm_probability)

    def probe_silence_ms(self, odds: float) -> int:
        """The silence the probe's odds require: min_silence_ms for a sure whole turn, the fitted most for a sure
        fragment, along a logistic curve fitted with the weights; scaled with the user's end-of-turn setting as
        max_silence_ms is."""
        o, w = self.options, _eot_probe_weights
        top = w.SILENCE_MAX_MS * o.max_silence_ms / EndOfTurnOptions().max_silence_ms
        return int(round(o.min_silence_ms + (top - o.min_silence_ms) * _sigmoid((w.SILENCE_MID_ODDS - odds)
                                                                                 / w.SILENCE_WIDTH)))

    def decide(self, silence_ms: int, text: str, *, is_final: bool = False,
               last_word_probability: float | None = None,
               llm_probability: float | None = None) -> EndOfTurnVerdict:
        """Is the turn over after `silence_ms` of VAD silence following the words in `text`?

        `last_word_probability` is whisper's probability of the final's last word, where known.
        `llm_probability`: the chat LLM's probe of the same words (`probe_probability`), where the backend gives
        it; then it decides alone (English: on the held-out splits the lexical model added nothing to it, see
        docs/BENCHMARKS.md), else the lexical model with its caps.
        """
        if silence_ms < 0:
            raise ValueError(f"silence_ms must be >= 0, got {silence_ms}")
        if not text.strip():
            needed = self.options.max_silence_ms
            done = silence_ms >= needed
            return EndOfTurnVerdict(done, 0.0, needed, f"no words yet; {silence_ms}/{needed} ms of silence")
        o = self.options
        if llm_probability is not None and o.english_words:
            odds = self.probe_odds(llm_probability)
            needed = self.probe_silence_ms(odds)
            verb = "ends" if silence_ms >= needed else "waits"
            return EndOfTurnVerdict(silence_ms >= needed, _sigmoid(odds), needed,
                                    f"{verb}: the LLM reads the words as whole with p={_sigmoid(odds):.2f} "
                                    f"(probe {llm_probability:.3f}); {silence_ms}/{needed} ms of silence")
        if not o.english_words:
            probability = min(1.0, self.probability(text) + (o.final_bonus if is_final else 0.0))
            needed = self.required_silence_ms(probability)
            verb = "ends" if silence_ms >= needed else "waits"
            return EndOfTurnVerdict(silence_ms >= needed, probability, needed,
                                    f"{verb}: silence only (no word cues in this language, p={probability:.2f}); "
                                    f"{silence_ms}/{needed} ms of silence")
        one_word = len(split_words(text)) <= 1  # "Yeah." "Stop." are whole turns, period or not
        scored = distrust_asr_punctuation(text) if o.asr_punctuation and not one_word else text.strip()
        probability = self.probability(scored or text)
        words = split_words(scored)
        note = ""
        if 2 <= len(words) <= o.short_turn_words and not scored.endswith("?") \
                and not any(w in _SHORT_TURN_OK for w in words) and probability > o.short_turn_cap:
            probability, note = o.short_turn_cap, f"; only {len(words)} words that ask nothing"
        if _wants_object(words) and words[0] not in _QUESTION_OPENERS - _AUXILIARIES \
                and probability > o.missing_object_cap:
            probability, note = o.missing_object_cap, f"; {words[-1]!r} still wants its object"
        if last_word_probability is not None and last_word_probability < o.unsure_last_word_probability \
                and len(words) >= 2 and not scored.endswith("?") and words[-1] not in _SHORT_TURN_OK \
                and probability > o.unsure_last_word_cap:
            probability = o.unsure_last_word_cap
            note = f"; whisper was unsure of the last word {words[-1]!r} (p={last_word_probability:.2f})"
        probability = min(1.0, probability + (o.final_bonus if is_final else 0.0))
        needed = self.required_silence_ms(probability)
        done = silence_ms >= needed
        looks = "complete" if probability >= 0.5 else "unfinished"
        verb = "ends" if done else "waits"
        return EndOfTurnVerdict(done, probability, needed,
                                f"{verb}: utterance looks {looks} (p={probability:.2f}{note}); "
                                f"{silence_ms}/{needed} ms of silence")
