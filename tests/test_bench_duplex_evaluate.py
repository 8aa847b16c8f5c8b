"""The duplex evaluator on hand-built output.wav files whose right answers are known by construction."""

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

from bench.duplex.evaluate import (  # noqa: E402
    EvaluatorOptions,
    evaluate_dir,
    judge,
    load_mono_16k,
    speech_segments,
    summarize,
)
from bench.duplex.generate import CATEGORIES, GeneratorOptions, generate  # noqa: E402
from bench.duplex.reference import RESPONSE_GAP_S, STOP_AFTER_S, VENUS_VOICE, write_reference  # noqa: E402
from bench.duplex.run import markdown, update_docs  # noqa: E402
from bench.duplex.synth import SAMPLE_RATE, SpeechCache, place  # noqa: E402

TIMING_ONLY = EvaluatorOptions(use_asr=False)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> SpeechCache:
    return SpeechCache(tmp_path_factory.mktemp("speech"))


@pytest.fixture()
def cases(tmp_path: Path, cache: SpeechCache) -> Path:
    generate(GeneratorOptions(tmp_path / "cases", per_category=2, seed=3, cache_dir=cache.folder))
    return tmp_path / "cases"


def test_speech_segments_find_clips_where_they_were_placed(cache: SpeechCache) -> None:
    track = np.zeros(8 * SAMPLE_RATE, dtype=np.float32)
    first = place(track, cache.render("Hello there, how are you?", VENUS_VOICE) * 0.5, 1.0)
    second = place(track, cache.render("I am fine thanks", VENUS_VOICE) * 0.15, 5.0)  # ducked, still speech
    segments = speech_segments(track)
    assert len(segments) == 2
    for (start, end), (want_start, want_end) in zip(segments, (first, second), strict=True):
        assert abs(start - want_start) < 0.03  # onsets are sharp
        assert want_end - 0.25 < end <= want_end + 0.03  # espeak's trailing decay falls under the gate early


def test_ideal_responder_scores_known_numbers(cases: Path, cache: SpeechCache) -> None:
    write_reference(cases, "ideal", cache)
    summary = summarize(evaluate_dir(cases, TIMING_ONLY))
    assert set(summary) == set(CATEGORIES)
    assert summary["smooth_turn_taking"]["take_over_rate"] == 1.0
    assert summary["smooth_turn_taking"]["median_response_latency_s"] == pytest.approx(RESPONSE_GAP_S, abs=0.03)
    assert summary["pause_handling"]["false_cut_in_rate"] == 0.0
    assert summary["user_interruption"]["respond_rate"] == 1.0
    assert summary["user_interruption"]["median_stop_latency_s"] == pytest.approx(STOP_AFTER_S, abs=0.03)
    assert summary["user_interruption"]["median_response_latency_s"] == pytest.approx(RESPONSE_GAP_S, abs=0.03)
    for category in ("backchannel", "talking_to_others", "background_speech"):
        assert summary[category]["continuation_rate"] == 1.0 and summary[category]["judged"] == 2
    # every case wrote its verdict beside its audio
    verdict = json.loads((cases / "backchannel_000" / "result.json").read_text())
    assert verdict["behavior"] == "continue" and verdict["stopped"] is False


def test_naive_responder_cuts_in_and_yields_to_everything(cases: Path, cache: SpeechCache) -> None:
    write_reference(cases, "naive", cache)
    summary = summarize(evaluate_dir(cases, TIMING_ONLY))
    assert summary["pause_handling"]["false_cut_in_rate"] == 1.0
    assert summary["user_interruption"]["respond_rate"] == 1.0
    for category in ("backchannel", "talking_to_others", "background_speech"):
        assert summary[category]["continuation_rate"] == 0.0
        assert summary[category]["median_stop_latency_s"] == pytest.approx(STOP_AFTER_S, abs=0.03)
    table = markdown(summary, "naive")
    assert "| pause_handling | 2 (2) | false_cut_in_rate | 1.000 | <= 0.05 | no |" in table


def _meta(category: str, **extra) -> dict:
    return {"id": "x", "category": category, "turn_end": 2.0, **extra}


