"""Seeded duplex scenario generator: DIR/<case>/input.wav (the user's side only) + metadata.json with event times.

Six categories, Full-Duplex-Bench folder layout. Overlap cases first ask for a long answer, then place the
overlapping speech a few seconds after the question ends, when Venus is expected to be speaking; the expected
timing is recorded in the metadata so the evaluator can tell whether Venus actually was.

Run: .venv/bin/python -m bench.duplex.generate --out bench/out/duplex --per-category 40 --seed 1
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.duplex import scenario_text as text
from bench.duplex.synth import SAMPLE_RATE, SpeechCache, Voice, place

CATEGORIES = ("smooth_turn_taking", "pause_handling", "user_interruption", "backchannel", "talking_to_others",
              "background_speech")

USER_VOICES = [Voice("en-us", 165, 50), Voice("en-us+m3", 160, 40), Voice("en-gb", 170, 55),
               Voice("en-us+f2", 165, 60), Voice("en-gb-x-rp+m1", 160, 45)]
OTHER_VOICES = [Voice("en-us+f4", 170, 70), Voice("en+m7", 155, 30), Voice("en-gb-scotland+f3", 165, 65)]
BACKGROUND_VOICES = [Voice("en-029", 175, 45), Voice("en-us-nyc+m2", 180, 35), Voice("en+f5", 170, 75)]
REVERB = ("reverb", "60", "gain", "-n", "-3")

USER_RMS_DB = -20.0  # the user's speech level in input.wav (dBFS, RMS)
RESPONSE_DELAY_S = 0.8  # when Venus is expected to start answering after the question ends
TAIL_S = 6.0  # silence after the user's last words, for Venus's answer


@dataclass(frozen=True)
class GeneratorOptions:
    """What to generate."""

    out_dir: Path  # cases go to out_dir/<category>_<nnn>/
    per_category: int = 40  # cases per category
    seed: int = 1  # same seed, same cases
    categories: tuple[str, ...] = CATEGORIES  # a subset for quick runs
    cache_dir: Path | None = None  # rendered speech cache; a temp folder when None

    def __post_init__(self) -> None:
        if self.per_category < 1:
            raise ValueError(f"per_category must be >= 1, got {self.per_category}")
        unknown = [c for c in self.categories if c not in CATEGORIES]
        if unknown:
            raise ValueError(f"unknown categories {unknown}; choose from {list(CATEGORIES)}")


def _rms_db(audio: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(audio.astype(np.float64) ** 2)) + 1e-12))


def _at_level(audio: np.ndarray, level_db: float) -> np.ndarray:
    return audio * np.float32(10 ** ((level_db - _rms_db(audio)) / 20))


class _Case:
    """One scenario under construction: a track, the user's voice and the events placed so far."""

    def __init__(self, cache: SpeechCache, rng: random.Random, user: Voice, seconds: float) -> None:
        self.cache, self.rng, self.user = cache, rng, user
        self.track = np.zeros(int(seconds * SAMPLE_RATE), dtype=np.float32)
        self.events: list[dict] = []

    def say(self, words: str, start: float, kind: str, voice: Voice | None = None, level_db: float = 0.0,
            effects: tuple[str, ...] = ()) -> tuple[float, float]:
        voice = voice or self.user
        clip = _at_level(self.cache.render(words, voice, effects), USER_RMS_DB + level_db)
        needed = int((start + TAIL_S) * SAMPLE_RATE) + clip.size
        if needed > self.track.size:
            self.track = np.concatenate([self.track, np.zeros(needed - self.track.size, dtype=np.float32)])
        begin, end = place(self.track, clip, start)
        self.events.append({"type": kind, "start": round(begin, 3), "end": round(end, 3), "text": words,
                            "voice": voice.name, "level_db": round(level_db, 1)})
        return begin, end

    def finish(self, end_s: float, noise_db: float, seed: int) -> np.ndarray:
        total = max(self.track.size, int(end_s * SAMPLE_RATE))
        track = np.zeros(total, dtype=np.float32)
        track[: self.track.size] = self.track
        noise = np.random.default_rng(seed).standard_normal(total).astype(np.float32)
        noise = np.convolve(noise, np.ones(8, dtype=np.float32) / 8, mode="same")  # duller than white noise
        track += _at_level(noise, noise_db)
        return np.clip(track, -1.0, 1.0)


