"""End of turn on whisper's own finals: the speech before a mid-sentence pause, and complete questions.

The scenarios are the duplex benchmark's (espeak-ng voices, sox reverb and room noise, seeded); whisper tiny.en
decodes each user turn up to its pause (or its end) as the pipeline's pre-final does (with the turn's beam,
`asr.turn_beam_size`), and the detector says how much silence it would wait. Cut-off speech often decodes as a
complete-looking sentence ("My flight leaves at" -> "My flight lead net."), whose last word whisper is unsure of:
that uncertainty holds the turn open. Greedy decoding makes more of these ("How much does it cost to fly to" ->
"How much does it cost of light?", a question whisper is sure enough of), which the beam hears right.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package

import pytest
import soundfile as sf

from bench.duplex.generate import GeneratorOptions, generate
from engine.audio import make_transcriber
from engine.runtime.turn_taking import EndOfTurnDetector
from engine.settings import Settings

PAD_S = 0.25  # the VAD's padding after the last voiced frame, which the pre-final decodes with


@pytest.fixture(scope="module")
def decoded(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[tuple[str, str, float | None, float | None]]]:
    """Seed 111's pause and question turns (the seed whose live run cut into 4 of 40 pauses), decoded greedily
    and with the turn beam."""
    root = tmp_path_factory.mktemp("pauses")
    generate(GeneratorOptions(out_dir=root, per_category=20, seed=111,
                              categories=("pause_handling", "smooth_turn_taking")))
    transcriber = make_transcriber(Settings())
    beams = (1, Settings().asr.turn_beam_size)
    rows: dict[int, list] = {beam: [] for beam in beams}
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        meta = json.loads((case / "metadata.json").read_text())
        audio, rate = sf.read(case / "input.wav", dtype="float32")
        assert rate == 16000 and audio.ndim == 1
        begin = min(e["start"] for e in meta["events"] if e["type"] == "user_turn") - 0.2
        pause = meta.get("pause")
        end = pause["start"] if pause else meta["turn_end"]
        for beam in beams:
            transcript = transcriber.transcribe(audio[int(begin * rate): int((end + PAD_S) * rate)],
                                                word_timestamps=True, beam_size=beam)
            last_p = transcript.words[-1].probability if transcript.words else None
            rows[beam].append((meta["category"], transcript.text, last_p,
                               pause["end"] - pause["start"] if pause else None))
    return rows


@pytest.fixture(scope="module")
def finals(decoded) -> list[tuple[str, str, float | None, float | None]]:
    return decoded[Settings().asr.turn_beam_size]


def _required(text: str, last_p: float | None, *, use_last_word: bool = True) -> int:
    return EndOfTurnDetector().decide(0, text, is_final=True,
                                      last_word_probability=last_p if use_last_word else None).required_silence_ms


def test_speech_before_a_mid_sentence_pause_is_waited_through(finals) -> None:
    paused = [(text, p, pause) for category, text, p, pause in finals if category == "pause_handling"]
    assert len(paused) == 20
    cut_in = [(text, p, pause) for text, p, pause in paused if _required(text, p) < pause * 1000]
    assert len(cut_in) <= 1, cut_in  # the floor: false cut-in during pauses <= 5%


def test_the_last_words_probability_holds_greedy_finals_through_the_pause(decoded) -> None:
    # with greedy decoding (asr.turn_beam_size 1) whisper's uncertainty is what holds these: the words alone
    # would cut into more of them
    paused = [(text, p, pause) for category, text, p, pause in decoded[1] if category == "pause_handling"]
    cut_in = [(text, p) for text, p, pause in paused if _required(text, p) < pause * 1000]
    words_only = [(text, p) for text, p, pause in paused if _required(text, p, use_last_word=False) < pause * 1000]
    assert len(words_only) > len(cut_in), words_only


def test_complete_questions_still_end_after_a_short_silence(finals) -> None:
    questions = [(text, p) for category, text, p, _ in finals if category == "smooth_turn_taking"]
    assert len(questions) == 20
    slow = [(text, p, _required(text, p)) for text, p in questions if _required(text, p) > 800]
    assert len(slow) <= 2, slow


def test_the_turn_beam_cuts_into_fewer_pauses_than_greedy_decoding(decoded) -> None:
    def cut_ins(rows) -> list:
        return [(text, p) for category, text, p, pause in rows
                if category == "pause_handling" and _required(text, p) < pause * 1000]

    greedy, beam = cut_ins(decoded[1]), cut_ins(decoded[Settings().asr.turn_beam_size])
    assert len(beam) < len(greedy), (beam, greedy)
