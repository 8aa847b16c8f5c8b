"""Reference responders: output.wav files built from the metadata alone, with known behaviour.

`ideal` answers 0.5 s after each turn end, waits through pauses, stops 0.25 s into an interruption and answers
0.5 s after it, and talks straight through backchannels, speech to others and background speech.
`naive` is a plain VAD turn-taker: it answers 1 s after the user goes quiet (0.5 s of silence, then 0.5 s to
generate) and stops for any overlapping speech.
They check the evaluator end to end and bracket what a real system scores.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.duplex.synth import SAMPLE_RATE, SpeechCache, Voice

VENUS_VOICE = Voice("en-us+m2", 175, 45)
LONG_ANSWER = ("The Eiffel Tower was built for the World's Fair in eighteen eighty nine. It is made of iron and "
               "stands about three hundred meters tall. For forty years it was the tallest structure in the world. "
               "Today millions of visitors climb it every year, and at night it sparkles with thousands of lights.")
SHORT_ANSWER = "Sure. Here is a short answer to that."
RESPONSE_GAP_S = 0.5  # ideal response latency
STOP_AFTER_S = 0.25  # ideal stop latency
NAIVE_SILENCE_S = 0.5  # the naive responder's end-of-turn silence
NAIVE_THINK_S = 0.5  # and its time to generate the first audio after that


class _Writer:
    def __init__(self, cache: SpeechCache, seconds: float) -> None:
        self.track = np.zeros(int(seconds * SAMPLE_RATE), dtype=np.float32)
        self.long = cache.render(LONG_ANSWER, VENUS_VOICE) * 0.5
        self.short = cache.render(SHORT_ANSWER, VENUS_VOICE) * 0.5

    def speak(self, start_s: float, stop_s: float | None = None, long: bool = True) -> None:
        clip = self.long if long else self.short
        if stop_s is not None:
            clip = clip[: max(0, int((stop_s - start_s) * SAMPLE_RATE))].copy()
            fade = min(160, clip.size)
            clip[clip.size - fade :] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
        begin = int(start_s * SAMPLE_RATE)
        end = min(self.track.size, begin + clip.size)
        self.track[begin:end] += clip[: end - begin]


def _user_speech_spans(meta: dict) -> list[tuple[float, float]]:
    return sorted((e["start"], e["end"]) for e in meta["events"])


def ideal_output(meta: dict, cache: SpeechCache) -> np.ndarray:
    """What a perfect duplex assistant would say, as a 16 kHz track as long as the input."""
    w = _Writer(cache, meta["duration_s"])
    turn_end = meta["turn_end"]
    if "overlap" not in meta:
        w.speak(turn_end + RESPONSE_GAP_S, long=False)
        return w.track
    start, end = meta["overlap"]["start"], meta["overlap"]["end"]
    if meta["category"] == "user_interruption":
        w.speak(meta["expected_venus_speaking_from"], start + STOP_AFTER_S)
        w.speak(end + RESPONSE_GAP_S, long=False)
    else:
        w.speak(meta["expected_venus_speaking_from"])
    return w.track


def naive_output(meta: dict, cache: SpeechCache) -> np.ndarray:
    """A VAD-only turn-taker: answers after every 0.5 s of silence, stops for any overlapping sound."""
    w = _Writer(cache, meta["duration_s"])
    spans = _user_speech_spans(meta)
    t = 0.0
    for i, (_, end) in enumerate(spans):
        if end < t:
            continue  # this speech overlapped Venus; handled when Venus stopped
        start_talk = end + NAIVE_SILENCE_S + NAIVE_THINK_S
        next_user = next((s for s, _ in spans[i + 1 :] if s > start_talk), None)
        stop = None if next_user is None else next_user + STOP_AFTER_S
        w.speak(start_talk, stop, long=True)
        t = stop if stop is not None else float("inf")
    return w.track


def write_reference(root: Path, kind: str, cache: SpeechCache | None = None) -> int:
    """Write output.wav for every case under root with the `ideal` or `naive` responder; returns the count."""
    makers = {"ideal": ideal_output, "naive": naive_output}
    if kind not in makers:
        raise ValueError(f"unknown reference responder {kind!r}; choose from {sorted(makers)}")
    cache = cache or SpeechCache()
    count = 0
    for meta_path in sorted(Path(root).glob("*/metadata.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        sf.write(meta_path.parent / "output.wav", makers[kind](meta, cache), SAMPLE_RATE, subtype="PCM_16")
        count += 1
    return count
