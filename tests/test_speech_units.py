"""Speech building blocks on real audio: resampling, VAD segments, clause splitting, the player's stop/duck."""

from __future__ import annotations

import numpy as np
import pytest
from speech_helpers import RATE, espeak, have_tools, pad, piper_voice

from engine.audio import Clip, Player, PlayerOptions, StreamResampler, resample_clip
from engine.models.registry import resolve
from engine.tts import EspeakSynthesizer, split_clauses
from engine.vad import FRAME_SAMPLES, SegmenterOptions, SileroVad, VadSegmenter

pytestmark = pytest.mark.skipif(not have_tools(), reason="espeak-ng and sox are needed to make speech inputs")


def test_stream_resampler_keeps_a_tone_across_blocks():
    t = np.arange(48000) / 48000
    tone = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    resampler = StreamResampler(48000, 16000)
    out = np.concatenate([resampler.process(tone[i:i + 441]) for i in range(0, len(tone), 441)])
    assert abs(len(out) - 16000) <= 1
    expected = np.sin(2 * np.pi * 440 * (np.arange(len(out)) * 3 - 31) / 48000)  # 31 = filter delay
    assert np.max(np.abs(out[200:] - expected[200:])) < 1e-3
    assert len(resample_clip(tone, 48000, 22050)) == 22050


def test_segmenter_rejects_inverted_hysteresis():
    with pytest.raises(ValueError, match="neg_threshold"):
        SegmenterOptions(threshold=0.3, neg_threshold=0.5)


def _segments(audio: np.ndarray) -> list[tuple[float, float]]:
    vad = SileroVad(resolve("silero-vad-v6"))
    seg = VadSegmenter(SegmenterOptions())
    found, start = [], None
    for i in range(0, len(audio) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        tr = seg.push(vad(audio[i:i + FRAME_SAMPLES]), i)
        if tr and tr.started:
            start = tr.start_sample / RATE
        elif tr:
            found.append((start, tr.end_sample / RATE))
    return found


def test_vad_finds_two_utterances_and_ignores_noise():
    first, second = espeak("Good morning Venus."), espeak("What time is it?")
    audio = np.concatenate([pad(first, 1.0, 1.0), pad(second, 0.0, 1.0)])
    audio += np.random.default_rng(0).standard_normal(len(audio)).astype(np.float32) * 0.003
    segments = _segments(audio)
    assert len(segments) == 2, segments
    assert 0.7 < segments[0][0] < 1.1 and abs(segments[0][1] - (1.0 + len(first) / RATE)) < 0.5
    second_at = 2.0 + len(first) / RATE
    assert abs(segments[1][0] - second_at) < 0.3


def test_clauses_cut_at_sentence_ends_and_long_enough_commas():
    chunks = ["Sure", ", I can", " help with that. The wea", "ther is nice, and it is warm", " today!", " Bye"]
    assert list(split_clauses(chunks)) == ["Sure, I can help with that.", "The weather is nice,",
                                           "and it is warm today!", "Bye"]


def _player_with(text: str, rate: int = 16000) -> tuple[Player, Clip]:
    voice = EspeakSynthesizer()
    spoken = voice.synthesize(text)
    audio = resample_clip(spoken.audio, spoken.sample_rate, rate)
    player = Player(PlayerOptions(rate, fade_ms=8.0))
    scale = rate / spoken.sample_rate
    from engine.tts import TimedWord

    words = tuple(TimedWord(w.text, int(w.start_sample * scale), int(w.end_sample * scale)) for w in spoken.words)
    clip = Clip("t1", text, audio, words)
    player.enqueue(clip)
    return player, clip


def test_stop_fades_to_silence_within_one_block_and_reports_heard_words():
    player, clip = _player_with("one two three four five six seven eight")
    block = np.zeros(160, np.float32)  # 10 ms blocks, like the device
    rendered = []
    for _ in range(60):  # 600 ms of speech
        player.render(block)
        rendered.append(block.copy())
    player.enqueue(Clip("t1", "never played", np.ones(16000, np.float32)))
    player.stop()
    after = []
    for _ in range(5):
        player.render(block)
        after.append(block.copy())
    tail = np.concatenate(after)
    fade = int(0.008 * 16000)
    assert np.max(np.abs(tail[fade:])) == 0.0  # silent right after the 8 ms fade
    assert np.max(np.abs(tail[:fade])) > 0.0  # and the fade is a ramp, not a hard cut
    assert np.all(np.abs(np.diff(tail[:fade + 1])) < 0.25)
    cut = player.reports.get_nowait()
    assert cut.truncated and cut.end_sample == 60 * 160 + fade
    heard = cut.heard_words()
    assert 0 < len(heard) < 8 and heard == tuple(w.text for w in clip.words[: len(heard)])
    dropped = player.reports.get_nowait()
    assert dropped.clip.text == "never played" and dropped.start_sample == dropped.end_sample
    assert not player.speaking


def test_duck_lowers_without_stopping_and_unduck_restores():
    player = Player(PlayerOptions(16000, duck_gain=0.25))
    player.enqueue(Clip("t", "tone", np.full(16000, 0.5, np.float32)))
    block = np.zeros(160, np.float32)
    player.render(block)
    assert np.allclose(block, 0.5)
    player.duck()
    player.render(block)  # the ramp block
    player.render(block)
    assert np.allclose(block, 0.125) and player.speaking
    player.unduck()
    player.render(block)
    player.render(block)
    assert np.allclose(block, 0.5)


def test_piper_voice_speaks_a_clause_with_word_timing():
    clause = piper_voice().synthesize("Hello from Venus.")
    assert len(clause.audio) > clause.sample_rate // 2 and np.max(np.abs(clause.audio)) > 0.3
    assert [w.text for w in clause.words] == ["Hello", "from", "Venus."]
    bounds = [(w.start_sample, w.end_sample) for w in clause.words]
    assert all(0 <= a < b <= len(clause.audio) for a, b in bounds)  # each word covers some of the audio
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(bounds[:-1], bounds[1:], strict=True))  # in order, no overlap
    for a, b in (bounds[0], bounds[-1]):  # the first and last words are voiced, not silence
        assert np.max(np.abs(clause.audio[a:b])) > 0.1


@pytest.mark.parametrize("text, loop", [
    ("B I, B I, B I, B I, B I, B I, B I, B", True),  # whisper tiny's decode of "Yeah, yeah." over Venus's voice
    ("the the the the the the the the the", True),
    ("Yeah, yeah.", False), ("yeah yeah yeah yeah yeah yeah", False), ("No, no, no.", False),
    ("and help the weather forecast for the weekend with showers and thunder.", False),
])
def test_a_decode_that_repeats_a_few_words_over_and_over_is_a_loop(text: str, loop: bool) -> None:
    from engine.asr.whisper import looped

    assert looped(text) is loop
