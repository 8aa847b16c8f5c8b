"""`venus duplex`: the full runtime on file-backed devices (see engine/runtime)."""

from __future__ import annotations

import argparse


def _run(args: argparse.Namespace) -> int:
    if args.llm_backend:
        import os

        from engine.llm import BACKEND_ENV

        os.environ[BACKEND_ENV] = args.llm_backend  # read by engine.llm.open_backend
    from engine.runtime.duplex_files import run_duplex_command

    return run_duplex_command(args)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register `venus duplex ...`."""
    p = sub.add_parser("duplex", help="run the full-duplex runtime on WAV files (no devices)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", help="the user's side: a WAV of any rate and channel count")
    src.add_argument("--input-dir", help="run every DIR/*/input.wav, writing output.wav beside each")
    p.add_argument("--output", help="Venus's audio, 16 kHz mono, aligned with the input (with --input)")
    p.add_argument("--video", help="a video file to use as the camera")
    p.add_argument("--timeline", help="write the timeline as JSON lines here")
    p.add_argument("--echo", action="store_true",
                   help="keep echo cancellation on (for inputs that contain Venus's own voice)")
    p.add_argument("--drain", type=float, default=20.0,
                   help="seconds Venus may go on speaking after the input ends (default 20)")
    p.add_argument("--llm-backend", choices=("llama_cpp", "torch"),
                   help="the LLM backend for this run, instead of llm.backend in settings")
    p.set_defaults(func=_run)