def _opening(case: _Case, long_answer: bool) -> float:
    lead = case.rng.uniform(0.4, 1.0)
    question = case.rng.choice(text.LONG_REQUESTS if long_answer else text.QUESTIONS)
    _, end = case.say(question, lead, "user_turn")
    return end


def build_case(category: str, index: int, seed: int, cache: SpeechCache) -> tuple[np.ndarray, dict]:
    """Render one case of a category; returns the input track and its metadata."""
    case_seed = seed * 100_003 + CATEGORIES.index(category) * 1_000 + index
    rng = random.Random(case_seed)
    user = rng.choice(USER_VOICES)
    case = _Case(cache, rng, user, 12.0)
    meta: dict = {"category": category, "seed": case_seed, "sample_rate": SAMPLE_RATE, "user_voice": user.name}
    noise_db = rng.uniform(-62.0, -52.0)
    if category == "smooth_turn_taking":
        meta["turn_end"] = _opening(case, long_answer=False)
        end = meta["turn_end"] + TAIL_S
    elif category == "pause_handling":
        first, second = rng.choice(text.PAUSED)
        _, pause_start = case.say(first, rng.uniform(0.4, 1.0), "user_turn")
        pause = rng.uniform(0.9, 1.5)
        pause_end, meta["turn_end"] = case.say(second, pause_start + pause, "user_turn")
        meta["pause"] = {"start": pause_start, "end": pause_end}
        end = meta["turn_end"] + TAIL_S
    else:
        question_end = _opening(case, long_answer=True)
        meta["turn_end"] = question_end
        onset = question_end + RESPONSE_DELAY_S + rng.uniform(1.5, 3.0)
        meta["expected_venus_speaking_from"] = round(question_end + RESPONSE_DELAY_S, 3)
        if category == "user_interruption":
            words, keywords = rng.choice(text.INTERRUPTIONS)
            start, stop = case.say(words, onset, "overlap")
            meta["keywords"] = list(keywords)
        elif category == "backchannel":
            start, stop = case.say(rng.choice(text.BACKCHANNELS), onset, "overlap")
            if rng.random() < 0.4:  # a second backchannel a little later
                _, stop = case.say(rng.choice(text.BACKCHANNELS), stop + rng.uniform(1.0, 2.0), "overlap")
        elif category == "talking_to_others":
            words, reply = rng.choice(text.OTHER_ADDRESSED)
            start, stop = case.say(words, onset, "overlap")
            if reply and rng.random() < 0.6:
                other = rng.choice(OTHER_VOICES)
                _, stop = case.say(reply, stop + rng.uniform(0.3, 0.7), "other_reply", other,
                                   rng.uniform(-8.0, -3.0), REVERB)
        else:
            voice = rng.choice(BACKGROUND_VOICES)
            level = rng.uniform(-22.0, -14.0)
            start, stop = case.say(rng.choice(text.BACKGROUND), onset, "overlap", voice, level, REVERB)
            noise_db = rng.uniform(-50.0, -44.0)
        meta["overlap"] = {"start": start, "end": stop, "kind": category}
        end = stop + TAIL_S
    audio = case.finish(end, noise_db, case_seed)
    meta["duration_s"] = round(audio.size / SAMPLE_RATE, 3)
    meta["events"] = case.events
    for key in ("turn_end",):
        meta[key] = round(meta[key], 3)
    for key in ("pause", "overlap"):
        if key in meta:
            meta[key] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in meta[key].items()}
    return audio, meta


def generate(options: GeneratorOptions) -> list[Path]:
    """Write every case; returns the case folders. Existing cases with the same metadata are kept."""
    cache = SpeechCache(options.cache_dir)
    folders = []
    for category in options.categories:
        for index in range(options.per_category):
            folder = options.out_dir / f"{category}_{index:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            audio, meta = build_case(category, index, options.seed, cache)
            meta["id"] = folder.name
            sf.write(folder / "input.wav", audio, SAMPLE_RATE, subtype="PCM_16")
            (folder / "metadata.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
            folders.append(folder)
    return folders


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-category", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--categories", nargs="*", default=list(CATEGORIES))
    parser.add_argument("--cache", type=Path, default=None)
    args = parser.parse_args(argv)
    folders = generate(GeneratorOptions(args.out, args.per_category, args.seed, tuple(args.categories), args.cache))
    print(f"wrote {len(folders)} cases under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
