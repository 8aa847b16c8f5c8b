"""`make bench` entry: a small real-time run of Venus on the duplex scenarios (5 per category, about 10 min).

The full 40-per-category run is `python -m bench.duplex.run --out bench/out/duplex --per-category 40`.
"""

from bench.duplex.run import main

if __name__ == "__main__":
    raise SystemExit(main(["--out", "bench/out/duplex-quick", "--per-category", "5", "--seed", "11"]))
