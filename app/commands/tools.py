"""`venus tools`: every tool Venus can use, with its permission level, where it comes from and whether it works here."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register `venus tools`."""
    p = sub.add_parser("tools", help="list the tools, their permission levels (allow / ask / off) and sources")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from engine.settings import load_settings
    from harness import Harness

    loaded = load_settings()
    if loaded.problem:
        print(f"warning: {loaded.problem}", file=sys.stderr)
    notices: list[str] = []
    # the tasks of the real store are not touched: listing must not resume or report anyone's unfinished work
    with tempfile.TemporaryDirectory(prefix="venus-tools-") as scratch:
        harness = Harness(loaded.settings.harness, lambda e: notices.append(getattr(e, "text", "")),
                          store_path=Path(scratch) / "tasks.db")
        try:
            harness.wait_mcp_started()  # each server has a start timeout of its own
            rows = harness.describe_tools()
        finally:
            harness.shutdown()
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(format_table(rows))
    for text in notices:
        if text:
            print(f"note: {text}", file=sys.stderr)
    return 0


def format_table(rows: list[dict]) -> str:
    """The tools as an aligned table: name, level (and the default when settings changed it), source, availability."""
    lines = [("TOOL", "LEVEL", "SOURCE", "AVAILABLE")]
    for row in rows:
        level = row["level"] if row["level"] == row["default"] else f"{row['level']} (default {row['default']})"
        lines.append((row["name"], level, row["source"], "yes" if row["available"] else f"no: {row['why']}"))
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "\n".join(f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d}" for a, b, c, d in lines)
