"""The scenario generator: deterministic, all six categories, and event times that match the audio."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package

import json
import shutil

import numpy as np
import pytest
import soundfile as sf

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("sox") is None,
                                reason="espeak-ng and sox are needed to synthesize speech")

from bench.duplex.generate import CATEGORIES, GeneratorOptions, generate  # noqa: E402
from bench.duplex.synth import SAMPLE_RATE  # noqa: E402


def _level_db(audio: np.ndarray, start: float, end: float) -> float:
    part = audio[int(start * SAMPLE_RATE) : int(end * SAMPLE_RATE)].astype(np.float64)
    return float(10 * np.log10(np.mean(part**2) + 1e-12))


def test_cases_are_deterministic_and_complete(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = generate(GeneratorOptions(tmp_path / "a", per_category=2, seed=5, cache_dir=cache))
    second = generate(GeneratorOptions(tmp_path / "b", per_category=2, seed=5, cache_dir=cache))
    other_seed = generate(GeneratorOptions(tmp_path / "c", per_category=2, seed=6, cache_dir=cache))
    assert len(first) == 2 * len(CATEGORIES)
    assert {f.name.rsplit("_", 1)[0] for f in first} == set(CATEGORIES)
    for a, b in zip(first, second, strict=True):
        assert (a / "input.wav").read_bytes() == (b / "input.wav").read_bytes()
        assert (a / "metadata.json").read_text() == (b / "metadata.json").read_text()
    assert any((a / "input.wav").read_bytes() != (c / "input.wav").read_bytes()
               for a, c in zip(first, other_seed, strict=True))


def test_event_times_match_the_audio(tmp_path: Path) -> None:
    for folder in generate(GeneratorOptions(tmp_path, per_category=2, seed=2, cache_dir=tmp_path / "cache")):
        meta = json.loads((folder / "metadata.json").read_text())
        audio, rate = sf.read(folder / "input.wav", dtype="float32")
        assert rate == SAMPLE_RATE and audio.ndim == 1
        assert meta["duration_s"] == pytest.approx(audio.size / SAMPLE_RATE, abs=0.01)
        floor = _level_db(audio, 0.0, meta["events"][0]["start"] - 0.05)  # room noise before anyone speaks
        for event in meta["events"]:
            assert 0 <= event["start"] < event["end"] <= meta["duration_s"]
            margin = 6 if event["level_db"] <= -10 else 15  # background speech sits only a little over the noise
            assert _level_db(audio, event["start"], event["end"]) > floor + margin, (folder.name, event)
        assert meta["duration_s"] - meta["events"][-1]["end"] >= 5.9  # room for Venus to answer
        if "overlap" in meta:
            # overlaps come while Venus is expected to be talking, a while after its answer began
            assert meta["overlap"]["start"] >= meta["expected_venus_speaking_from"] + 1.4
        if meta["category"] == "pause_handling":
            pause = meta["pause"]
            assert 0.85 <= pause["end"] - pause["start"] <= 1.55
            assert _level_db(audio, pause["start"] + 0.05, pause["end"] - 0.05) < floor + 6
        if meta["category"] == "background_speech":
            assert meta["events"][-1]["level_db"] <= -14.0


def test_bad_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="per_category"):
        GeneratorOptions(tmp_path, per_category=0)
    with pytest.raises(ValueError, match="unknown categories"):
        GeneratorOptions(tmp_path, categories=("karaoke",))
