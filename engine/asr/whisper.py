"""Speech recognition with faster-whisper: a transcriber, and a worker thread that streams partials and finals."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.errors import ConfigError, ModelCorrupt
from engine.threads import default_threads
from engine.timeline.events import Word

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000


@dataclass(frozen=True)
class Transcript:
    """Text of one utterance; word times are in ms from the start of the audio given."""

    text: str
    words: tuple[Word, ...] = ()
    # False when whisper's timestamps ran past the audio: usually audio cut mid-word (a partial), whose text
    # is still the best guess so far, but not a decode to keep as a final
    within_audio: bool = True
    # the beam's other readings, best first (a beam of 1 has none): "Set a tiger for ten minutes." may also have
    # been "Set a timer for ten minutes."; a grammar (the local intents) may pick the reading it can parse
    alternatives: tuple[str, ...] = ()


class Transcriber(Protocol):
    """Anything that turns 16 kHz mono float32 audio into text.

    A transcriber may also offer `transcribe_quick(audio, *, word_timestamps, hint="") -> Transcript | None`: the same
    decode without any slow recovery path, None where that path would be needed. The streaming worker uses it
    for partials and pre-finals, whose value is in arriving soon (a later partial or the final will do better).
    """

    def transcribe(self, audio: np.ndarray, *, word_timestamps: bool) -> Transcript: ...


@dataclass(frozen=True)
class WhisperOptions:
    """How faster-whisper is loaded and run."""

    model_path: Path  # a CTranslate2 model folder (from the registry; never a hub name)
    language: str = "en"  # ISO code; "" lets whisper detect it
    threads: int = field(default_factory=lambda: default_threads("ct2"))  # keep low beside the LLM
    beam_size: int = 1  # 1 = greedy, the fastest
    window_s: float = 15.0  # encoder window; whisper's own 30 s costs about 3x more for short commands

    def __post_init__(self) -> None:
        if self.threads < 1 or self.beam_size < 1:
            raise ValueError(f"threads and beam_size must be >= 1, got {self.threads}, {self.beam_size}")
        if not 5.0 <= self.window_s <= 30.0:
            raise ValueError(f"window_s must be within 5..30 s (shorter windows make whisper repeat itself), "
                             f"got {self.window_s}")


_FRAMES_PER_S = 100  # whisper's mel frames per second
_MAX_FRAMES = 3000  # whisper's 30 s window
# Read by whisper as the text before the words that end a turn: the words of requests to a desktop assistant (the
# built-in tools' nouns, operations and units), so that whisper tiny writes them where it would guess others. A list
# of words, not sentences: whisper copies a sentence of its prompt onto noise (with "5 miles in kilometers." in the
# prompt, white noise at -20 dBFS came out as "10 miles in kilometers." three times: a request nobody made); a list
# of words is no request. Kept under _MAX_HINT_TOKENS.
REQUEST_HINT = ("Venus: timer, alarm, reminder, note, clipboard, screen, browser, download, battery, plus, times, "
                "minus, percent, kilometers, miles, Celsius, Fahrenheit.")
ALTERNATIVE_MARGIN = 0.15  # see _windowed; fitted on the intent benchmark's train and dev splits
_MAX_HINT_TOKENS = 64  # a hint is a few names; whisper's own prompt limit is 223 tokens
_PREPEND_PUNCTUATION = "\"'“¿([{-"  # marks that join the next word (whisper's defaults)
_APPEND_PUNCTUATION = "\"'.。,，!！?？:：”)]}、"  # marks that join the previous word


_WORD = re.compile(r"(?:[^\W_]|')+")  # words of any script: "qué" is one word, not "qu"


def looped(text: str, min_words: int = 8, max_distinct: float = 0.25) -> bool:
    """True when a decode repeats a few words over and over without reaching the length limit: whisper tiny
    heard a user's "Yeah, yeah." over Venus's voice as "B I, B I, B I, B I, B I, B I, B I, B". That is a loop,
    not words; "yeah yeah yeah" and other short repetitions are left alone."""
    words = _WORD.findall(text.lower())
    return len(words) >= min_words and len(set(words)) <= max_distinct * len(words)


class WhisperTranscriber:
    """faster-whisper on the CPU with int8 weights.

    An utterance is encoded in a window of `window_s` (or its length plus 1 s) instead of whisper's fixed 30 s:
    about 3x cheaper for short commands, with the same word error rate on 54 synthesized commands (10.9% vs
    11.5%). Longer audio, and a decode whose timestamps run past the audio, go through faster-whisper's own
    30 s long-form decoding.
    """

    def __init__(self, options: WhisperOptions) -> None:
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import Tokenizer

        self.options = options
        if not (Path(options.model_path) / "model.bin").exists():
            raise ModelCorrupt(f"{options.model_path} holds no model.bin",
                               fix="run `venus models install` or point asr.model at a CTranslate2 model folder")
        self._model = WhisperModel(str(options.model_path), device="cpu", compute_type="int8",
                                   cpu_threads=options.threads, num_workers=1)
        self._warm = False
        self._hints: dict[str, list[int]] = {}  # hint text -> its prompt tokens
        multilingual = self._model.model.is_multilingual
        if not multilingual and options.language not in ("", "en"):  # tiny.en would write English for Spanish
            raise ConfigError(f"{options.model_path} is an English-only whisper; it cannot hear {options.language!r}",
                              fix="run `venus models install` for the multilingual whisper-base, or set "
                                  "conversation.language to en")
        self._tokenizer = None  # language detection needs whisper's own path, so it takes every clip
        if options.language or not multilingual:
            self._tokenizer = Tokenizer(self._model.hf_tokenizer, multilingual, task="transcribe",
                                        language=options.language if multilingual else None)

    def warm_up(self) -> None:
        """Run one small decode, so the first real utterance does not pay CTranslate2's first-call setup."""
        if not self._warm:
            self._warm = True
            self.transcribe(np.zeros(SAMPLE_RATE // 2, np.float32), word_timestamps=True)

    def transcribe(self, audio: np.ndarray, *, word_timestamps: bool, beam_size: int | None = None,
                   hint: str = "") -> Transcript:
        """Decode the whole clip (no VAD filter: the caller already cut it to speech).

        `beam_size` overrides the options' for this clip (the words that end a turn are worth a wider search).
        `hint` is read as the text before (see `transcribe_quick`); whisper's 30 s fallback decodes without it.
        """
        audio = np.asarray(audio, dtype=np.float32)
        features = self._model.feature_extractor(audio)
        window = max(int(self.options.window_s * _FRAMES_PER_S), features.shape[-1] + _FRAMES_PER_S)
        if self._tokenizer is not None and window <= _MAX_FRAMES:
            transcript = self._windowed(features, window, word_timestamps, hint, beam_size=beam_size)
            if transcript is not None and transcript.within_audio:
                return transcript
        return self._long_form(audio, word_timestamps, beam_size)

    def transcribe_quick(self, audio: np.ndarray, *, word_timestamps: bool, hint: str = "",
                         beam_size: int | None = None) -> Transcript | None:
        """The short-window decode only, never whisper's 30 s decode (3-4x the cost: 0.7-1.2 s here). None where
        whisper looped; a transcript with `within_audio` False where its timestamps ran past the audio.

        `beam_size` overrides the options' for this clip.
        `hint` is text whisper reads as what came before (its "previous text" prompt): words it should expect.
        The first word of speech aimed at someone in the room is a name that whisper tiny hears as a common word
        on its own ("Dad" as "bad.", "Honey" as "her need."); with the names in the hint it writes them.
        """
        audio = np.asarray(audio, dtype=np.float32)
        features = self._model.feature_extractor(audio)
        window = max(int(self.options.window_s * _FRAMES_PER_S), features.shape[-1] + _FRAMES_PER_S)
        if self._tokenizer is None or window > _MAX_FRAMES:
            return None
        return self._windowed(features, window, word_timestamps, hint, beam_size)

    def _hint_tokens(self, hint: str) -> list[int]:
        tokens = self._hints.get(hint)
        if tokens is None:
            assert self._tokenizer is not None
            # whisper's prompt convention: <|startofprev|> and the earlier text, then the start of transcript
            tokens = [self._tokenizer.sot_prev, *self._tokenizer.encode(" " + hint.strip())][: _MAX_HINT_TOKENS]
            if len(self._hints) >= 16:
                self._hints.clear()
            self._hints[hint] = tokens
        return tokens

    def _windowed(self, features: np.ndarray, window: int, word_timestamps: bool,
                  hint: str = "", beam_size: int | None = None) -> Transcript | None:
        """Decode in a short window, with whisper's timestamps; None when whisper looped (up to the length limit,
        or a few words repeated: `looped`),
        `within_audio` False when its timestamps ran past the audio (the caller may fall back to 30 s)."""
        import ctranslate2

        tokenizer = self._tokenizer
        content = features.shape[-1]
        seconds = content / _FRAMES_PER_S
        padded = np.zeros((1, features.shape[0], window), np.float32)  # zero features, as faster-whisper pads
        padded[0, :, :content] = features
        encoded = self._model.model.encode(ctranslate2.StorageView.from_array(padded))
        limit = int(24 + 14 * seconds)
        hinted = self._hint_tokens(hint) if hint.strip() else []
        beam = beam_size or self.options.beam_size
        result = self._model.model.generate(  # max_length counts the prompt too
            encoded, [[*hinted, *tokenizer.sot_sequence]], beam_size=beam, num_hypotheses=beam,
            max_length=limit + len(hinted),
            suppress_blank=True, suppress_tokens=[-1], return_scores=True, return_no_speech_prob=True)[0]
        sequence = result.sequences_ids[0]
        tokens = [t for t in sequence if t < tokenizer.eot]
        stamps = [(t - tokenizer.timestamp_begin) * 0.02 for t in sequence if t >= tokenizer.timestamp_begin]
        if len(sequence) >= limit - 2:
            return None
        within = not (stamps and stamps[-1] > seconds + 1.0)
        mean_logprob = result.scores[0] * len(sequence) / (len(sequence) + 1) if sequence else 0.0
        if not tokens or (result.no_speech_prob > 0.6 and mean_logprob < -1.0):  # whisper's own no-speech rule
            return Transcript("", within_audio=within)
        text = tokenizer.decode(tokens).strip()
        if not any(ch.isalnum() for ch in text):
            return Transcript("", within_audio=within)  # a lone "." or "..." is whisper's way of hearing nothing
        if looped(text):
            return None
        others: list[str] = []
        # the beam's other readings that whisper found nearly as likely (mean log-probability per token within
        # ALTERNATIVE_MARGIN of the best), for a grammar to choose from; a far one is a guess, not a hearing
        for other, score in zip(result.sequences_ids[1:], result.scores[1:], strict=False):
            if score < result.scores[0] - ALTERNATIVE_MARGIN:
                continue
            reading = tokenizer.decode([t for t in other if t < tokenizer.eot]).strip()
            if reading and reading != text and reading not in others and not looped(reading):
                others.append(reading)
        alternatives = tuple(others)
        if not word_timestamps or not within:
            return Transcript(text, within_audio=within, alternatives=alternatives)
        from faster_whisper.transcribe import merge_punctuations

        alignment = self._model.find_alignment(tokenizer, [tokens], encoded, content)[0]
        merge_punctuations(alignment, _PREPEND_PUNCTUATION, _APPEND_PUNCTUATION)
        words = tuple(Word(text=w["word"].strip(), start_ms=int(min(w["start"], seconds) * 1000),
                           end_ms=int(min(w["end"], seconds) * 1000), probability=float(w["probability"]))
                      for w in alignment if w["word"].strip())
        return Transcript(text, words, alternatives=alternatives)

    def _long_form(self, audio: np.ndarray, word_timestamps: bool, beam_size: int | None = None) -> Transcript:
        segments, _ = self._model.transcribe(
            audio, language=self.options.language or None,
            beam_size=beam_size or self.options.beam_size, word_timestamps=word_timestamps, vad_filter=False,
            condition_on_previous_text=False, without_timestamps=not word_timestamps, temperature=0.0,
        )
        texts: list[str] = []
        words: list[Word] = []
        for seg in segments:
            texts.append(seg.text.strip())
            for w in seg.words or ():
                words.append(Word(text=w.word.strip(), start_ms=int(w.start * 1000), end_ms=int(w.end * 1000),
                                  probability=float(w.probability)))
        text = " ".join(t for t in texts if t)
        if looped(text):  # the long decode looped too: nothing was made out
            return Transcript("")
        return Transcript(text, tuple(words))


PartialCallback = Callable[[str, int], None]  # text, segment start sample
FinalCallback = Callable[[Transcript, int, int], None]  # transcript, segment start and end sample
AudioCallback = Callable[[np.ndarray, int, bool], None]  # audio, segment start sample, is it the final


class StreamingRecognizer:
    """A worker thread that transcribes the open speech segment every `partial_interval_ms` and at its end.

    `begin`, `feed`, `prefinal` and `end` only copy and hand over, so the perception thread never waits for
    whisper. The worker takes finals first, then the newest pre-final, then a partial, so neither a stale
    pre-final nor a partial is decoded ahead of a final.
    """

    def __init__(self, transcriber: Transcriber, on_partial: PartialCallback, on_final: FinalCallback,
                 *, partial_interval_ms: int = 500, on_audio: AudioCallback | None = None,
                 hint_max_s: float = 1.2, on_pause_partial: PartialCallback | None = None) -> None:
        """`on_pause_partial`: where a pre-final's words go while its segment is still open (the user paused; these
        words become the final if the pause holds); by default they go to `on_partial` like any partial."""
        if partial_interval_ms < 50:
            raise ValueError(f"partial_interval_ms must be >= 50, got {partial_interval_ms}")
        if hint_max_s < 0:
            raise ValueError(f"hint_max_s must be >= 0, got {hint_max_s}")
        self._hint = ""  # the open segment's hint for its early partials
        self._final_beam: int | None = None  # the open segment's beam for its pre-finals and final
        self._final_hint = ""  # the open segment's hint for its pre-finals and final
        self._hint_samples = int(hint_max_s * SAMPLE_RATE)
        self._transcriber = transcriber
        self._on_partial = on_partial
        self._on_pause_partial = on_pause_partial or on_partial
        self._on_final = on_final
        self._on_audio = on_audio  # sees the audio of each partial and final, just before its callback
        self._default_interval_ms = partial_interval_ms
        self._partial_samples = partial_interval_ms * SAMPLE_RATE // 1000
        self._cond = threading.Condition()
        self._chunks: list[np.ndarray] = []
        self._segment_start = -1
        self._samples = 0
        self._last_partial_at = 0
        self._finals: deque[_Job] = deque()  # closed segments, in order
        self._prefinal: _Job | None = None  # only the newest pause of the open segment is worth decoding
        self._partial_for = -1  # segment start a partial is due for, or -1
        self._closed = False
        self._busy = False
        self._early: tuple[tuple[int, int], Transcript] | None = None  # result of the last pre-final
        self.finals_from_prefinal = 0  # finals that reused the decode started at the pause (for benchmarks)
        self._thread = threading.Thread(target=self._run, name="venus-asr", daemon=True)
        self._thread.start()

    def begin(self, start_sample: int, lookback: np.ndarray | None = None, *,
              partial_interval_ms: int | None = None, hint: str = "", first_partial_ms: int | None = None,
              final_beam_size: int | None = None, final_hint: str = "") -> None:
        """A segment opened at `start_sample`; `lookback` is the audio already heard from that sample on.

        `partial_interval_ms` overrides the interval for this segment (speech over Venus's voice needs its
        words sooner: the overlap policy is waiting on them). `hint` primes the segment's early partials (up to
        `hint_max_s` of audio) with words to expect, such as the names of people in the room; later partials and
        the final are decoded without it, so a hint cannot put a name where none was said for long.
        `first_partial_ms` brings the first partial forward: it is due once the segment holds that much audio
        (otherwise one interval after the look-back). `final_beam_size` decodes the segment's pre-finals and
        final with that beam (the transcriber's own otherwise); partials stay at the transcriber's.
        `final_hint` primes the pre-finals and the final: the kind of words a request to an assistant holds, so
        that whisper writes "timer" where it would hear "tiger" (a hint of names is for early partials only).
        """
        if final_beam_size is not None and final_beam_size < 1:
            raise ValueError(f"final_beam_size must be >= 1, got {final_beam_size}")
        with self._cond:
            self._hint = hint
            self._final_beam = final_beam_size
            self._final_hint = final_hint
            interval = partial_interval_ms if partial_interval_ms is not None else self._default_interval_ms
            if interval < 50:
                raise ValueError(f"partial_interval_ms must be >= 50, got {interval}")
            self._partial_samples = interval * SAMPLE_RATE // 1000
            self._segment_start = start_sample
            self._chunks = [] if lookback is None else [np.array(lookback, dtype=np.float32)]
            self._samples = sum(len(c) for c in self._chunks)
            self._last_partial_at = self._samples
            if first_partial_ms is not None:  # due when the segment reaches first_partial_ms of audio
                first = first_partial_ms * SAMPLE_RATE // 1000
                self._last_partial_at = min(self._samples, first - self._partial_samples)

    def feed(self, audio: np.ndarray, *, allow_partial: bool = True) -> None:
        """More audio of the open segment; schedules a partial every interval (not while the user pauses)."""
        with self._cond:
            if self._segment_start < 0:
                return
            self._chunks.append(np.array(audio, dtype=np.float32))
            self._samples += len(audio)
            if allow_partial and self._samples - self._last_partial_at >= self._partial_samples:
                self._last_partial_at = self._samples
                self._partial_for = self._segment_start
                self._cond.notify()

    def prefinal(self, end_sample: int) -> None:
        """The user paused: transcribe what was heard up to `end_sample` now; if the segment then ends there,
        `end` reuses the result (the part not heard yet is the VAD's silence padding)."""
        with self._cond:
            if self._segment_start < 0 or end_sample <= self._segment_start:
                return
            audio = self._joined()[: end_sample - self._segment_start]
            self._prefinal = _Job(audio, self._segment_start, end_sample, self._final_beam, self._final_hint)
            self._cond.notify()

    def end(self, end_sample: int) -> None:
        """The segment closed at `end_sample`: transcribe it, with word timestamps."""
        with self._cond:
            if self._segment_start < 0:
                return
            audio = self._joined()[: max(0, end_sample - self._segment_start)] if self._chunks else \
                np.zeros(0, np.float32)
            self._finals.append(_Job(audio, self._segment_start, end_sample, self._final_beam, self._final_hint))
            self._prefinal, self._partial_for = None, -1  # both were about this segment: the final replaces them
            self._segment_start, self._chunks, self._samples = -1, [], 0
            self._cond.notify()

    @property
    def idle(self) -> bool:
        """True when no segment is open and no job is queued or running."""
        with self._cond:
            return (self._segment_start < 0 and not self._finals and self._prefinal is None
                    and self._partial_for < 0 and not self._busy)

    def cancel(self) -> None:
        """Drop the open segment without a final (for example when it was judged to be echo)."""
        with self._cond:
            self._segment_start, self._chunks, self._samples = -1, [], 0
            self._prefinal, self._partial_for = None, -1

    def close(self) -> None:
        """Stop the worker after the queued finals."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join(timeout=10)

    def _joined(self) -> np.ndarray:
        # called with the lock held; keeps one array so later joins copy only the new audio
        if len(self._chunks) > 1:
            self._chunks = [np.concatenate(self._chunks)]
        return self._chunks[0] if self._chunks else np.zeros(0, np.float32)

    def _next_job(self) -> tuple[str, object] | None:
        with self._cond:
            while True:
                if self._finals:
                    kind, job = "final", self._finals.popleft()
                elif self._closed:
                    return None
                elif self._prefinal is not None:
                    kind, job, self._prefinal = "prefinal", self._prefinal, None
                elif self._partial_for >= 0:
                    kind, job, self._partial_for = "partial", self._partial_for, -1
                else:
                    self._cond.wait()
                    continue
                self._busy = True
                return kind, job

    def _run(self) -> None:
        warm_up = getattr(self._transcriber, "warm_up", None)
        if warm_up is not None:
            with self._cond:
                self._busy = True  # `idle` stays False until the warm-up is done
            try:
                warm_up()
            except Exception:  # a model that cannot decode fails again on the first job, and is reported there
                log.exception("ASR warm-up failed")
            finally:
                with self._cond:
                    self._busy = False
        while (item := self._next_job()) is not None:
            kind, job = item
            try:
                self._do(kind, job)
            except Exception:  # a failed decode must not kill the worker; the segment is lost, not the session
                log.exception("ASR %s failed", kind)
            finally:
                with self._cond:
                    self._busy = False

    def _quick(self, audio: np.ndarray, *, word_timestamps: bool, hint: str = "",
               beam_size: int | None = None) -> Transcript | None:
        quick = getattr(self._transcriber, "transcribe_quick", None)
        extra: dict[str, object] = {"beam_size": beam_size} if beam_size is not None else {}
        if quick is None:
            return self._transcriber.transcribe(audio, word_timestamps=word_timestamps, **extra)
        if hint:
            extra["hint"] = hint
        return quick(audio, word_timestamps=word_timestamps, **extra)

    def _post_partial(self, audio: np.ndarray, text: str, start: int, *, at_pause: bool = False) -> None:
        if self._on_audio is not None:
            self._on_audio(audio, start, False)
        (self._on_pause_partial if at_pause else self._on_partial)(text, start)

    def _do(self, kind: str, job: object) -> None:
        if kind == "partial":
            with self._cond:
                if self._segment_start != job or not self._chunks:
                    return
                audio = self._joined()
                hint = self._hint if len(audio) <= self._hint_samples else ""
            if len(audio) < SAMPLE_RATE // 4:
                return
            began = time.perf_counter()
            transcript = self._quick(audio, word_timestamps=False, hint=hint)
            log.debug("partial of %.2f s audio in %.0f ms: %r", len(audio) / SAMPLE_RATE,
                      (time.perf_counter() - began) * 1000, transcript and transcript.text)
            if transcript is not None and transcript.text:
                self._post_partial(audio, transcript.text, job)  # type: ignore[arg-type]
            return
        assert isinstance(job, _Job)
        if kind == "prefinal":
            began = time.perf_counter()
            transcript = self._quick(job.audio, word_timestamps=True, beam_size=job.beam, hint=job.hint)
            log.debug("pre-final of %.2f s audio in %.0f ms: %r", len(job.audio) / SAMPLE_RATE,
                      (time.perf_counter() - began) * 1000, transcript and transcript.text)
            if transcript is None:
                return  # the final decodes it the slow way, if the pause holds
            if transcript.within_audio:
                self._early = ((job.start, job.end), transcript)
            with self._cond:
                still_open = self._segment_start == job.start
            if still_open and transcript.text:  # the newest words of the open segment: a partial too
                self._post_partial(job.audio, transcript.text, job.start, at_pause=True)
            return
        began = time.perf_counter()
        early, self._early = self._early, None
        if early is not None and early[0] == (job.start, job.end):
            transcript = early[1]  # the pause held: the early decode is the final
            self.finals_from_prefinal += 1
        elif len(job.audio):
            extra: dict[str, object] = {"beam_size": job.beam} if job.beam is not None else {}
            if job.hint:
                extra["hint"] = job.hint
            transcript = self._transcriber.transcribe(job.audio, word_timestamps=True, **extra)
        else:
            transcript = Transcript("")
        log.debug("final of %.2f s audio in %.0f ms (early decode %s)", len(job.audio) / SAMPLE_RATE,
                  (time.perf_counter() - began) * 1000, "used" if early and early[0] == (job.start, job.end)
                  else "not used")
        if self._on_audio is not None:
            self._on_audio(job.audio, job.start, True)
        self._on_final(transcript, job.start, job.end)


@dataclass(frozen=True)
class _Job:
    """Audio of a segment to decode, and where it sits on the perception clock."""

    audio: np.ndarray
    start: int
    end: int
    beam: int | None = None  # the segment's beam for its pre-finals and final (None: the transcriber's own)
    hint: str = ""  # the segment's hint for its pre-finals and final
