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
