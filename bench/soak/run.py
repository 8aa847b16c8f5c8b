"""Soak benchmark (issue #24 item 8): a scripted conversation of N minutes through the full duplex runtime.

  .venv/bin/python -m bench.soak.run --minutes 30        # `make soak`
  .venv/bin/python -m bench.soak.run --minutes 6 --out bench/out/soak-6

The user's side (bench/soak/script.py) is rendered with espeak-ng into one long WAV; a separate process
(bench/soak/session.py) plays it into a persisted Venus session in real time while the bench submits MCP calls
through its harness. This process samples that one's RSS every `--sample-s` seconds and judges three criteria:

  RSS after the warm-up stays within 10 % of its value at the end of the warm-up;
  every event appended to the timeline is a row in venus.db;
  after the session closes no Python thread it started is alive, and no process it started (the MCP server) is
  left, in it or after it exits.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from bench.soak.script import plan, render
from engine.settings import Settings, save_settings

ROOT = Path(__file__).resolve().parents[2]
MCP_SERVER = Path(__file__).with_name("mcp_server.py")
FLAT_WITHIN = 0.10  # RSS after the warm-up may move this far from its value at the warm-up's end


@dataclass
class Sample:
    """One RSS reading of the Venus process (and of its child processes together)."""

    at: float  # time.monotonic() of the reading
    t_s: float  # seconds since the mic started (negative while the models load); set once the run ended
    rss_mb: float
    children_mb: float
    children: int


@dataclass
class Observed:
    """What the session process reported, as it arrived."""

    lines: list[dict] = field(default_factory=list)
    opened_at: float | None = None  # time.monotonic() of the "open" line (the mic starts)
    closing_at: float | None = None  # time.monotonic() of the "closing" line (the mic and drain are over)

    def last(self, kind: str) -> dict | None:
        """The latest line of one kind."""
        found = [line for line in self.lines if line.get("event") == kind]
        return found[-1] if found else None

    def progress_at(self, t_s: float) -> dict | None:
        """The latest progress line at or before `t_s`."""
        found = [line for line in self.lines if line.get("event") == "progress" and line["t_s"] <= t_s + 1]
        return found[-1] if found else None


def _read_lines(stream, observed: Observed, echo: bool) -> None:
    for raw in stream:
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if line.get("event") == "open":
            observed.opened_at = time.monotonic()
        elif line.get("event") == "closing":
            observed.closing_at = time.monotonic()
        observed.lines.append(line)
        if echo and line.get("event") in ("open", "progress", "closing"):
            print(f"  session: {json.dumps(line)}", flush=True)


def write_settings(config_dir: Path) -> Path:
    """The soak's settings file: defaults plus the soak MCP server, allowed to run without asking."""
    settings = Settings()
    settings.harness.mcp_servers = {"soak": {"command": sys.executable, "args": [str(MCP_SERVER)],
                                             "permission": "allow"}}
    return save_settings(settings, config_dir / "settings.json")


