"""Timeline persistence: what the writer costs the appending thread, how soon events reach the file, open cost.

Run: .venv/bin/python -m bench.bench_timeline [N]   (N events, default 20000). Every number is measured
side by side in this one run; on a shared machine read the ratios, not the absolute times.
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from engine.timeline import AssistantToken, StoreOptions, Timeline, UserText, open_store


def _append_all(timeline: Timeline, count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        timeline.append(AssistantToken(turn_id="t", text=f" word{i}", index=i))
    return time.perf_counter() - started


def bench_append_cost(folder: Path, count: int) -> None:
    """Appending to a bare timeline vs one the store persists (the callback only enqueues)."""
    bare_s = _append_all(Timeline(), count)
    store = open_store(folder / "append.db")
    persisted_s = _append_all(store.new_conversation(), count)
    started = time.perf_counter()
    store.close()  # writes whatever the thread has not written yet
    drain_s = time.perf_counter() - started
    print(f"append, bare timeline:       {count / bare_s:10.0f} events/s")
    print(
        f"append, persisted timeline:  {count / persisted_s:10.0f} events/s  (ratio {persisted_s / bare_s:.2f}x)"
    )
    print(f"close() drain after appends: {drain_s * 1000:10.1f} ms")


def bench_visibility(folder: Path, samples: int = 40) -> None:
    """Time from append until another connection sees the row, against the 100 ms flush interval."""
    db = folder / "latency.db"
    store = open_store(db)
    timeline = store.new_conversation()
    reader = sqlite3.connect(db)
    delays_ms = []
    for i in range(samples):
        started = time.perf_counter()
        timeline.append(UserText(text=f"probe {i}"))
        while reader.execute("SELECT count(*) FROM events").fetchone()[0] <= i:
            time.sleep(0.002)
        delays_ms.append((time.perf_counter() - started) * 1000)
        time.sleep(0.01)
    reader.close()
    store.close()
    interval = store.options.writer.flush_interval_ms
    print(
        f"append -> visible on disk:   median {statistics.median(delays_ms):.0f} ms, max {max(delays_ms):.0f} ms "
        f"(flush interval {interval} ms, requirement 250 ms)"
    )


def bench_open(folder: Path) -> None:
    """Opening the database filled by bench_append_cost, with and without SQLite's quick_check."""
    db = folder / "append.db"
    timings = {}
    for check in (False, True, False, True):
        started = time.perf_counter()
        open_store(db, StoreOptions(check_integrity=check)).close()
        timings.setdefault(check, []).append(time.perf_counter() - started)
    plain, checked = min(timings[False]), min(timings[True])
    size_mb = db.stat().st_size / 1e6
    print(
        f"open {size_mb:.1f} MB database:      {plain * 1000:.0f} ms plain, {checked * 1000:.0f} ms with "
        f"quick_check (ratio {checked / plain:.2f}x)"
    )


def main() -> None:
    """Run the three measurements in a temporary folder."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bench_append_cost(folder, count)
        bench_visibility(folder)
        bench_open(folder)


if __name__ == "__main__":
    main()
