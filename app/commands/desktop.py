"""`venus` (no subcommand): the desktop app on the sound cards, or typed-only when there are none."""

from __future__ import annotations

import argparse
import logging
import sys

log = logging.getLogger(__name__)


def _have_audio_devices() -> bool:
    try:
        import sounddevice as sd

        devices = sd.query_devices()
    except Exception as exc:  # PortAudio missing or broken: the app still works typed
        log.warning("no audio devices (%s); the app starts without voice", exc)
        return False
    return any(d["max_input_channels"] > 0 for d in devices) and any(d["max_output_channels"] > 0 for d in devices)


def run_desktop(args: argparse.Namespace) -> int:
    """Open the main window with a real session (voice when devices exist) until the user quits."""
    try:
        from app.main_window import run_app
    except (ImportError, OSError) as exc:  # a system library Qt needs is missing: say which, not a traceback
        from app.desktop_check import explain_load_failure

        what, fix = explain_load_failure(exc)
        print(f"venus: the desktop app cannot start: {what}\n  fix: {fix}; `venus chat` works without it",
              file=sys.stderr)
        return 1
    from app.session_controller import session_controller_factory
    from engine.settings import load_settings

    result = load_settings()
    if result.problem:
        log.warning(result.problem)
    return run_app(result.settings, session_controller_factory(devices=_have_audio_devices()))
