"""Offline benchmark of the turn-taking policies alone, on the generated cases' input.wav (no runtime needed).

For every case it plays the part of the runtime with oracle segmentation (the metadata's event times):
the user's first turn calibrates the level and enrols the voice; whisper tiny.en transcribes what the policy
would have heard. Then
* end of turn: the silence the detector requires after the user's words (smooth / pause cases), and whether it
  would have ended the turn inside the mid-sentence pause (a false cut-in);
* overlap: each later speech segment is judged at 150 ms and at the 300 ms deadline (words = ASR of the first
  300 ms), then reviewed with the final transcript, as the runtime would; the case "continues" when no segment
  ends as an interruption, and an interruption's stop latency is the time of the first stop verdict.

Run: .venv/bin/python -m bench.duplex.policy_bench --cases bench/out/duplex-ideal --per-category 15
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.duplex.evaluate import Transcriber
from bench.duplex.generate import CATEGORIES
from engine.runtime.overlap import ConversationContext, OverlapFeatures, OverlapPolicy
from engine.runtime.speaker import SpeakerProfile
from engine.runtime.turn_taking import EndOfTurnDetector
from engine.timeline.events import OverlapKind

RATE = 16000
VENUS_SPEAKING = "The Eiffel Tower was built for the World's Fair in eighteen eighty nine, and it"


def _cut(audio: np.ndarray, start: float, end: float) -> np.ndarray:
    return audio[int(start * RATE) : int(end * RATE)]


def _db(audio: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(audio.astype(np.float64) ** 2)) + 1e-12))


def _text(asr: Transcriber, audio: np.ndarray) -> str:
    return " ".join(w.text for w in asr.words(audio)).strip()


def judge_turn_end(meta: dict, audio: np.ndarray, asr: Transcriber, detector: EndOfTurnDetector) -> dict:
    """Required silence after the full turn; for pause cases, whether the pause would have ended the turn."""
    turns = [e for e in meta["events"] if e["type"] == "user_turn"]
    full = _text(asr, _cut(audio, turns[0]["start"], turns[-1]["end"]))
    row = {"text": full, "required_silence_ms": detector.decide(0, full, is_final=True).required_silence_ms}
    if "pause" in meta:
        first = _text(asr, _cut(audio, turns[0]["start"], turns[0]["end"]))
        pause_ms = int((meta["pause"]["end"] - meta["pause"]["start"]) * 1000)
        verdict = detector.decide(pause_ms, first, is_final=True)
        row.update(first_part=first, pause_ms=pause_ms, false_cut_in=verdict.end_of_turn,
                   pause_probability=round(verdict.probability, 3))
    return row


def judge_overlaps(meta: dict, audio: np.ndarray, asr: Transcriber, policy: OverlapPolicy) -> dict:
    """Run the overlap policy over every speech segment that overlaps Venus's expected answer."""
    first = meta["events"][0]
    profile = SpeakerProfile()
    profile.enroll(_cut(audio, first["start"], first["end"]))
    user_level = _db(_cut(audio, first["start"], first["end"]))
    segments, stop_ms, side_conversation = [], None, False
    for event in meta["events"][1:]:
        context = ConversationContext(speaking_text=VENUS_SPEAKING, side_conversation=side_conversation)
        def features(elapsed_s: float, final: bool, _event=event) -> OverlapFeatures:
            end = min(_event["end"], _event["start"] + elapsed_s)
            clip = _cut(audio, _event["start"], end)
            words = _text(asr, clip) if elapsed_s >= 0.3 else ""
            return OverlapFeatures(elapsed_ms=round((end - _event["start"]) * 1000), speech_active=not final,
                                   words=words, is_final=final, loudness_db=_db(clip) - user_level,
                                   speaker_similarity=profile.similarity(clip))
        verdict = policy.decide(features(0.15, False), context)
        if not verdict.decided:
            duration = event["end"] - event["start"]
            verdict = policy.decide(features(min(0.3, duration), duration <= 0.3), context)
        closing = features(event["end"] - event["start"], True)
        final = policy.review(verdict, closing, context) if verdict.decided else policy.decide(closing, context)
        side_conversation = final.kind == OverlapKind.OTHER_ADDRESSEE
        if stop_ms is None and verdict.stop:
            stop_ms = verdict.elapsed_ms
        segments.append({"text": event["text"], "at_deadline": str(verdict.kind), "provisional": verdict.provisional,
                         "final": str(final.kind), "reason": final.reason})
    interrupted = any(s["final"] == OverlapKind.INTERRUPTION for s in segments)
    paused = any(s["at_deadline"] == OverlapKind.INTERRUPTION for s in segments)
    return {"segments": segments, "interrupted": interrupted, "paused_briefly": paused and not interrupted,
            "stop_ms": stop_ms}


def summarize(rows: list[dict]) -> dict[str, dict]:
    """Per-category numbers."""
    by = defaultdict(list)
    for row in rows:
        by[row["category"]].append(row)
    out = {}
    for category in CATEGORIES:
        items = by.get(category, [])
        if not items:
            continue
        m: dict = {"cases": len(items)}
        if category in ("smooth_turn_taking", "pause_handling"):
            m["median_required_silence_ms"] = statistics.median(r["required_silence_ms"] for r in items)
            if category == "pause_handling":
                m["false_cut_in_rate"] = round(sum(r["false_cut_in"] for r in items) / len(items), 3)
        elif category == "user_interruption":
            m["respond_rate"] = round(sum(r["interrupted"] for r in items) / len(items), 3)
            stops = [r["stop_ms"] for r in items if r["stop_ms"] is not None]
            m["median_stop_decision_ms"] = statistics.median(stops) if stops else None
        else:
            m["continuation_rate"] = round(sum(not r["interrupted"] for r in items) / len(items), 3)
            m["paused_then_resumed_rate"] = round(sum(r["paused_briefly"] for r in items) / len(items), 3)
        out[category] = m
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, required=True, help="a folder written by bench.duplex.generate")
    parser.add_argument("--per-category", type=int, default=15)
    parser.add_argument("--out", type=Path, default=None, help="JSON with every case (default: CASES/policy.json)")
    args = parser.parse_args(argv)
    asr, detector, policy = Transcriber(threads=1), EndOfTurnDetector(), OverlapPolicy()
    rows, started = [], time.perf_counter()
    for category in CATEGORIES:
        for folder in sorted(args.cases.glob(f"{category}_*"))[: args.per_category]:
            meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
            audio, _ = sf.read(folder / "input.wav", dtype="float32")
            judged = judge_overlaps(meta, audio, asr, policy) if "overlap" in meta else \
                judge_turn_end(meta, audio, asr, detector)
            rows.append({"case": folder.name, "category": category, **judged})
    summary = summarize(rows)
    out = args.out or args.cases / "policy.json"
    out.write_text(json.dumps({"summary": summary, "cases": rows}, indent=2, default=str), encoding="utf-8")
    for category, metrics in summary.items():
        print(category, json.dumps(metrics))
    print(f"{len(rows)} cases in {time.perf_counter() - started:.0f} s; details in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
