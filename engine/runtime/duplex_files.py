"""`venus duplex`: the full runtime, in real time, with a WAV as the microphone and a WAV as the speaker.

OUT.wav holds only Venus's audio, 16 kHz mono, on IN.wav's timeline (sample 0 of both is the same instant)
and at least as long as IN.wav. `--input-dir` runs every DIR/*/input.wav (the Full-Duplex-Bench layout),
loading the models once.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.audio.files import audio_file_info
from engine.runtime.session import Shared, load_shared, open_session
from engine.settings import Settings, load_settings

log = logging.getLogger(__name__)

OUTPUT_RATE = 16000
DRAIN_S = 20.0  # after the input ends, how long Venus may finish its answer (the file keeps growing)


def run_case(settings: Settings, input_wav: Path, output_wav: Path, *, shared: Shared,
             timeline_path: Path | None = None, video: str | None = None, drain_s: float = DRAIN_S,
             echo: bool = False) -> dict:
    """Run one conversation in real time; returns a small summary (turns, interruptions, duration)."""
    info = audio_file_info(input_wav)
    input_seconds = info.frames / info.samplerate
    if not echo:
        # The input is the user's channel alone (as in Full-Duplex-Bench): no acoustic path carries Venus's
        # voice into it, so there is no echo to cancel or guard against (tests/test_speech_echo.py covers that).
        audio_settings = settings.audio.model_copy(update={"echo_cancellation": False, "echo_guard": False})
        settings = settings.model_copy(update={"audio": audio_settings})
    with tempfile.TemporaryDirectory(prefix="venus-duplex-") as tmp:
        raw_out = Path(tmp) / "venus.wav"
        session = open_session(settings, mic=input_wav, speaker=raw_out, persist=False, shared=shared,
                               video=video, output_rate=OUTPUT_RATE)
        try:
            session.speech.source.finished.wait(timeout=input_seconds + 60)
            deadline = time.monotonic() + drain_s
            while time.monotonic() < deadline and not session.runtime.wait_idle(timeout=0.2):
                pass
            input_start_ms = session.speech._start_ms  # session time of the input's sample 0
        finally:
            session.close()
        audio, rate = sf.read(str(raw_out), dtype="float32", always_2d=True)
    audio = audio.mean(axis=1)
    if rate != OUTPUT_RATE:
        from engine.audio import resample_clip

        audio = resample_clip(audio, rate, OUTPUT_RATE)
    audio = audio[input_start_ms * OUTPUT_RATE // 1000:]  # align: OUT sample 0 = IN sample 0
    need = int(np.ceil(input_seconds * OUTPUT_RATE))
    if len(audio) < need:
        audio = np.concatenate([audio, np.zeros(need - len(audio), np.float32)])
    output_wav.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(output_wav), audio, OUTPUT_RATE, subtype="PCM_16")
    events = session.timeline.events()
    if timeline_path is not None:
        with open(timeline_path, "w", encoding="utf-8") as fh:
            for event in events:
                data = event.to_dict()
                data["t_input_ms"] = data["t_ms"] - input_start_ms  # on IN.wav's own clock
                fh.write(json.dumps(data, default=str) + "\n")
    return {
        "input": str(input_wav), "output": str(output_wav), "seconds": round(input_seconds, 2),
        "answers": sum(1 for e in events if e.kind == "assistant_turn_end"),
        "interruptions": sum(1 for e in events if e.kind == "interruption"),
    }


def warm_up(settings: Settings, shared: Shared) -> None:
    """Evaluate the system prompt into the shared LLM before the first input plays, as the app does at launch.

    The first conversation would otherwise spend its first seconds on it (~4 s for the default prompt with its
    tools at one thread) while the user already speaks; later cases find it in the cache.
    """
    with tempfile.TemporaryDirectory(prefix="venus-duplex-warm-") as tmp:
        silent = Path(tmp) / "silence.wav"
        sf.write(str(silent), np.zeros(OUTPUT_RATE // 2, np.float32), OUTPUT_RATE, subtype="PCM_16")
        session = open_session(settings, mic=silent, speaker=Path(tmp) / "out.wav", persist=False, shared=shared,
                               output_rate=OUTPUT_RATE)
        try:
            session.runtime.wait_ready(120)
        finally:
            session.close()


def run_duplex_command(args: argparse.Namespace) -> int:
    """Entry point of `venus duplex`."""
    result = load_settings()
    if result.problem:
        print(f"warning: {result.problem}", file=sys.stderr)
    settings = result.settings
    if args.input_dir:
        root = Path(args.input_dir)
        if not root.is_dir():
            print(f"venus duplex: cannot read {root}: {'not a folder' if root.exists() else 'no such folder'}",
                  file=sys.stderr)
            return 2
        cases = sorted(root.glob("*/input.wav"))
        if not cases:
            print(f"venus duplex: no */input.wav under {root}", file=sys.stderr)
            return 2
        jobs = [(case, case.parent / "output.wav", case.parent / "timeline.jsonl") for case in cases]
    else:
        if not args.output:
            print("venus duplex: --input needs --output OUT.wav", file=sys.stderr)
            return 2
        jobs = [(Path(args.input), Path(args.output), Path(args.timeline) if args.timeline else None)]
    for input_wav, _output, _timeline in jobs:  # before the models load: a wrong path fails in a second
        audio_file_info(input_wav)
    shared = load_shared(settings, speech=True)
    try:
        warm_up(settings, shared)
        for i, (input_wav, output_wav, timeline_path) in enumerate(jobs, 1):
            summary = run_case(settings, input_wav, output_wav, shared=shared, timeline_path=timeline_path,
                               video=args.video, drain_s=args.drain, echo=args.echo)
            print(f"[{i}/{len(jobs)}] {input_wav}: {summary['answers']} answers, "
                  f"{summary['interruptions']} interruptions -> {output_wav}", flush=True)
    finally:
        shared.close()
    return 0
