"""Holding Venus's voice in place while an overlap is judged: silence, no lost words, exact heard words."""

from __future__ import annotations

import numpy as np

from engine.audio.playback import Clip, Player, PlayerOptions
from engine.tts.synth import TimedWord

RATE = 16000
BLOCK = 160  # 10 ms


def _clip() -> Clip:
    t = np.arange(RATE) / RATE  # one second, four words of 250 ms
    words = tuple(TimedWord(w, i * 4000, (i + 1) * 4000) for i, w in enumerate(["one", "two", "three", "four"]))
    return Clip("turn", "one two three four", (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), words)


def _render(player: Player, blocks: int) -> np.ndarray:
    out = []
    for _ in range(blocks):
        block = np.zeros(BLOCK, np.float32)
        player.render(block)
        out.append(block)
    return np.concatenate(out)


def test_pause_holds_silence_and_resume_plays_every_word_with_exact_heard_words() -> None:
    player = Player(PlayerOptions(RATE))
    player.enqueue(_clip())
    before = _render(player, 30)  # 300 ms: "one" heard, "two" started
    player.pause()
    fading = _render(player, 1)
    held = _render(player, 80)  # 800 ms of holding
    assert np.abs(before).max() > 0.4
    assert np.abs(fading[-10:]).max() < 0.05, "the pause fades out within one block"
    assert np.abs(held).max() == 0.0 and player.paused and player.speaking
    player.resume()
    after = _render(player, 100)
    assert not player.paused
    played = np.count_nonzero(np.abs(np.concatenate([before, fading, after])) > 0) / RATE
    assert 0.95 < played <= 1.0, "nothing of the clause was skipped by the pause"
    report = player.reports.get_nowait()
    assert report.heard_words() == ("one", "two", "three", "four")
    assert report.end_sample - report.start_sample == len(_clip().audio), "held time is not counted as heard"


def test_stop_while_paused_reports_only_what_played_before_the_pause() -> None:
    player = Player(PlayerOptions(RATE))
    player.enqueue(_clip())
    _render(player, 30)
    player.pause()
    _render(player, 60)
    player.stop()
    _render(player, 2)
    report = player.reports.get_nowait()
    assert report.truncated
    assert report.heard_words() == ("one",), "the 600 ms held in silence did not make more words heard"
    assert not player.speaking


def test_resume_skips_the_silence_the_pause_landed_in_and_keeps_the_heard_words_exact() -> None:
    # "one two" [600 ms of silence, as Piper renders "explanation:" and a paragraph break] "three"
    t = np.arange(RATE // 2) / RATE
    tone = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    audio = np.concatenate([tone, np.zeros(int(0.6 * RATE), np.float32), tone])
    words = (TimedWord("one", 0, 4000), TimedWord("two", 4000, 8000), TimedWord("three", 17600, 25600))
    player = Player(PlayerOptions(RATE))
    player.enqueue(Clip("turn", "one two: three", audio, words))
    _render(player, 55)  # 550 ms: the pause lands 50 ms into the silence
    player.pause()
    _render(player, 31)  # fading block + 300 ms held
    player.resume()
    after = _render(player, 100)
    onset = int(np.flatnonzero(np.abs(after) > 0.01)[0]) / RATE
    assert onset <= 0.07, f"the voice came back {onset:.2f} s after resume(), not at the next word"
    assert np.count_nonzero(np.abs(after) > 0.01) / RATE > 0.45, "the word after the silence was played whole"
    report = player.reports.get_nowait()
    assert report.heard_words() == ("one", "two", "three")
    assert not report.truncated


def test_resume_after_a_pause_at_a_clauses_end_goes_on_with_the_next_clause() -> None:
    t = np.arange(RATE // 4) / RATE
    tone = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    first = Clip("turn", "one", np.concatenate([tone, np.zeros(RATE // 2, np.float32)]),
                 (TimedWord("one", 0, 4000),))
    second = Clip("turn", "two", tone, (TimedWord("two", 0, 4000),))
    player = Player(PlayerOptions(RATE))
    player.enqueue(first)
    player.enqueue(second)
    _render(player, 30)  # inside the first clip's trailing silence
    player.pause()
    _render(player, 20)
    player.resume()
    after = _render(player, 40)
    onset = int(np.flatnonzero(np.abs(after) > 0.01)[0]) / RATE
    assert onset <= 0.03, f"the next clause began {onset:.2f} s after resume()"
    assert player.reports.get_nowait().heard_words() == ("one",)
    assert player.reports.get_nowait().heard_words() == ("two",)
