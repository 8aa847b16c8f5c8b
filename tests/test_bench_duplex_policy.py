"""The offline policy bench on real generated cases: espeak-ng speech, whisper tiny.en, the real policies.

whisper's transcripts of the clips the bench asks about are frozen in tests/fixtures/policy_bench_seed1_asr.json
(the bench's own cache, keyed by each clip's bytes): its words differ between CPUs, and what is under test here
is the bench and the policies. A clip whose audio differs from the recorded one is decoded live.
`python tests/test_bench_duplex_policy.py` records the transcripts again.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package

import json
import shutil

import pytest
import soundfile as sf

pytest.importorskip("faster_whisper")

from bench.duplex.generate import GeneratorOptions, generate
from bench.duplex.policy_bench import CachedTranscriber, judge_overlaps, judge_turn_end, summarize
from engine.runtime.overlap import OverlapPolicy
from engine.runtime.turn_taking import EndOfTurnDetector

FROZEN_ASR = Path(__file__).resolve().parent / "fixtures" / "policy_bench_seed1_asr.json"


def _judge(out: Path, asr_cache: Path) -> dict[str, dict]:
    folders = generate(GeneratorOptions(out_dir=out, per_category=1, seed=1))
    asr = CachedTranscriber(asr_cache)
    rows = {}
    for folder in folders:
        meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
        audio, _ = sf.read(folder / "input.wav", dtype="float32")
        row = judge_overlaps(meta, audio, asr, OverlapPolicy()) if "overlap" in meta else \
            judge_turn_end(meta, audio, asr, EndOfTurnDetector())
        rows[meta["category"]] = {"category": meta["category"], **row}
    asr.save()
    return rows


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("cases")
    shutil.copy(FROZEN_ASR, out / "asr-cache.json")
    return _judge(out, out / "asr-cache.json")


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


@pytest.mark.parametrize("category, kind", [("backchannel", "backchannel"), ("talking_to_others", "other_addressee"),
                                            ("background_speech", "background")])
def test_each_overlap_is_judged_as_what_it_is(judged: dict[str, dict], category: str, kind: str) -> None:
    segments = judged[category]["segments"]
    assert segments and all(s["final"] == kind for s in segments), segments


def test_summary_has_the_issue_metrics(judged: dict[str, dict]) -> None:
    summary = summarize(list(judged.values()))
    assert summary["pause_handling"]["false_cut_in_rate"] == 0.0
    assert summary["user_interruption"]["respond_rate"] == 1.0
    assert summary["backchannel"]["continuation_rate"] == 1.0


if __name__ == "__main__":  # record whisper's transcripts of seed 1's clips on this machine
    import tempfile

    FROZEN_ASR.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        _judge(Path(tmp), FROZEN_ASR)
    print(f"wrote {len(json.loads(FROZEN_ASR.read_text(encoding='utf-8')))} transcripts to {FROZEN_ASR}")


def test_a_first_half_heard_as_nothing_is_lost_not_a_cut_in(tmp_path: Path) -> None:
    # The runtime ends no turn on words that decode to nothing (it goes back to listening and says nothing in
    # the pause), so the bench counts that request's first half as lost, apart from the cut-ins.
    import hashlib

    import numpy as np

    from bench.duplex.policy_bench import RATE

    folder = next(f for f in generate(GeneratorOptions(out_dir=tmp_path, per_category=1, seed=1,
                                                       categories=("pause_handling",))))
    meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
    audio, _ = sf.read(folder / "input.wav", dtype="float32")
    first = [e for e in meta["events"] if e["type"] == "user_turn"][0]
    clip = np.ascontiguousarray(audio[int(first["start"] * RATE): int(first["end"] * RATE)], dtype=np.float32)
    cache = json.loads(FROZEN_ASR.read_text(encoding="utf-8"))
    cache[hashlib.sha1(clip.tobytes()).hexdigest()] = ""  # whisper heard nothing in the first half
    (tmp_path / "asr.json").write_text(json.dumps(cache), encoding="utf-8")
    from engine.runtime.turn_taking import EndOfTurnOptions

    short_wait = EndOfTurnDetector(options=EndOfTurnOptions(max_silence_ms=500))  # the pause outlasts "no words"
    row = judge_turn_end(meta, audio, CachedTranscriber(tmp_path / "asr.json"), short_wait)
    assert meta["pause"]["end"] - meta["pause"]["start"] > 0.5
    assert row["first_part"] == "" and row["first_part_lost"] and row["false_cut_in"] is False, row
    summary = summarize([{"category": "pause_handling", **row}])["pause_handling"]
    assert summary["false_cut_in_rate"] == 0.0 and summary["first_part_heard_as_nothing"] == 1