def _descendants(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def run_soak(minutes: float, work: Path, *, seed: int, sample_s: float) -> tuple[list[Sample], Observed, int, list]:
    """Generate the mic file, run the session process to its end while sampling it; returns what was seen."""
    home = work / "home"
    shutil.rmtree(home, ignore_errors=True)  # no tasks, reminders or conversations from an earlier run
    env = dict(os.environ)
    for name in ("CONFIG", "DATA", "LOG", "CACHE"):
        (home / name.lower()).mkdir(parents=True, exist_ok=True)
        env[f"VENUS_{name}_DIR"] = str(home / name.lower())
    write_settings(home / "config")
    print(f"planning and rendering {minutes:g} min of the user's side ...", flush=True)
    script = plan(minutes * 60, seed=seed)
    script.save(work / "script.json")
    render(script, work / "mic.wav", seed=seed)
    kinds = [t.kind for t in script.turns]
    print(f"  {len(script.turns)} user turns ({', '.join(f'{k} {kinds.count(k)}' for k in sorted(set(kinds)))}), "
          f"{len(script.mcp_calls)} MCP calls from the bench -> {work / 'mic.wav'}", flush=True)
    command = [sys.executable, "-m", "bench.soak.session", "--mic", str(work / "mic.wav"),
               "--script", str(work / "script.json"), "--work", str(work)]
    with open(work / "session.log", "w", encoding="utf-8") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        me = psutil.Process(proc.pid)
        observed = Observed()
        reader = threading.Thread(target=_read_lines, args=(proc.stdout, observed, True), daemon=True)
        reader.start()
        began = time.monotonic()
        samples: list[Sample] = []
        seen_children: dict[int, float] = {}  # pid -> create_time, every descendant ever sampled
        next_at = began
        while proc.poll() is None:
            if time.monotonic() >= next_at:
                next_at += sample_s
                try:
                    rss = me.memory_info().rss
                except psutil.Error:
                    break
                kids = _descendants(me)
                kid_rss = 0
                for kid in kids:
                    try:
                        kid_rss += kid.memory_info().rss
                        seen_children[kid.pid] = kid.create_time()
                    except psutil.Error:
                        pass
                samples.append(Sample(time.monotonic(), 0.0, rss / 2**20, kid_rss / 2**20, len(kids)))
            time.sleep(0.2)
        code = proc.wait()
        reader.join(timeout=5)
    origin = observed.opened_at if observed.opened_at is not None else began
    for s in samples:
        s.t_s = round(s.at - origin, 1)
    survivors = []
    for pid, created in seen_children.items():
        try:
            p = psutil.Process(pid)
            if p.create_time() == created and p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                survivors.append(f"{pid} {p.name()}")
        except psutil.Error:
            pass
    return samples, observed, code, survivors


def _at_steps(samples: list[Sample], step_s: float) -> list[Sample]:
    """The first sample at or after 0, step_s, 2*step_s, ... and the last one."""
    chosen, mark = [], 0.0
    for s in samples:
        if s.t_s >= mark:
            chosen.append(s)
            mark = (s.t_s // step_s + 1) * step_s
    if samples and samples[-1] not in chosen:
        chosen.append(samples[-1])
    return chosen


def report(samples: list[Sample], observed: Observed, code: int, survivors: list, *, warmup_s: float,
           step_s: float) -> bool:
    """Print the RSS table, the session's counts and a PASS/FAIL line per criterion; True when all pass."""
    final = observed.last("final") or {}
    closing = observed.closing_at if observed.closing_at is not None else float("inf")
    ran = [s for s in samples if s.t_s >= 0 and s.at <= closing]  # the mic playing (and the drain), not the close
    after = [s for s in ran if s.t_s >= warmup_s]
    reference = after[0] if after else None
    print("\nRSS of the Venus process (MCP server apart), at each step:")
    print("| t (min) | RSS (MiB) | vs end of warm-up | MCP server RSS (MiB) | events on the timeline | Python threads |")
    print("| --- | --- | --- | --- | --- | --- |")
    opened = observed.last("open") or {}
    if "rss_mb" in opened:
        print(f"| session opened (models loaded, warmed up) | {opened['rss_mb']:.0f} | | | | |")
    for s in _at_steps(ran, step_s):
        progress = observed.progress_at(s.t_s) or {}
        delta = f"{100 * (s.rss_mb / reference.rss_mb - 1):+.1f} %" if reference and s.t_s >= reference.t_s else ""
        print(f"| {s.t_s / 60:.1f} | {s.rss_mb:.0f} | {delta} | {s.children_mb:.0f} | {progress.get('events', '')} "
              f"| {progress.get('threads', '')} |")
    closed = observed.last("closing") or {}
    if "rss_mb" in closed:
        print(f"| end of the mic and drain, {closed['t_s'] / 60:.1f} | {closed['rss_mb']:.0f} | | | "
              f"{closed.get('events', '')} | |")
    print(f"\nSession: exit {code}; {final.get('asr_finals')} user turns heard, {final.get('answers')} answers, "
          f"{final.get('interruptions')} interruptions, {final.get('intent_tasks')} intent tasks "
          f"({', '.join(final.get('intent_tools', []))}), {final.get('reminders_fired')} timers fired; "
          f"MCP from the bench: {final.get('mcp_submitted')} submitted, {final.get('mcp_results')} results, "
          f"{final.get('mcp_cancelled')} cancelled, {final.get('mcp_failed')} failed, "
          f"{final.get('mcp_unfinished')} unfinished; MCP calls decided by the model: {final.get('model_mcp_calls')}; "
          f"error notices: {final.get('errors')}")
    verdicts = []
    if reference is None or len(after) < 2:
        print(f"RSS flat after the warm-up ({warmup_s / 60:g} min): NOT JUDGED (the run ended before it)")
    else:
        worst = max(after, key=lambda s: abs(s.rss_mb / reference.rss_mb - 1))
        drift = worst.rss_mb / reference.rss_mb - 1
        ok = abs(drift) <= FLAT_WITHIN
        verdicts.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} RSS flat within {FLAT_WITHIN:.0%} after the warm-up: "
              f"{reference.rss_mb:.0f} MiB at {reference.t_s / 60:.1f} min, furthest {worst.rss_mb:.0f} MiB at "
              f"{worst.t_s / 60:.1f} min ({100 * drift:+.1f} %), last {after[-1].rss_mb:.0f} MiB")
    appended, counted, rows = final.get("appended"), final.get("appended_counted"), final.get("rows_written")
    ok = appended is not None and appended == counted == rows
    verdicts.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} events written == events appended: {appended} appended "
          f"({counted} delivered to a subscriber), {rows} rows in venus.db")
    threads = final.get("threads_left_after_session", ["(no final report)"])
    ok = code == 0 and not threads
    verdicts.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} no thread left: started by the session and alive after it closed: "
          f"{threads or 'none'}")
    print(f"     (process-wide threads started while loading or warming the models, alive after they were released "
          f"too, not judged: {final.get('threads_left_after_models') or 'none'})")
    left = final.get("processes_left", ["(no final report)"])
    ok = code == 0 and not left and not survivors
    verdicts.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} no process left: children alive after close {left or 'none'} "
          f"(MCP server pids {final.get('mcp_processes')}); alive after the process exited {survivors or 'none'}")
    return bool(verdicts) and all(verdicts)


