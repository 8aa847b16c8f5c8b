"""Offline benchmark of end of turn on whisper's own pre-finals, greedy against the turn beam.

For each seed it generates the pause-handling and smooth-turn-taking cases, decodes each user turn up to its
mid-sentence pause (or its end) with whisper tiny.en as the pipeline's pre-final does, once greedily and once
with `asr.turn_beam_size`, and asks the end-of-turn detector how much silence each transcript needs:

* a cut-in: a pre-pause transcript that needs less silence than the pause lasted (Venus would start talking
  inside the user's pause);
* a slow question: a complete question that needs more than 800 ms of silence.

Both decodes of a clip run back to back, so their time ratio is measured side by side.

Run: .venv/bin/python -m bench.duplex.turn_end_bench --seeds 71 81 91 101 111 --per-category 40
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import soundfile as sf

from bench.duplex.generate import GeneratorOptions, generate
from engine.audio import make_transcriber
from engine.runtime.turn_taking import EndOfTurnDetector
from engine.settings import Settings

PAD_S = 0.25  # the VAD's padding after the last voiced frame, which the pre-final decodes with
SLOW_MS = 800  # a complete question that waits longer than this is slow


def turn_clips(root: Path) -> list[tuple[object, float | None]]:
    """(audio up to the pause or the turn end, pause length in s or None) for every case under root."""
    clips = []
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        meta = json.loads((case / "metadata.json").read_text(encoding="utf-8"))
        audio, rate = sf.read(case / "input.wav", dtype="float32")
        begin = min(e["start"] for e in meta["events"] if e["type"] == "user_turn") - 0.2
        pause = meta.get("pause")
        end = pause["start"] if pause else meta["turn_end"]
        clips.append((audio[int(begin * rate): int((end + PAD_S) * rate)],
                      pause["end"] - pause["start"] if pause else None))
    return clips


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[71, 81, 91, 101, 111])
    parser.add_argument("--per-category", type=int, default=40)
    parser.add_argument("--verbose", action="store_true", help="print every cut-in and slow question")
    args = parser.parse_args(argv)
    settings = Settings()
    transcriber = make_transcriber(settings)
    detector = EndOfTurnDetector()
    beams = {"greedy": 1, f"beam {settings.asr.turn_beam_size}": settings.asr.turn_beam_size}
    cut_ins = {name: 0 for name in beams}
    slow = {name: 0 for name in beams}
    seconds = {name: 0.0 for name in beams}
    pauses = questions = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            root = Path(tmp) / f"seed{seed}"
            generate(GeneratorOptions(out_dir=root, per_category=args.per_category, seed=seed,
                                      categories=("pause_handling", "smooth_turn_taking")))
            for clip, pause in turn_clips(root):
                pauses += pause is not None
                questions += pause is None
                for name, beam in beams.items():
                    began = time.perf_counter()
                    heard = transcriber.transcribe(clip, word_timestamps=True, beam_size=beam)
                    seconds[name] += time.perf_counter() - began
                    last_p = heard.words[-1].probability if heard.words else None
                    needed = detector.decide(0, heard.text, is_final=True,
                                             last_word_probability=last_p).required_silence_ms
                    if pause is not None and needed < pause * 1000:
                        cut_ins[name] += 1
                        if args.verbose:
                            print(f"  cut-in  seed {seed} {name}: {heard.text!r} needs {needed} ms, pause "
                                  f"{pause * 1000:.0f} ms")
                    elif pause is None and needed > SLOW_MS:
                        slow[name] += 1
                        if args.verbose:
                            print(f"  slow    seed {seed} {name}: {heard.text!r} needs {needed} ms")
    print(f"End of turn on whisper tiny.en pre-finals, seeds {args.seeds}, {pauses} pauses, {questions} questions")
    base = seconds["greedy"]
    for name in beams:
        print(f"  {name:8s} cut into {cut_ins[name]}/{pauses} pauses ({cut_ins[name] / pauses:.3f}), "
              f"{slow[name]}/{questions} complete questions wait > {SLOW_MS} ms; decode time "
              f"{seconds[name] / base:.2f}x greedy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
