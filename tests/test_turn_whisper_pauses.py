"""End of turn on whisper's own finals: the speech before a mid-sentence pause, and complete questions.

The inputs are whisper tiny.en's pre-finals of the duplex benchmark's seed-111 pause and question turns (espeak-ng
voices, sox reverb and room noise), decoded with the turn beam (`asr.turn_beam_size`) as the pipeline's
pre-final does, frozen in tests/fixtures/turn_prefinals_seed111.json: whisper's words and probabilities differ
between CPUs, and what is under test here is the detector, not whisper. The live comparisons (greedy against
the beam, other seeds) are bench/duplex/turn_end_bench.py's; `python tests/test_turn_whisper_pauses.py` records
the fixture again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engine.runtime.turn_taking import EndOfTurnDetector

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "turn_prefinals_seed111.json"
PAD_S = 0.25  # the VAD's padding after the last voiced frame, which the pre-final decodes with


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    """Seed 111's 20 pause and 20 question turns (the seed whose live run cut into 4 of 40 pauses), each with
    the words said before the pause (or the question), the pause length, and whisper's text and last-word
    probability."""
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]


def _required(case: dict) -> int:
    return EndOfTurnDetector().decide(0, case["text"], is_final=True,
                                      last_word_probability=case["last_p"]).required_silence_ms


def test_speech_before_a_mid_sentence_pause_is_waited_through(cases) -> None:
    assert sum(c["category"] == "pause_handling" for c in cases) == 20
    cut_in = [(c["text"], c["last_p"]) for c in cases
              if c["category"] == "pause_handling" and _required(c) < c["pause_s"] * 1000]
    assert len(cut_in) <= 1, cut_in  # the floor: false cut-in during pauses <= 5%


def test_complete_questions_still_end_after_a_short_silence(cases) -> None:
    questions = [c for c in cases if c["category"] == "smooth_turn_taking"]
    assert len(questions) == 20
    slow = [(q["text"], q["last_p"], _required(q)) for q in questions if _required(q) > 800]
    assert len(slow) <= 2, slow


def _record() -> None:
    """Decode seed 111's turns with this machine's whisper and write the fixture (reviewed by hand, then kept)."""
    import platform
    import tempfile

    import soundfile as sf

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package
    from bench.duplex.generate import GeneratorOptions, generate
    from engine.audio import make_transcriber
    from engine.settings import Settings

    settings = Settings()
    transcriber = make_transcriber(settings)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        generate(GeneratorOptions(out_dir=Path(tmp), per_category=20, seed=111,
                                  categories=("pause_handling", "smooth_turn_taking")))
        for case in sorted(p for p in Path(tmp).iterdir() if p.is_dir()):
            meta = json.loads((case / "metadata.json").read_text(encoding="utf-8"))
            audio, rate = sf.read(case / "input.wav", dtype="float32")
            turns = [e for e in meta["events"] if e["type"] == "user_turn"]
            begin = turns[0]["start"] - 0.2
            pause = meta.get("pause")
            end = pause["start"] if pause else meta["turn_end"]
            row = {"case": case.name, "category": meta["category"], "said": turns[0]["text"],
                   "pause_s": round(pause["end"] - pause["start"], 3) if pause else None}
            heard = transcriber.transcribe(audio[int(begin * rate): int((end + PAD_S) * rate)],
                                           word_timestamps=True, beam_size=settings.asr.turn_beam_size)
            row.update(text=heard.text, last_p=round(heard.words[-1].probability, 3) if heard.words else None)
            rows.append(row)
    provenance = (f"whisper-tiny-en pre-finals (beam {settings.asr.turn_beam_size}) of bench.duplex seed 111, "
                  f"20 pause_handling + 20 smooth_turn_taking cases, recorded on {platform.machine()} by "
                  f"`python tests/test_turn_whisper_pauses.py`")
    lines = ",\n  ".join(json.dumps(row) for row in rows)  # one case a line, for readable diffs
    FIXTURE.write_text(f'{{"provenance": {json.dumps(provenance)},\n "cases": [\n  {lines}\n]}}\n', encoding="utf-8")
    print(f"wrote {len(rows)} cases to {FIXTURE}")


if __name__ == "__main__":
    _record()
