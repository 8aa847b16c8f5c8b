"""Speech over Venus in two bursts: the second burst, before its words are in, is taken for more of the first.

Through the real `venus duplex` (LLM, whisper, Piper, policies, real time): a vocative and a pause then the
request to that person keeps Venus talking; a backchannel and then a stop cue still stops it.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile as sf

from bench.duplex.evaluate import evaluate_dir
from bench.duplex.generate import RESPONSE_DELAY_S, TAIL_S, USER_VOICES, _Case
from bench.duplex.synth import SAMPLE_RATE, SpeechCache

QUESTION = "Explain how airplanes stay in the air."
SCENARIOS = {
    # "Mom," then, after a breath that closes the VAD segment, the request to her. (A household word: whisper
    # tiny, on this voice, hears "John," alone as "God.", "Dad." or "Jog."; hearing names is tested in
    # test_speech_streaming.py, this is about the burst that follows one.)
    "talking_to_others": (("Mom,", 0.0), ("can you grab the mail?", 0.45)),
    # a backchannel, then the user takes the floor: the follow-on burst must still stop Venus
    "user_interruption": (("Mm-hmm.", 0.0), ("Wait, stop. What time is it now?", 0.6)),
}


def _write_case(root: Path, category: str, cache: SpeechCache) -> None:
    rng = random.Random(5)
    case = _Case(cache, rng, USER_VOICES[0], 12.0)
    _, question_end = case.say(QUESTION, 0.6, "user_turn")
    onset = question_end + RESPONSE_DELAY_S + 2.5
    start = end = onset
    for i, (words, gap) in enumerate(SCENARIOS[category]):
        begin, end = case.say(words, end + gap if i else onset, "overlap")
        start = begin if i == 0 else start
    audio = case.finish(end + TAIL_S, -58.0, 5)
    folder = root / f"{category}_000"
    folder.mkdir(parents=True)
    sf.write(folder / "input.wav", audio, SAMPLE_RATE, subtype="PCM_16")
    meta = {"category": category, "seed": 5, "sample_rate": SAMPLE_RATE, "id": folder.name,
            "turn_end": round(question_end, 3), "expected_venus_speaking_from": round(question_end + RESPONSE_DELAY_S, 3),
            "overlap": {"start": round(start, 3), "end": round(end, 3), "kind": category},
            "duration_s": round(audio.size / SAMPLE_RATE, 3), "events": case.events}
    if category == "user_interruption":
        meta["keywords"] = ["time"]
    (folder / "metadata.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("follow-on")
    cache = SpeechCache(root / "speech-cache")
    for category in SCENARIOS:
        _write_case(root, category, cache)
    proc = subprocess.run([sys.executable, "-m", "app.cli", "duplex", "--input-dir", str(root), "--drain", "3"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {r.category: r for r in evaluate_dir(root)}
    for category in SCENARIOS:
        lines = (root / f"{category}_000" / "timeline.jsonl").read_text(encoding="utf-8").splitlines()
        decisions = [json.loads(x) for x in lines if '"overlap_decision"' in x]
        results[f"{category}:decisions"] = [(d["verdict"], d["reason"]) for d in decisions]
    return results


def test_a_vocative_then_the_request_to_that_person_keeps_venus_talking(results) -> None:
    r = results["talking_to_others"]
    assert r.applicable, r.notes
    assert r.continued and not r.stopped, (r.behavior, results["talking_to_others:decisions"])
    decisions = results["talking_to_others:decisions"]
    paused_without_words = [d for d in decisions if d[0] == "interruption" and "no words yet" in d[1]]
    assert len(paused_without_words) <= 1, decisions  # only the first burst may pause at its deadline


def test_a_backchannel_then_a_stop_cue_still_stops_venus(results) -> None:
    r = results["user_interruption"]
    assert r.applicable, r.notes
    assert r.stopped, (r.behavior, results["user_interruption:decisions"])
    assert r.responded, r.notes
