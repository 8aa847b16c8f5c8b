"""The `venus` command: the desktop app by default, plus chat, duplex, doctor, models and tools subcommands.

Nothing heavy is imported until a subcommand needs it, so `venus --help` and `venus doctor` stay quick.
"""

from __future__ import annotations

import argparse
import os
import sys

from engine.errors import VenusError


def _has_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True  # Windows and macOS always have a window server for a logged-in user


def _cmd_app(args: argparse.Namespace) -> int:
    if not _has_display():
        print("venus: no display found (DISPLAY/WAYLAND_DISPLAY unset); run `venus chat` for a terminal conversation.",
              file=sys.stderr)
        return 2
    from app.commands.desktop import run_desktop

    return run_desktop(args)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from app.desktop_check import check_desktop
    from engine.doctor import format_report, run_checks

    checks = run_checks([check_desktop()])
    print(format_report(checks))
    return 1 if any(c.status == "fail" for c in checks) else 0


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("venus-assistant")
    except metadata.PackageNotFoundError:  # a copy of the source that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    from app.commands import chat, duplex, models, tools

    parser = argparse.ArgumentParser(prog="venus", description="Venus, a local full-duplex voice and video assistant.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to the console too")
    parser.add_argument("-V", "--version", action="version", version=f"venus {_version()}")
    parser.set_defaults(func=_cmd_app)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    sub.add_parser("app", help="open the desktop app (the default)").set_defaults(func=_cmd_app)
    chat.add_parser(sub)
    duplex.add_parser(sub)
    sub.add_parser("doctor", help="check this machine, the models and the settings").set_defaults(func=_cmd_doctor)
    models.add_parser(sub)
    tools.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `venus` console script."""
    from engine.logsetup import setup_logging

    args = build_parser().parse_args(argv)
    setup_logging(verbose=args.verbose)
    try:
        return int(args.func(args) or 0)
    except VenusError as exc:
        print(f"venus: {exc} [{exc.code}]", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
