"""`venus chat`: a terminal conversation (typed text, or speech from files / devices)."""

from __future__ import annotations

import argparse


def _run(args: argparse.Namespace) -> int:
    if args.llm_backend:
        import os

        from engine.llm import BACKEND_ENV

        os.environ[BACKEND_ENV] = args.llm_backend  # read by engine.llm.open_backend
    from pathlib import Path

    from engine.audio.files import audio_file_info, check_output_file
    from engine.runtime.chat import run_chat_command

    # before any model loads: a wrong path is "cannot read X: no such file" at once, not a device error later
    if args.mic:
        audio_file_info(Path(args.mic))
    if args.speaker:
        check_output_file(Path(args.speaker))
    return run_chat_command(args)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register `venus chat ...`."""
    p = sub.add_parser("chat", help="talk to Venus in the terminal")
    p.add_argument("--mic", help="a WAV file to use as the microphone")
    p.add_argument("--speaker", help="a WAV file to write Venus's voice to")
    p.add_argument("--voice", action="store_true", help="use the real microphone and speakers")
    p.add_argument("--conversation", help="reopen an earlier conversation by id")
    p.add_argument("--llm-backend", choices=("llama_cpp", "torch"),
                   help="the LLM backend for this run, instead of llm.backend in settings")
    p.set_defaults(func=_run)
