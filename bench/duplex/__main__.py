"""`make bench` entry: end of turn on whisper's pre-finals, greedy against the turn beam (one seed, about 30 s),
the end-of-turn signals on the held-out test split (the first run decodes it, about 10 min; then cached), then a
small real-time run of Venus on the duplex scenarios (5 per category, about 10 min).

The full runs are `python -m bench.duplex.turn_end_bench --seeds 71 81 91 101 111` and
`python -m bench.duplex.run --out bench/out/duplex --per-category 40`.
"""

from bench.duplex import turn_end_bench, turn_signals
from bench.duplex.run import main

if __name__ == "__main__":
    turn_end_bench.main(["--seeds", "111", "--per-category", "20"])
    turn_signals.main(["--split", "test", "--seeds", "1", "--per-category", "40"])
    raise SystemExit(main(["--out", "bench/out/duplex-quick", "--per-category", "5", "--seed", "11"]))