def test_silence_at_the_overlap_onset_is_not_judged() -> None:
    meta = _meta("backchannel", overlap={"start": 5.0, "end": 5.5})
    result = judge(meta, [(2.5, 4.0)], None, TIMING_ONLY)
    assert not result.applicable and result.behavior == "n/a" and "not speaking" in result.notes[0]
    assert summarize([result])["backchannel"]["continuation_rate"] is None


def test_stopping_without_answering_is_not_a_response() -> None:
    meta = _meta("user_interruption", overlap={"start": 5.0, "end": 6.5})
    result = judge(meta, [(2.6, 5.4)], None, TIMING_ONLY)
    assert result.stopped and not result.responded and result.stop_latency_s == pytest.approx(0.4)
    assert result.behavior == "stop"


def test_talking_over_an_interruption_is_neither_stop_nor_response() -> None:
    meta = _meta("user_interruption", overlap={"start": 5.0, "end": 6.5})
    result = judge(meta, [(2.6, 4.9), (5.2, 9.0)], None, TIMING_ONLY)  # a short clause gap is not a stop
    assert result.stopped is False and result.responded is False and result.behavior == "continue"


def test_late_answer_and_cut_in_during_a_pause() -> None:
    meta = _meta("pause_handling", pause={"start": 1.0, "end": 2.2})
    late = judge(meta, [(3.5, 5.0)], None, TIMING_ONLY)
    assert late.took_over and late.response_latency_s == pytest.approx(1.5) and not late.false_cut_in
    cut_in = judge(meta, [(1.6, 3.0)], None, TIMING_ONLY)
    assert cut_in.false_cut_in
    silent = judge(meta, [], None, TIMING_ONLY)
    assert silent.took_over is False and silent.behavior == "silent"


@pytest.mark.slow
def test_asr_tells_a_finished_answer_from_a_cut_one(tmp_path: Path, cache: SpeechCache) -> None:
    """With ASR: an answer that ends on a full sentence during a backchannel is 'finished', not stopped."""
    folder = tmp_path / "cases" / "backchannel_000"
    folder.mkdir(parents=True)
    track = np.zeros(10 * SAMPLE_RATE, dtype=np.float32)
    _, answer_end = place(track, cache.render("Paris is the capital of France.", VENUS_VOICE) * 0.5, 2.5)
    meta = _meta("backchannel", overlap={"start": answer_end - 0.5, "end": answer_end + 0.5}, duration_s=10.0)
    (folder / "metadata.json").write_text(json.dumps(meta))
    sf.write(folder / "output.wav", track, SAMPLE_RATE)
    [result] = evaluate_dir(tmp_path / "cases", EvaluatorOptions())
    assert "capital" in result.transcript.lower() and "france" in result.transcript.lower()
    assert result.behavior == "finished" and result.continued


def test_bad_inputs_say_what_to_do(tmp_path: Path) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    sf.write(folder / "output.wav", np.zeros(800, dtype=np.float32), 8000)
    with pytest.raises(ValueError, match="16 kHz"):
        load_mono_16k(folder / "output.wav")
    (folder / "metadata.json").write_text(json.dumps(_meta("smooth_turn_taking")))
    (folder / "output.wav").unlink()
    with pytest.raises(FileNotFoundError, match="venus duplex --input-dir"):
        evaluate_dir(tmp_path, TIMING_ONLY)
    with pytest.raises(FileNotFoundError, match="no cases"):
        evaluate_dir(tmp_path / "empty", TIMING_ONLY)
    with pytest.raises(ValueError):
        EvaluatorOptions(merge_gap_s=1.0, stop_gap_s=0.5)


def test_docs_section_is_replaced_not_duplicated(tmp_path: Path) -> None:
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# Benchmarks\n\nOther numbers.\n")
    update_docs("table one\n", "ideal", doc)
    update_docs("table two\n", "ideal", doc)
    text = doc.read_text()
    assert "Other numbers." in text and "table two" in text and "table one" not in text
    assert text.count("<!-- duplex:ideal -->") == 1
