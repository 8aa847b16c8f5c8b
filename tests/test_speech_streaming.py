"""The cheap paths behind idle listening and fast finals: silence passed as a count, the echo canceller resting
while nothing plays, whisper's shorter encoder window, and the pre-final decode reused as the final."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest
from speech_helpers import RATE, RecordingTranscriber, espeak, have_tools, pad

from engine.asr import StreamingRecognizer, WhisperOptions, WhisperTranscriber
from engine.audio import (
    Clip,
    EchoCanceller,
    EchoGuard,
    Player,
    PlayerOptions,
    SpeechFrontEnd,
    StreamResampler,
)
from engine.models.registry import resolve
from engine.vad import SegmenterOptions, SileroVad

pytestmark = pytest.mark.skipif(not have_tools(), reason="espeak-ng and sox are needed to make speech inputs")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


@pytest.fixture(scope="module")
def whisper():
    return WhisperTranscriber(WhisperOptions(resolve("whisper-tiny-en")))


def test_silence_as_a_count_resamples_exactly_like_silent_samples():
    tone = np.sin(np.arange(4410) * 0.05).astype(np.float32)
    real, counted = StreamResampler(22050, 16000), StreamResampler(22050, 16000)
    out_real, out_counted = [real.process(tone)], [counted.process(tone)]
    for size in (220, 221, 17, 2205, 220, 1, 441):  # right after the tone the filter still rings, then it is empty
        out_real.append(real.process(np.zeros(size, np.float32)))
        out_counted.append(counted.process_silence(size))
    out_real.append(real.process(tone))
    out_counted.append(counted.process(tone))
    assert [len(x) for x in out_real] == [len(x) for x in out_counted]
    assert np.allclose(np.concatenate(out_real), np.concatenate(out_counted), atol=1e-6)
    assert np.max(np.abs(out_counted[1])) > 0  # the ringing tail was really resampled, not skipped


def test_an_idle_player_reports_silence_as_a_count_and_keeps_the_clock():
    player = Player(PlayerOptions(16000))
    block = np.ones(160, np.float32)
    player.render(block)
    assert not block.any() and player.reference.get_nowait() == 160 and player.position == 160
    player.enqueue(Clip("t", "tone", np.full(320, 0.5, np.float32)))
    player.render(block)
    played = player.reference.get_nowait()
    assert isinstance(played, np.ndarray) and np.allclose(played, 0.5) and player.position == 320
    assert player.wait_idle(0) is False  # still playing: 160 samples left
    player.render(block)
    player.render(block)
    assert player.wait_idle(0) is True


def test_echo_canceller_rests_until_something_plays_and_after_the_hold():
    front = SpeechFrontEnd(SileroVad(resolve("silero-vad-v6")), SegmenterOptions(), EchoCanceller(), EchoGuard(),
                           echo_hold_ms=500)
    noise = (np.random.default_rng(0).standard_normal(RATE * 3) * 0.01).astype(np.float32)
    voice = (np.sin(np.arange(RATE) * 0.07) * 0.3).astype(np.float32)
    cleaned, active = [], []
    for i in range(0, len(noise), 160):
        t = i // 160  # 10 ms steps: silence 0-1 s, Venus speaks 1-2 s, silence 2-3 s
        front.add_reference(voice[(t - 100) * 160:(t - 99) * 160] if 100 <= t < 200 else np.zeros(160, np.float32))
        cleaned.append(front.process(noise[i:i + 160]).cleaned)
        active.append(front.echo_active)
    assert not any(active[:100]) and all(active[100:200])
    assert all(active[200:248]) and not any(active[252:])  # held 500 ms after the last sound, then resting
    assert np.array_equal(np.concatenate(cleaned[:100]), noise[:RATE])  # resting: the mic goes straight through
    assert not np.array_equal(np.concatenate(cleaned[110:190]), noise[RATE + 1600:RATE + 14400])  # running: processed
    assert front.samples == sum(len(c) for c in cleaned) >= len(noise) - 160


def test_windowed_decode_gives_the_words_and_their_times(whisper):
    speech = espeak("Please set a timer for ten minutes.", wpm=150)
    transcript = whisper.transcribe(pad(speech, 0.2, 0.1), word_timestamps=True)
    words = _words(transcript.text)
    assert {"set", "timer", "minutes"} <= set(words) and ("ten" in words or "10" in words), transcript.text
    assert [_words(w.text) for w in transcript.words if _words(w.text)] == [[w] for w in words]
    starts = [w.start_ms for w in transcript.words]
    assert starts == sorted(starts) and starts[1] >= 200  # the second word comes after the 0.2 s lead-in
    assert transcript.words[-1].end_ms <= 200 + len(speech) * 1000 // RATE + 100
    assert whisper.transcribe(np.zeros(RATE, np.float32), word_timestamps=True).text == ""


def test_speech_longer_than_the_window_is_decoded_whole():
    short_window = WhisperTranscriber(WhisperOptions(resolve("whisper-tiny-en"), window_s=5.0))
    sentences = ["The first train leaves at six in the morning.", "The second one leaves at noon.",
                 "The last train of the day leaves at ten in the evening."]
    audio = np.concatenate([pad(espeak(s, wpm=140), 0.0, 0.6) for s in sentences])
    assert len(audio) / RATE > short_window.options.window_s  # past the window: the long-form path
    transcript = short_window.transcribe(audio, word_timestamps=True)
    words = _words(transcript.text)
    assert {"first", "train", "morning", "second", "noon", "last", "evening"} <= set(words), words
    assert transcript.words[-1].end_ms > 8000


class _CountingTranscriber:
    """The real whisper transcriber, noting each decode with word times (finals and pre-finals)."""

    def __init__(self, inner: WhisperTranscriber) -> None:
        self.inner = inner
        self.final_decodes: list[float] = []  # seconds of audio of each decode with word times
        self.decoded = threading.Semaphore(0)

    def transcribe(self, audio: np.ndarray, *, word_timestamps: bool):
        result = self.inner.transcribe(audio, word_timestamps=word_timestamps)
        if word_timestamps:
            self.final_decodes.append(len(audio) / RATE)
            self.decoded.release()
        return result


def test_the_decode_started_at_the_pause_becomes_the_final(whisper):
    speech = pad(espeak("Open the calendar for next Tuesday morning.", wpm=150), 0.1, 0.4)
    counting = _CountingTranscriber(whisper)
    finals, final_ready = [], threading.Semaphore(0)
    recognizer = StreamingRecognizer(counting, lambda text, start: None,
                                     lambda t, start, end: (finals.append((t, start, end)), final_ready.release()))
    end = len(speech) - RATE // 4
    try:
        recognizer.begin(0, speech[:RATE])
        recognizer.feed(speech[RATE:], allow_partial=False)
        recognizer.prefinal(end)
        assert counting.decoded.acquire(timeout=60)
        recognizer.end(end)  # the pause held: the pre-final's result is the final, not decoded again
        assert final_ready.acquire(timeout=60)
        assert recognizer.finals_from_prefinal == 1 and len(counting.final_decodes) == 1
        recognizer.begin(RATE * 10, speech)
        recognizer.prefinal(RATE * 10 + RATE)  # a pause after the first second...
        assert counting.decoded.acquire(timeout=60)
        recognizer.end(RATE * 10 + end)  # ...that did not hold: the final decodes the whole segment
        assert final_ready.acquire(timeout=60)
    finally:
        recognizer.close()
    assert recognizer.finals_from_prefinal == 1
    assert [round(s, 2) for s in counting.final_decodes] == [round(end / RATE, 2), 1.0, round(end / RATE, 2)]
    for transcript, _, _ in finals:
        assert {"calendar", "tuesday", "morning"} <= set(_words(transcript.text)), transcript.text
    assert [(start, stop) for _, start, stop in finals] == [(0, end), (RATE * 10, RATE * 10 + end)]
    assert recognizer.idle


def _settle(recognizer: StreamingRecognizer) -> None:
    """Wait until the recognizer's worker has taken and finished every partial and pre-final that fell due (its
    private state: the test steps the audio so that what it checks does not depend on how fast this CPU decodes)."""
    deadline = time.monotonic() + 60
    while (recognizer._partial_for >= 0 or recognizer._prefinal is not None or recognizer._busy) \
            and time.monotonic() < deadline:
        time.sleep(0.005)
    assert time.monotonic() < deadline, "the ASR worker did not finish"


def test_speech_over_venus_gets_its_partials_sooner(whisper):
    # A segment that overlaps Venus's voice is transcribed every 250 ms instead of every 1000 ms: the overlap
    # policy waits on those words to tell an interruption from a remark to someone else.
    speech = espeak("Guys, dinner is ready, come to the table now.", wpm=150)
    decoded = {}
    for interval in (None, 250):
        recording = RecordingTranscriber(whisper)
        recognizer = StreamingRecognizer(recording, lambda text, start: None, lambda t, start, end: None,
                                         partial_interval_ms=1000)
        try:
            recognizer.begin(0, None, partial_interval_ms=interval)
            step = RATE // 20
            for i in range(0, 2 * RATE, step):  # two seconds in 50 ms blocks, each decoded before the next
                recognizer.feed(speech[i:i + step])
                _settle(recognizer)
            recognizer.cancel()
        finally:
            recognizer.close()
        decoded[interval] = [n / RATE for n, _ in recording.calls]
    assert decoded[250] == [0.25 * k for k in range(1, 9)], decoded  # every 250 ms of audio
    assert decoded[None] == [1.0, 2.0], decoded


def test_partials_come_from_the_short_window_only_and_a_pause_posts_its_words(whisper):
    # Partials and pre-finals never take whisper's 30 s decode: a cut-off word gives a partial whose text is
    # kept but marked as running past the audio, and the decode at a pause is posted as a partial at once.
    speech = espeak("Michael, did you feed the cat this morning?", wpm=150)
    whole = whisper.transcribe_quick(speech, word_timestamps=True)
    assert whole is not None and whole.within_audio and "cat" in _words(whole.text)
    partials: list[tuple[str, int]] = []
    recognizer = StreamingRecognizer(whisper, lambda text, start: partials.append((text, start)),
                                     lambda t, start, end: None, partial_interval_ms=5000)
    try:
        recognizer.begin(RATE, speech[: RATE])
        recognizer.feed(speech[RATE:], allow_partial=False)
        recognizer.prefinal(RATE + len(speech))  # the user paused: no partial was due, the pause's decode posts
        deadline = time.monotonic() + 20
        while not partials and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        recognizer.close()
    assert partials and partials[0][1] == RATE and "cat" in _words(partials[0][0]), partials


def test_a_hint_lets_whisper_hear_the_name_that_opens_speech(whisper):
    # The first 450 ms of speech aimed at someone in the room: whisper tiny alone mostly writes "Dad" as "bad",
    # "dead" or "God", "Mom" as nothing and "Honey" as "Hurry" (3 of these 15 right on the machine that wrote
    # this test); with the household words as its previous text it writes the names.
    hint = "Mom, Dad, honey, kids, guys."
    heard = []
    for voice in ("en-us", "en-us+m3", "en-gb", "en-us+f2", "en-gb-x-rp+m1"):
        for text, name in (("Dad, can you pick me up at five?", "dad"), ("Honey, the pasta is boiling over!", "honey"),
                           ("Mom, where are my shoes?", "mom")):
            start = espeak(text, voice=voice, wpm=150)[: int(0.45 * RATE)]
            hinted = whisper.transcribe_quick(start, word_timestamps=False, hint=hint)
            heard.append((voice, name, hinted and hinted.text))
    named = [h for h in heard if h[2] is not None and _words(h[2])[:1] == [h[1]]]
    assert len(named) >= 12, heard  # 14 of 15 where this test was written
    # a hint never costs words: a long one leaves room for the whole sentence
    speech = espeak("Please set a timer for ten minutes.", wpm=150)
    long_hint = ", ".join(["Anna", "Tom", "John", "Sarah", "Mike", "Mom", "Dad"] * 6)
    full = whisper.transcribe_quick(speech, word_timestamps=True, hint=long_hint)
    assert full is not None and {"set", "timer", "minutes"} <= set(_words(full.text)), full


def test_the_assistants_name_in_the_hint_lets_whisper_hear_it_opening_speech(whisper):
    # The first 600 ms of "Venus, skip that...": whisper tiny primed with the household words alone writes
    # "V S.", "We are..." or nothing for half of these voices; with the assistant's name in the hint it writes
    # the name.
    from engine.runtime.addressee import overlap_hint

    hint = overlap_hint((), "Venus")
    heard = []
    for voice in ("en-us", "en-us+m3", "en-gb-x-rp+m1", "en-us+f2", "en-gb", "en-us+m7"):
        start = espeak("Venus, skip that and tell me a joke.", voice=voice, wpm=150)[: int(0.6 * RATE)]
        text = whisper.transcribe_quick(start, word_timestamps=False, hint=hint)
        heard.append((voice, text and text.text))
    assert sum(text is not None and "venus" in _words(text) for _, text in heard) >= 5, heard  # 6 of 6 here


def test_the_turn_beam_applies_to_the_pre_final_and_final_only(whisper):
    # "How much does it cost to fly to": greedy whisper tiny writes the cut-off question as "... cost of light?"
    speech = espeak("How much does it cost to fly to", voice="en-us", wpm=165)
    recording = RecordingTranscriber(whisper)
    finals: list = []
    recognizer = StreamingRecognizer(recording, lambda text, start: None,
                                     lambda t, start, end: finals.append(t), partial_interval_ms=300)
    try:
        recognizer.begin(0, final_beam_size=4)
        step = RATE // 50
        for i in range(0, len(speech), step):  # 20 ms blocks, each partial decoded before the next
            recognizer.feed(speech[i:i + step])
            _settle(recognizer)
        recognizer.prefinal(len(speech) - RATE // 2)
        _settle(recognizer)
        recognizer.end(len(speech))  # the pause did not hold: the final decodes the whole segment
        deadline = time.monotonic() + 10
        while not finals and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        recognizer.close()
    assert finals, "no final"
    kinds = {kind: {beam for k, beam in recording.beams if k == kind} for kind, _ in recording.beams}
    assert kinds.get("partial") == {None}, recording.beams
    assert kinds.get("prefinal") == {4} and kinds.get("final") == {4}, recording.beams
    with pytest.raises(ValueError, match="final_beam_size"):
        recognizer.begin(0, final_beam_size=0)


def test_the_hint_and_the_early_first_partial_apply_to_the_start_of_a_segment_only(whisper):
    speech = espeak("Guys, dinner is ready, come to the table now, it is getting cold.", wpm=150)
    recording = RecordingTranscriber(whisper)
    recognizer = StreamingRecognizer(recording, lambda text, start: None, lambda t, start, end: None,
                                     partial_interval_ms=500, hint_max_s=1.0)
    try:
        lookback = int(0.2 * RATE)
        recognizer.begin(0, speech[:lookback], partial_interval_ms=250, hint="Mom, Dad, honey, kids, guys.",
                         first_partial_ms=350)
        step = RATE // 50
        for i in range(lookback, int(2.2 * RATE), step):  # 20 ms blocks, each partial decoded before the next
            recognizer.feed(speech[i:i + step])
            _settle(recognizer)
        recognizer.cancel()
    finally:
        recognizer.close()
    calls = recording.calls
    # the first partial is due at 350 ms of audio (without first_partial_ms: 200 + 250 = 450 ms; 360 ms with
    # 20 ms blocks), then every 250 ms (260 with 20 ms blocks) up to 2.2 s
    assert calls[0][0] == int(0.36 * RATE) and len(calls) == 8, calls
    assert all(b - a == int(0.26 * RATE) for (a, _), (b, _) in zip(calls[:-1], calls[1:], strict=True)), calls
    assert all(hint for n, hint in calls if n <= RATE) and all(not hint for n, hint in calls if n > RATE), calls


def test_the_words_decoded_at_a_pause_reach_their_own_callback_and_only_those(whisper):
    # A pre-final's words are the segment's final if the pause holds; the runtime reads them early (the end-of-turn
    # probe) only when it knows them for what they are.
    speech = espeak("Please set a timer for twenty minutes", voice="en-us", wpm=165)
    partials: list[str] = []
    at_pause: list[str] = []
    recognizer = StreamingRecognizer(whisper, lambda text, start: partials.append(text), lambda t, start, end: None,
                                     partial_interval_ms=300, on_pause_partial=lambda text, start: at_pause.append(text))
    try:
        recognizer.begin(0)
        step = RATE // 50
        for i in range(0, len(speech), step):  # 20 ms blocks, each partial decoded before the next
            recognizer.feed(speech[i:i + step])
            _settle(recognizer)
        recognizer.prefinal(len(speech))
        _settle(recognizer)
        recognizer.cancel()  # the user spoke on, say: no final
    finally:
        recognizer.close()
    assert partials, "no partial while the user spoke"
    assert len(at_pause) == 1 and "timer" in _words(at_pause[0]), (partials, at_pause)
    # without its own callback a pre-final is a partial like the others (as before)
    plain: list[str] = []
    recognizer = StreamingRecognizer(whisper, lambda text, start: plain.append(text), lambda t, start, end: None,
                                     partial_interval_ms=60_000)
    try:
        recognizer.begin(0)
        recognizer.feed(speech)
        recognizer.prefinal(len(speech))
        _settle(recognizer)
    finally:
        recognizer.close()
    assert len(plain) == 1 and "timer" in _words(plain[0]), plain
