"""`venus duplex` on generated scenarios, two of each category: the outcome of each case is asserted.

The scenarios are the benchmark's own (bench/duplex): espeak-ng voices, sox levels and reverb, seeded. Venus
runs in real time through the real CLI (LLM, whisper, Piper, policies); the evaluator reads only output.wav.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.duplex.evaluate import evaluate_dir
from bench.duplex.generate import CATEGORIES, GeneratorOptions, generate

PER_CATEGORY = 2  # cases per category, seeded: the same twelve scenarios on every run


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("duplex")
    generate(GeneratorOptions(out_dir=root, per_category=PER_CATEGORY, seed=7))
    proc = subprocess.run([sys.executable, "-m", "app.cli", "duplex", "--input-dir", str(root), "--drain", "3"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for case in root.iterdir():
        if case.is_dir():
            assert (case / "output.wav").exists() and (case / "timeline.jsonl").exists()
    by_category: dict = {}
    for r in evaluate_dir(root):
        by_category.setdefault(r.category, []).append(r)
    by_category["_root"] = root
    return by_category


def _judged(results, category: str) -> list:
    # an overlap case is judged only where Venus was speaking at its onset; one of two at least must be
    judged = [r for r in results[category] if r.applicable]
    assert judged, [(r.case, r.notes) for r in results[category]]
    return judged


def test_every_category_ran(results) -> None:
    assert set(results) - {"_root"} == set(CATEGORIES)
    assert all(len(results[c]) == PER_CATEGORY for c in CATEGORIES)


def test_smooth_turn_taking_answers_after_the_question(results) -> None:
    for r in results["smooth_turn_taking"]:
        assert r.took_over, (r.case, r.notes)
        assert 0 < r.response_latency_s < 2.0, (r.case, r.response_latency_s)


def test_a_mid_sentence_pause_is_not_cut_into(results) -> None:
    for r in results["pause_handling"]:
        assert r.false_cut_in is False, (r.case, r.notes)
        assert r.took_over, (r.case, r.notes)  # and the whole request is answered


def test_an_interruption_stops_venus_within_a_second_and_gets_an_answer(results) -> None:
    for r in _judged(results, "user_interruption"):
        assert r.stopped and r.stop_latency_s < 1.0, (r.case, r.behavior, r.stop_latency_s)
        assert r.responded, (r.case, r.notes)


@pytest.mark.parametrize("category", ["backchannel", "talking_to_others", "background_speech"])
def test_venus_keeps_talking_through_speech_not_meant_to_stop_it(results, category: str) -> None:
    for r in _judged(results, category):
        assert r.continued, (r.case, r.behavior, r.notes)


def test_output_is_16k_mono_and_at_least_as_long_as_the_input(results) -> None:
    import soundfile as sf

    cases = [p for p in Path(results["_root"]).iterdir() if p.is_dir()]
    assert len(cases) == len(CATEGORIES) * PER_CATEGORY
    for case in cases:
        out, inp = sf.info(str(case / "output.wav")), sf.info(str(case / "input.wav"))
        assert out.samplerate == 16000 and out.channels == 1
        assert out.duration >= inp.duration
