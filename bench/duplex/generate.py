"""Seeded duplex scenario generator: DIR/<case>/input.wav (the user's side only) + metadata.json with event times.

Six categories, Full-Duplex-Bench folder layout. Overlap cases first ask for a long answer, then place the
overlapping speech a few seconds after the question ends, when Venus is expected to be speaking; the expected
timing is recorded in the metadata so the evaluator can tell whether Venus actually was.

With `--split train|dev|test` the words come from that split of the held-out pools (pools.py), the voices from
that split's espeak-ng variants (test variants are never used for train or dev), pauses are 0.6-2.5 s, and TV and
far-field speech get a varied speaker band, room reverb and noise. Without it the fixed lists and voices are used,
unchanged. With `--user-voice piper` (split cases only) the user speaks with the Piper voice Venus ships, a recorded
human speaker, pitch-shifted by a set of shifts per split and at the drawn rate; everything else (words, timings,
the other voices) is the same case as with espeak-ng, so the two are compared case by case.

Run: .venv/bin/python -m bench.duplex.generate --out bench/out/duplex --per-category 40 --seed 1 [--split dev]
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.duplex import pools
from bench.duplex import scenario_text as text
from bench.duplex.synth import PIPER, PIPER_CENTS_PER_PITCH, SAMPLE_RATE, SpeechCache, Voice, place

CATEGORIES = ("smooth_turn_taking", "pause_handling", "user_interruption", "backchannel", "talking_to_others",
              "background_speech")

USER_VOICES = [Voice("en-us", 165, 50), Voice("en-us+m3", 160, 40), Voice("en-gb", 170, 55),
               Voice("en-us+f2", 165, 60), Voice("en-gb-x-rp+m1", 160, 45)]
OTHER_VOICES = [Voice("en-us+f4", 170, 70), Voice("en+m7", 155, 30), Voice("en-gb-scotland+f3", 165, 65)]
BACKGROUND_VOICES = [Voice("en-029", 175, 45), Voice("en-us-nyc+m2", 180, 35), Voice("en+f5", 170, 75)]
REVERB = ("reverb", "60", "gain", "-n", "-3")

# Split cases: every English accent `espeak-ng --voices=en` lists that renders without mbrola ("en" is en-gb's file);
# West Midlands is heard only in test.
SPLIT_ACCENTS = ("en-us", "en-gb", "en-gb-x-rp", "en-gb-scotland", "en-gb-x-gbclan", "en-029", "en-us-nyc")
TEST_ONLY_ACCENTS = ("en-gb-x-gbcwmd",)
# espeak-ng variants (voices/!v) that whisper tiny.en transcribes at <= 25% word errors on two en-us sentences;
# robot, echo, whisper, croak and "fast" variants left out. Split by variant: no test variant is in train or dev,
# and test has none of the variants the fixed voices above use ("" is the accent's own voice).
SPLIT_VARIANTS = {
    "train": ("", "f2", "f3", "f4", "f5", "aunty", "steph", "Andrea", "grandma", "m1", "m2", "m3", "m5", "m7", "Alex",
              "Denis", "Gene", "Henrique", "Michael", "Mike", "Nguyen", "Storm", "adam", "benjamin", "edward",
              "grandpa", "iven", "iven4", "john", "klatt", "klatt4", "klatt5", "klatt6", "marcelo", "max", "michel",
              "miguel", "pedro", "rob", "ed"),
    "dev": ("belinda", "steph3", "f1", "m6", "Hugo", "klatt2", "paul", "quincy", "edward2", "iven2", "Mario", "travis"),
    "test": ("Annie", "linda", "steph2", "anika", "m4", "m8", "Diogo", "Gene2", "klatt3", "iven3", "robert", "victor",
             "sandro"),
}
# The Piper voice's pitch shifts (cents) by split: test's are none of train's or dev's. Venus answers in this voice
# unshifted, so no shift is 0.
PIPER_SHIFTS = {"train": (-500, -400, 400, 500), "dev": (-300, 300), "test": (-600, -200, 200, 600)}
USER_VOICE_KINDS = ("espeak", "piper")
SPLIT_PAUSE_S = (0.6, 2.5)  # the user's mid-sentence pause in split cases (fixed lists: 0.9-1.5 s)

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
    split: str | None = None  # "train"/"dev"/"test": words, names and voices from that split; None: the fixed lists
    user_voice: str = "espeak"  # "piper": the user speaks with the Piper voice, pitch-shifted (split cases only)

    def __post_init__(self) -> None:
        if self.split is not None and self.split not in pools.SPLITS:
            raise ValueError(f"split must be one of {list(pools.SPLITS)} or None, got {self.split!r}")
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
            effects: tuple[str, ...] = (), snr_db: float | None = None) -> tuple[float, float]:
        voice = voice or self.user
        clip = self.cache.render(words, voice, effects)
        if snr_db is not None:  # the speaker's own hiss and the room around it, mixed in before the level is set
            clip = clip + _at_level(_room_noise(clip.size, self.rng.randrange(2**31)), _rms_db(clip) - snr_db)
        clip = _at_level(clip, USER_RMS_DB + level_db)
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
        track += _at_level(_room_noise(total, seed), noise_db)
        return np.clip(track, -1.0, 1.0)


def _room_noise(size: int, seed: int) -> np.ndarray:
    noise = np.random.default_rng(seed).standard_normal(size).astype(np.float32)
    return np.convolve(noise, np.ones(8, dtype=np.float32) / 8, mode="same")  # duller than white noise


class _FixedSource:
    """The fixed lists of scenario_text.py and the fixed voices: the cases every seed made before the pools."""

    split: str | None = None
    pause_s = (0.9, 1.5)
    _LISTS = {"questions": text.QUESTIONS, "long_requests": text.LONG_REQUESTS, "paused": text.PAUSED,
              "interruptions": text.INTERRUPTIONS, "backchannels": text.BACKCHANNELS,
              "other_addressed": text.OTHER_ADDRESSED, "background": text.BACKGROUND}

    def items(self, category: str) -> list[tuple[str, object]]:
        return [("", item) for item in self._LISTS[category]]

    def user_voice(self, rng: random.Random) -> Voice:
        return rng.choice(USER_VOICES)

    def other_voice(self, rng: random.Random, user: Voice) -> Voice:
        return rng.choice(OTHER_VOICES)

    def background_voice(self, rng: random.Random, user: Voice) -> Voice:
        return rng.choice(BACKGROUND_VOICES)

    def far_field(self, rng: random.Random, tv: bool) -> tuple[tuple[str, ...], float | None]:
        return REVERB, None

    def background_noise_db(self, rng: random.Random) -> float:
        return rng.uniform(-50.0, -44.0)


class _SplitSource:
    """One split of the pools, its names and its voices, with wider pauses and varied far-field speech."""

    pause_s = SPLIT_PAUSE_S

    def __init__(self, split: str, user_voice: str = "espeak") -> None:
        if user_voice not in USER_VOICE_KINDS:
            raise ValueError(f"user_voice must be one of {USER_VOICE_KINDS}, got {user_voice!r}")
        self.split = split
        self.user_voice_kind = user_voice
        accents = SPLIT_ACCENTS + (TEST_ONLY_ACCENTS if split == "test" else ())
        variants = SPLIT_VARIANTS[split]
        self.voices = [f"{a}+{v}" if v else a for a in accents for v in variants]

    def items(self, category: str) -> list[tuple[str, object]]:
        return pools.tagged(category, self.split)

    def _voice(self, rng: random.Random, avoid: Voice | None, rate: tuple[int, int]) -> Voice:
        name = rng.choice(self.voices)
        while avoid is not None and name.partition("+")[2] == avoid.name.partition("+")[2]:  # another timbre
            name = rng.choice(self.voices)
        return Voice(name, rng.randrange(rate[0], rate[1] + 1, 5), rng.randrange(25, 81, 5))

    def user_voice(self, rng: random.Random) -> Voice:
        voice = self._voice(rng, None, (135, 200))
        self._drawn_user = voice  # the others avoid its timbre as in the espeak-ng case: the same draws
        if self.user_voice_kind == "espeak":
            return voice
        # The same draws as an espeak-ng case (same words and timings); the shift follows from the drawn voice
        shifts = PIPER_SHIFTS[self.split]
        cents = shifts[int.from_bytes(voice.name.encode(), "big") % len(shifts)]
        return Voice(PIPER, voice.words_per_minute, 50 + cents // PIPER_CENTS_PER_PITCH)

    def other_voice(self, rng: random.Random, user: Voice) -> Voice:
        return self._voice(rng, self._drawn_user if user.name == PIPER else user, (140, 195))

    def background_voice(self, rng: random.Random, user: Voice) -> Voice:
        return self._voice(rng, self._drawn_user if user.name == PIPER else user, (150, 200))

    def far_field(self, rng: random.Random, tv: bool) -> tuple[tuple[str, ...], float | None]:
        """sox effects for speech across a room (from a TV or radio: through a small speaker too) and its SNR."""
        band = ("highpass", str(rng.randrange(100, 301, 50)), "lowpass", str(rng.randrange(3500, 7001, 500))) if tv \
            else ()
        room = ("reverb", str(rng.randrange(30, 96, 5)), "50", str(rng.randrange(40, 101, 20)), "100",
                str(rng.randrange(0, 41, 10)), "gain", "-n", "-3")
        return band + room, rng.uniform(12.0, 30.0)

    def background_noise_db(self, rng: random.Random) -> float:
        return rng.uniform(-52.0, -40.0)


def _opening(case: _Case, source: _FixedSource | _SplitSource, long_answer: bool) -> float:
    lead = case.rng.uniform(0.4, 1.0)
    _, question = case.rng.choice(source.items("long_requests" if long_answer else "questions"))
    _, end = case.say(question, lead, "user_turn")
    return end


def build_case(category: str, index: int, seed: int, cache: SpeechCache,
               split: str | None = None, user_voice: str = "espeak") -> tuple[np.ndarray, dict]:
    """Render one case of a category; returns the input track and its metadata. `split` None: the fixed lists;
    `user_voice` "piper": the user speaks with the Piper voice (split cases only)."""
    if split is None and user_voice != "espeak":
        raise ValueError("user_voice other than espeak needs a split")
    source = _FixedSource() if split is None else _SplitSource(split, user_voice)
    case_seed = seed * 100_003 + CATEGORIES.index(category) * 1_000 + index
    rng = random.Random(case_seed)
    user = source.user_voice(rng)
    case = _Case(cache, rng, user, 12.0)
    meta: dict = {"category": category, "seed": case_seed, "sample_rate": SAMPLE_RATE, "user_voice": user.name}
    if user.name == PIPER:
        meta["user_voice_pitch_cents"] = (user.pitch - 50) * PIPER_CENTS_PER_PITCH
    if split is not None:
        meta["split"] = split
    noise_db = rng.uniform(-62.0, -52.0)
    if category == "smooth_turn_taking":
        meta["turn_end"] = _opening(case, source, long_answer=False)
        end = meta["turn_end"] + TAIL_S
    elif category == "pause_handling":
        pause_point, (first, second) = rng.choice(source.items("paused"))
        _, pause_start = case.say(first, rng.uniform(0.4, 1.0), "user_turn")
        pause = rng.uniform(*source.pause_s)
        pause_end, meta["turn_end"] = case.say(second, pause_start + pause, "user_turn")
        meta["pause"] = {"start": pause_start, "end": pause_end}
        if split is not None:
            meta["pause"]["after"] = pause_point
        end = meta["turn_end"] + TAIL_S
    else:
        question_end = _opening(case, source, long_answer=True)
        meta["turn_end"] = question_end
        onset = question_end + RESPONSE_DELAY_S + rng.uniform(1.5, 3.0)
        meta["expected_venus_speaking_from"] = round(question_end + RESPONSE_DELAY_S, 3)
        if category == "user_interruption":
            cue, (words, keywords) = rng.choice(source.items("interruptions"))
            start, stop = case.say(words, onset, "overlap")
            meta["keywords"] = list(keywords)
            if split is not None:
                meta["stop_cue"] = cue == "cue"
        elif category == "backchannel":
            backchannels = source.items("backchannels")
            start, stop = case.say(rng.choice(backchannels)[1], onset, "overlap")
            if rng.random() < 0.4:  # a second backchannel a little later
                _, stop = case.say(rng.choice(backchannels)[1], stop + rng.uniform(1.0, 2.0), "overlap")
        elif category == "talking_to_others":
            vocative, (words, reply) = rng.choice(source.items("other_addressed"))
            start, stop = case.say(words, onset, "overlap")
            if split is not None:
                meta["vocative"] = vocative
            if reply and rng.random() < 0.6:
                other = source.other_voice(rng, user)
                gap, level = rng.uniform(0.3, 0.7), rng.uniform(-8.0, -3.0)
                effects, snr = source.far_field(rng, tv=False)
                _, stop = case.say(reply, stop + gap, "other_reply", other, level, effects, snr)
        else:
            voice = source.background_voice(rng, user)
            level = rng.uniform(-22.0, -14.0)
            words = rng.choice(source.items("background"))[1]
            effects, snr = source.far_field(rng, tv=True)
            start, stop = case.say(words, onset, "overlap", voice, level, effects, snr)
            noise_db = source.background_noise_db(rng)
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
            audio, meta = build_case(category, index, options.seed, cache, options.split, options.user_voice)
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
    parser.add_argument("--split", choices=pools.SPLITS, default=None,
                        help="draw words, names and voices from this split of the pools (default: the fixed lists)")
    parser.add_argument("--user-voice", choices=USER_VOICE_KINDS, default="espeak",
                        help="who the user is: espeak-ng voices, or the Piper voice pitch-shifted (needs --split)")
    args = parser.parse_args(argv)
    if args.user_voice != "espeak" and args.split is None:
        parser.error("--user-voice piper needs --split")
    folders = generate(GeneratorOptions(args.out, args.per_category, args.seed, tuple(args.categories), args.cache,
                                        args.split, args.user_voice))
    print(f"wrote {len(folders)} cases under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
