"""`venus duplex` on generated scenarios, three of each category: every case is judged against bounds near the targets.

The scenarios are the benchmark's own (bench/duplex): espeak-ng voices, sox levels and reverb, seeded. Venus
runs in real time through the real CLI (LLM, whisper, Piper, policies); the evaluator reads only output.wav.
The targets (docs/BENCHMARKS.md) are medians and rates over 40 cases: a response 0.8 s after the user's turn ends,
a stop 0.3 s after an interruption begins. Here cases must come within RESPONSE_BOUND_S / STOP_BOUND_S (on a quiet
2-core machine these cases measured responses of 0.63-0.97 s and stops of 0.21-0.29 s); a loaded machine misses
them, as a user would notice. Of three cases a category one may miss where the miss is whisper tiny's reading of
one voice, which differs between CPUs (each test says so); the rates are measured in bench/, not here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.duplex.evaluate import CONTINUATION_CATEGORIES, evaluate_dir
from bench.duplex.generate import CATEGORIES, GeneratorOptions, generate

PER_CATEGORY = 3  # cases per category, seeded: the same scenarios on every run
SEED = 7  # on this machine every overlap case of this seed begins while Venus is speaking
RESPONSE_BOUND_S = 1.2  # any one case: the answer starts this soon after the user's turn ends (target 0.8 median)
LATE_RESPONSE_S = 2.0  # the one late answer allowed (smooth turn-taking) still starts this soon
STOP_BOUND_S = 0.5  # any one case: Venus is silent this soon after an interruption begins (target 0.3 median)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("duplex")
    generate(GeneratorOptions(out_dir=root, per_category=PER_CATEGORY, seed=SEED))
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
    # An overlap case is judged only where Venus was speaking at its onset. How long her answer runs is the
    # 135M model's decode of whisper's words, which another CPU's kernels can change (with CTranslate2 on AVX-512
    # one answer of background_speech ended 7.26 s in, before the overlap): two of three must be judged, and
    # every judged case must pass.
    judged = [r for r in results[category] if r.applicable]
    assert len(judged) >= PER_CATEGORY - 1, [(r.case, r.notes) for r in results[category]]
    return judged


def test_every_category_ran(results) -> None:
    assert set(results) - {"_root"} == set(CATEGORIES)
    assert all(len(results[c]) == PER_CATEGORY for c in CATEGORIES)


def test_smooth_turn_taking_answers_soon_after_the_question(results) -> None:
    # every question is answered; on a busy 2-core machine one answer may start late (1.25 s was measured), but
    # not as late as a user would take for a missed turn
    for r in results["smooth_turn_taking"]:
        assert r.took_over, (r.case, r.notes)
        assert 0 < r.response_latency_s <= LATE_RESPONSE_S, (r.case, r.response_latency_s)
    late = [(r.case, r.response_latency_s) for r in results["smooth_turn_taking"]
            if r.response_latency_s > RESPONSE_BOUND_S]
    assert len(late) <= 1, late


def test_a_mid_sentence_pause_is_not_cut_into_and_the_request_is_answered_soon(results) -> None:
    for r in results["pause_handling"]:
        assert r.false_cut_in is False, (r.case, r.notes)
        assert r.took_over, (r.case, r.notes)  # and the whole request is answered
        assert 0 < r.response_latency_s <= RESPONSE_BOUND_S, (r.case, r.response_latency_s)


def test_an_interruption_stops_venus_near_the_target_and_gets_an_answer(results) -> None:
    # The target is a rate (respond 0.95 over 40 cases), and whisper tiny's early partials of one voice differ
    # between CPUs (CI heard case 002's "Hang on, ..." as "Hey, honey.", a call to someone else, where this
    # machine heard "Turn your arm"): one case may miss, as in the continuation test below, but no more.
    judged = _judged(results, "user_interruption")
    missed = [(r.case, r.behavior, r.stop_latency_s, r.notes) for r in judged
              if not (r.stopped and r.stop_latency_s <= STOP_BOUND_S and r.responded)]
    assert len(missed) <= 1, missed


def test_venus_keeps_talking_through_speech_not_meant_to_stop_it(results) -> None:
    # The targets are rates (backchannel 0.97, talking to others 0.92, background 0.92 over 40 cases each): at
    # them, about half a case in these nine is expected to stop Venus, and on a busy 2-core machine a paused
    # voice whose words come late counts as stopped too (a pause of 0.96 s for "Oh, wow." heard first as
    # "So...", in a fresh-clone run where "Uh-huh" was also heard as "I'm sorry."). Allowing one, the test failed
    # about one run in six at these rates; two of nine still fails a policy that stops for a third of them.
    judged = [r for category in CONTINUATION_CATEGORIES for r in _judged(results, category)]
    stopped = [(r.case, r.behavior, r.notes) for r in judged if not r.continued]
    assert len(stopped) <= 2, stopped


def test_output_is_16k_mono_and_at_least_as_long_as_the_input(results) -> None:
    import soundfile as sf

    cases = [p for p in Path(results["_root"]).iterdir() if p.is_dir()]
    assert len(cases) == len(CATEGORIES) * PER_CATEGORY
    for case in cases:
        out, inp = sf.info(str(case / "output.wav")), sf.info(str(case / "input.wav"))
        assert out.samplerate == 16000 and out.channels == 1
        assert out.duration >= inp.duration
