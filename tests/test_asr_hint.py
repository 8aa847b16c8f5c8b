"""The request hint (engine.asr.REQUEST_HINT) primes whisper for the words of requests; it must never make noise
into a request. Real whisper tiny.en and the real intent matcher, on noise the VAD may let through."""

from __future__ import annotations

import numpy as np
import pytest

from engine.asr import REQUEST_HINT
from engine.intents import IntentMatcher
from engine.settings import Settings


@pytest.fixture(scope="module")
def transcriber():
    from engine.audio import make_transcriber

    t = make_transcriber(Settings())
    t.warm_up()
    return t


def test_noise_read_after_the_hint_is_never_a_request(transcriber) -> None:
    second = np.arange(16000) / 16000
    noises = [np.random.default_rng(seed).normal(0, level, 16000) for seed in range(4) for level in (0.05, 0.1, 0.2)]
    rng = np.random.default_rng(7)
    noises += [0.1 * np.sin(2 * np.pi * 100 * second), np.convolve(rng.normal(0, 0.1, 16000), np.ones(40) / 40, "same")]
    matcher = IntentMatcher.load()
    heard = []
    for noise in noises:
        transcript = transcriber.transcribe(noise.astype(np.float32), word_timestamps=True, beam_size=4,
                                            hint=REQUEST_HINT)
        heard.append(transcript.text)
        for reading in (transcript.text, *transcript.alternatives):
            assert matcher.match(reading) is None, (reading, heard)


def test_the_hint_is_words_not_a_request_whisper_could_copy() -> None:
    matcher = IntentMatcher.load()
    pieces = [p.strip() for p in REQUEST_HINT.replace(":", ",").rstrip(".").split(",")]
    assert len(pieces) >= 10 and all(len(p.split()) <= 2 for p in pieces), pieces
    assert matcher.match(REQUEST_HINT) is None
