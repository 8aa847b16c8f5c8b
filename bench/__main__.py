"""`make bench`: run every benchmark script in bench/ one after another and print what each measured.

Each script measures its own ratios side by side in one run (these machines are shared and noisy), so the
numbers that matter are the ratios, not the absolute times. `python -m bench NAME` runs only matching ones.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def main(argv: list[str]) -> int:
    """Run the benchmarks whose file names contain any of `argv` (all when empty)."""
    scripts = sorted(HERE.glob("bench_*.py"))
    if (HERE / "duplex" / "__main__.py").exists():
        scripts.append(HERE / "duplex")
    if argv:
        scripts = [s for s in scripts if any(a in s.name for a in argv)]
    failed = []
    for script in scripts:
        module = f"bench.{script.stem}" if script.is_file() else "bench.duplex"
        print(f"\n=== {module} ===", flush=True)
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", module], cwd=HERE.parent)
        print(f"--- {module}: exit {proc.returncode} after {time.monotonic() - started:.0f} s", flush=True)
        if proc.returncode != 0:
            failed.append(module)
    if failed:
        print(f"\nbenchmarks that failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
