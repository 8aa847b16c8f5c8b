"""`venus duplex` on generated scenarios, one of each category: the outcome of each case is asserted.

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


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("duplex")
    generate(GeneratorOptions(out_dir=root, per_category=1, seed=7))
    proc = subprocess.run([sys.executable, "-m", "app.cli", "duplex", "--input-dir", str(root), "--drain", "3"],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for case in root.iterdir():
        if case.is_dir():
            assert (case / "output.wav").exists() and (case / "timeline.jsonl").exists()
    by_category = {r.category: r for r in evaluate_dir(root)}
    by_category["_root"] = root
    return by_category


def test_every_category_ran(results) -> None:
    assert set(results) - {"_root"} == set(CATEGORIES)


def test_smooth_turn_taking_answers_after_the_question(results) -> None:
    r = results["smooth_turn_taking"]
    assert r.took_over, r.notes
    assert 0 < r.response_latency_s < 3.0


def test_a_mid_sentence_pause_is_not_cut_into(results) -> None:
    r = results["pause_handling"]
    assert r.false_cut_in is False, r.notes


# Known shortfall (issue 5 stays open): with the 135M model on 2 shared cores the answer can start too late
# for the overlap to land while Venus speaks, and the policy misjudges some overlaps. These assertions run
# and report; they do not gate CI until the duplex targets are met.
_KNOWN_SHORTFALL = pytest.mark.xfail(strict=False, reason="duplex targets not met yet (see docs/BENCHMARKS.md)")


@_KNOWN_SHORTFALL
def test_an_interruption_stops_venus_and_gets_an_answer(results) -> None:
    r = results["user_interruption"]
    assert r.applicable, r.notes
    assert r.stopped and r.stop_latency_s < 1.0, (r.behavior, r.stop_latency_s)
    assert r.responded, r.notes


@_KNOWN_SHORTFALL
@pytest.mark.parametrize("category", ["backchannel", "talking_to_others", "background_speech"])
def test_venus_keeps_talking_through_speech_not_meant_to_stop_it(results, category: str) -> None:
    r = results[category]
    assert r.applicable, r.notes
    assert r.continued, (r.behavior, r.notes)


def test_output_is_16k_mono_and_at_least_as_long_as_the_input(results) -> None:
    import soundfile as sf

    cases = [p for p in Path(results["_root"]).iterdir() if p.is_dir()]
    assert len(cases) == len(CATEGORIES)
    for case in cases:
        out, inp = sf.info(str(case / "output.wav")), sf.info(str(case / "input.wav"))
        assert out.samplerate == 16000 and out.channels == 1
        assert out.duration >= inp.duration
