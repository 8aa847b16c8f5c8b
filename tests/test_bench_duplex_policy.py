"""The offline policy bench on real generated cases: espeak-ng speech, whisper tiny.en, the real policies."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package

import json

import pytest
import soundfile as sf

pytest.importorskip("faster_whisper")

from bench.duplex.generate import GeneratorOptions, generate
from bench.duplex.policy_bench import CachedTranscriber, judge_overlaps, judge_turn_end, summarize
from engine.runtime.overlap import OverlapPolicy
from engine.runtime.turn_taking import EndOfTurnDetector


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("cases")
    folders = generate(GeneratorOptions(out_dir=out, per_category=1, seed=1))
    asr = CachedTranscriber(out / "asr-cache.json")
    rows = {}
    for folder in folders:
        meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
        audio, _ = sf.read(folder / "input.wav", dtype="float32")
        row = judge_overlaps(meta, audio, asr, OverlapPolicy()) if "overlap" in meta else \
            judge_turn_end(meta, audio, asr, EndOfTurnDetector())
        rows[meta["category"]] = {"category": meta["category"], **row}
    asr.save()
    assert (out / "asr-cache.json").stat().st_size > 0
    return rows


def test_a_complete_question_is_answered_after_a_short_silence(judged: dict[str, dict]) -> None:
    assert judged["smooth_turn_taking"]["required_silence_ms"] <= 400, judged["smooth_turn_taking"]


def test_a_mid_sentence_pause_does_not_end_the_turn(judged: dict[str, dict]) -> None:
    row = judged["pause_handling"]
    assert row["false_cut_in"] is False, row


def test_an_interruption_stops_by_the_deadline(judged: dict[str, dict]) -> None:
    row = judged["user_interruption"]
    assert row["interrupted"] and row["stop_ms"] is not None and row["stop_ms"] <= 300, row


@pytest.mark.parametrize("category", ["backchannel", "talking_to_others", "background_speech"])
def test_overlaps_that_claim_nothing_let_venus_go_on(judged: dict[str, dict], category: str) -> None:
    assert not judged[category]["interrupted"], judged[category]["segments"]


def test_summary_has_the_issue_metrics(judged: dict[str, dict]) -> None:
    summary = summarize(list(judged.values()))
    assert summary["pause_handling"]["false_cut_in_rate"] == 0.0
    assert summary["user_interruption"]["respond_rate"] == 1.0
    assert summary["backchannel"]["continuation_rate"] == 1.0
