"""Where the time of a reply goes: each step of a turn, read from the timelines that `venus duplex --input-dir`
writes beside each case, and the first audio of its output.wav, in ms after the user's speech ends
(metadata.json `turn_end`), with the median of each step over the cases.

Run (real time, after `venus duplex --input-dir DIR` on cases from bench.duplex.generate):
  .venv/bin/python -m bench.duplex.steps DIR
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np
import soundfile as sf

STEPS = ("speech_end", "final", "decision", "token", "speaking", "audio")
_KINDS = {"speech_end": "user_speech_end", "final": "asr_final", "decision": "control_decision",
          "token": "assistant_token"}
AUDIO_RMS = 0.01  # a 10 ms frame of output.wav this loud or louder holds Venus's voice


def case_steps(case: Path) -> dict[str, int | None]:
    """The steps of the first reply after the case's turn end, in ms after it (None: the step never came)."""
    turn_end = json.loads((case / "metadata.json").read_text(encoding="utf-8"))["turn_end"] * 1000
    events = [json.loads(line) for line in (case / "timeline.jsonl").read_text(encoding="utf-8").splitlines()]
    after = [e for e in events if e["t_input_ms"] >= turn_end - 500]  # the final may come a little before
    steps: dict[str, int | None] = {}
    for step, kind in _KINDS.items():
        steps[step] = next((int(e["t_input_ms"] - turn_end) for e in after if e["kind"] == kind), None)
    steps["speaking"] = next((int(e["t_input_ms"] - turn_end) for e in after
                              if e["kind"] == "runtime_state" and e.get("state") == "speaking"), None)
    audio, rate = sf.read(case / "output.wav", dtype="float32", always_2d=True)
    audio = audio.mean(axis=1)
    hop = rate // 100
    loud = [i * 10 for i in range(0, (len(audio) - hop) // hop)
            if i * 10 > turn_end and float(np.sqrt(np.mean(audio[i * hop:(i + 1) * hop] ** 2))) >= AUDIO_RMS]
    steps["audio"] = int(loud[0] - turn_end) if loud else None
    return steps


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", type=Path, help="a folder of cases that `venus duplex --input-dir` has run")
    args = parser.parse_args(argv)
    rows = {case.parent.name: case_steps(case.parent) for case in sorted(args.cases.glob("*/timeline.jsonl"))}
    if not rows:
        print(f"no */timeline.jsonl under {args.cases}: run `venus duplex --input-dir {args.cases}` first")
        return 2
    print("case " + " ".join(STEPS) + "  (ms after the user stopped)")
    for name, steps in rows.items():
        print(name, *(steps[s] if steps[s] is not None else "-" for s in STEPS))
    for step in STEPS:
        values = [r[step] for r in rows.values() if r[step] is not None]
        print(f"median {step}: {statistics.median(values) if values else '-'} ms ({len(values)} cases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