def main(argv: list[str] | None = None) -> int:
    """Run the soak and print its report; exit 1 when a criterion fails."""
    parser = argparse.ArgumentParser(description="Soak: a scripted N-minute conversation through the duplex runtime")
    parser.add_argument("--minutes", type=float, default=30.0, help="length of the conversation (default 30)")
    parser.add_argument("--warmup-minutes", type=float, default=5.0, help="RSS is judged after this (default 5)")
    parser.add_argument("--step-minutes", type=float, default=5.0, help="RSS is printed at these steps (default 5)")
    parser.add_argument("--sample-s", type=float, default=30.0, help="RSS sampling interval (default 30 s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "soak",
                        help="the mic file, Venus's audio, the database and logs (default bench/out/soak)")
    args = parser.parse_args(argv)
    if args.minutes < 1 or args.sample_s <= 0 or args.step_minutes <= 0:
        parser.error("--minutes must be >= 1, --sample-s and --step-minutes positive")
    work = args.out.resolve()
    work.mkdir(parents=True, exist_ok=True)
    samples, observed, code, survivors = run_soak(args.minutes, work, seed=args.seed, sample_s=args.sample_s)
    (work / "samples.json").write_text(json.dumps([s.__dict__ for s in samples], indent=1), encoding="utf-8")
    ok = report(samples, observed, code, survivors, warmup_s=args.warmup_minutes * 60,
                step_s=args.step_minutes * 60)
    print(f"\nfiles: {work} (session.log has the session's warnings and errors)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
