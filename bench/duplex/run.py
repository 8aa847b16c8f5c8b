"""Duplex benchmark runner: generate the cases, produce output.wav for each, judge them, write a markdown table.

  .venv/bin/python -m bench.duplex.run --out bench/out/duplex                 # Venus, via `venus duplex --input-dir`
  .venv/bin/python -m bench.duplex.run --out bench/out/duplex --responder ideal   # reference responders
  .venv/bin/python -m bench.duplex.run --out bench/out/duplex --responder naive
  .venv/bin/python -m bench.duplex.run --out bench/out/duplex-piper --split test --user-voice piper  # held-out cases

The table goes to OUT/results-<responder>.md; with --update-docs it also replaces that responder's section of
docs/BENCHMARKS.md (between `<!-- duplex:<responder> -->` markers).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from bench.duplex import pools
from bench.duplex.evaluate import EvaluatorOptions, evaluate_dir, summarize
from bench.duplex.generate import CATEGORIES, USER_VOICE_KINDS, GeneratorOptions, generate
from bench.duplex.reference import write_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "BENCHMARKS.md"

# (metric, target, higher is better) per category; from the targets.
TARGETS = {
    "smooth_turn_taking": [("take_over_rate", None, True), ("median_response_latency_s", 0.8, False)],
    "pause_handling": [("false_cut_in_rate", 0.05, False), ("take_over_rate", None, True),
                       ("median_response_latency_s", None, False)],
    "user_interruption": [("respond_rate", 0.90, True), ("median_stop_latency_s", 0.30, False),
                          ("median_response_latency_s", None, False), ("keyword_hit_rate", None, True)],
    "backchannel": [("continuation_rate", 0.97, True)],
    "talking_to_others": [("continuation_rate", 0.92, True)],
    "background_speech": [("continuation_rate", 0.92, True)],
}


def markdown(summary: dict[str, dict], title: str) -> str:
    """A per-category table: metric, value, target, met."""
    lines = [f"### {title}", "", "| category | cases (judged) | metric | value | target | met |",
             "| --- | --- | --- | --- | --- | --- |"]
    for category in CATEGORIES:
        if category not in summary:
            continue
        m = summary[category]
        for metric, target, higher in TARGETS[category]:
            value = m.get(metric)
            shown = "n/a" if value is None else f"{value:.3f}"
            goal = "" if target is None else (f">= {target}" if higher else f"<= {target}")
            met = "" if target is None or value is None else ("yes" if (value >= target if higher else value <= target)
                                                               else "no")
            lines.append(f"| {category} | {m['cases']} ({m['judged']}) | {metric} | {shown} | {goal} | {met} |")
    return "\n".join(lines) + "\n"


def update_docs(section: str, responder: str, path: Path = DOCS) -> None:
    """Replace (or append) this responder's section in docs/BENCHMARKS.md between its markers."""
    begin, end = f"<!-- duplex:{responder} -->", f"<!-- /duplex:{responder} -->"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    block = f"{begin}\n{section}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run_venus(root: Path) -> None:
    """`venus duplex --input-dir root`, from the venv's entry point or `python -m app.cli`."""
    venus = shutil.which("venus") or str(Path(sys.executable).with_name("venus"))
    command = [venus] if Path(venus).exists() else [sys.executable, "-m", "app.cli"]
    # each case is judged on the input's span only, so Venus gets 5 s (not 20) to finish after the input ends
    subprocess.run([*command, "duplex", "--input-dir", str(root), "--drain", "5"], check=True)


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder of cases (created)")
    parser.add_argument("--per-category", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--categories", nargs="*", default=list(CATEGORIES))
    parser.add_argument("--responder", choices=["venus", "ideal", "naive"], default="venus")
    parser.add_argument("--no-asr", action="store_true", help="judge on timing only (faster)")
    parser.add_argument("--update-docs", action="store_true", help="write the table into docs/BENCHMARKS.md")
    parser.add_argument("--split", choices=pools.SPLITS, default=None,
                        help="cases from this split of the held-out pools (default: the fixed lists)")
    parser.add_argument("--user-voice", choices=USER_VOICE_KINDS, default="espeak",
                        help="the user speaks with espeak-ng voices or the Piper voice, pitch-shifted (needs --split)")
    args = parser.parse_args(argv)
    if args.user_voice != "espeak" and args.split is None:
        parser.error("--user-voice piper needs --split")
    started = time.perf_counter()
    generate(GeneratorOptions(args.out, args.per_category, args.seed, tuple(args.categories), split=args.split,
                              user_voice=args.user_voice))
    generated = time.perf_counter()
    if args.responder == "venus":
        run_venus(args.out)
    else:
        write_reference(args.out, args.responder)
    responded = time.perf_counter()
    results = evaluate_dir(args.out, EvaluatorOptions(use_asr=not args.no_asr))
    summary = summarize(results)
    judged = time.perf_counter()
    cases = f"{args.split} split, " if args.split else ""
    voice = "the Piper voice as the user, " if args.user_voice == "piper" else ""
    title = (f"Duplex benchmark: {args.responder} ({args.per_category} cases per category, {cases}{voice}"
             f"seed {args.seed}, {'timing only' if args.no_asr else 'timing + ASR'})")
    table = markdown(summary, title)
    (args.out / f"results-{args.responder}.md").write_text(table, encoding="utf-8")
    (args.out / f"results-{args.responder}.json").write_text(
        json.dumps({"summary": summary, "cases": [asdict(r) for r in results]}, indent=2), encoding="utf-8")
    if args.update_docs:
        update_docs(table, args.responder)
    print(table)
    print(f"generate {generated - started:.1f} s, respond {responded - generated:.1f} s, "
          f"judge {judged - responded:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
