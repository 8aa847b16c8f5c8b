"""`venus chat`: the same runtime in a terminal — typed, from WAV files, or on the sound cards."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from engine.runtime.session import open_session
from engine.settings import load_settings
from engine.timeline import events as ev


class TranscriptPrinter:
    """Prints the conversation as it happens: the user's words, Venus's words as they stream, task news."""

    def __init__(self, out: TextIO, *, stream_tokens: bool) -> None:
        self.out = out
        self.stream_tokens = stream_tokens
        self._open_turn = ""

    def __call__(self, event: ev.Event) -> None:
        """Timeline subscriber."""
        line = None
        if isinstance(event, ev.AsrFinal) and event.text.strip():
            line = f"you (said): {event.text.strip()}"
        elif isinstance(event, ev.AssistantToken) and self.stream_tokens:
            text = event.text
            if self._open_turn != event.turn_id:
                self._open_turn = event.turn_id
                self.out.write("venus: ")
                text = text.lstrip()
            self.out.write(text)
            self.out.flush()
        elif isinstance(event, ev.AssistantTurnEnd):
            if self.stream_tokens and self._open_turn == event.turn_id:
                self.out.write(" [interrupted]\n" if event.interrupted else "\n")
                self._open_turn = ""
                if event.reason.startswith("guard:"):  # the streamed words were cut: show what was said instead
                    line = f"  [{event.reason.removeprefix('guard: ')}; not spoken]\nvenus: {event.text}"
            elif event.reason in ("notice", "intent") or (not self.stream_tokens and event.text.strip()):
                line = f"venus: {event.heard_text or event.text}"
        elif isinstance(event, ev.DelegationDispatched):
            line = f"  [task {event.task_id[-6:]}] {event.tool} {event.arguments}"
        elif isinstance(event, ev.DelegationResult):
            line = f"  [task {event.task_id[-6:]}] done: {event.summary}"
        elif isinstance(event, ev.DelegationFailed):
            line = f"  [task {event.task_id[-6:]}] failed: {event.error}"
        elif isinstance(event, ev.ConfirmationRequested):
            line = f"  [task {event.task_id[-6:]}] needs your OK: {event.prompt or event.tool} (say or type yes / no)"
        elif isinstance(event, ev.Interruption):
            line = f"  [venus stopped: {event.reason}]"
        elif isinstance(event, ev.SystemNotice):
            line = f"  [{event.level}] {event.text}"
        if line is not None:
            self.out.write(line + "\n")
            self.out.flush()


def run_chat_command(args: argparse.Namespace) -> int:
    """Entry point of `venus chat`."""
    result = load_settings()
    if result.problem:
        print(f"warning: {result.problem}", file=sys.stderr)
    settings = result.settings
    if args.mic or args.speaker:
        if not (args.mic and args.speaker):
            print("venus chat: --mic and --speaker go together (speech in from one WAV, Venus's voice into another)",
                  file=sys.stderr)
            return 2
        return _chat_files(settings, Path(args.mic), Path(args.speaker), args.conversation)
    if args.voice:
        return _chat_devices(settings, args.conversation)
    return _chat_text(settings, args.conversation)


def _chat_text(settings, conversation_id: str | None) -> int:
    session = open_session(settings, conversation_id=conversation_id,
                           observer=TranscriptPrinter(sys.stdout, stream_tokens=True))
    print(f"Venus (conversation {session.timeline.conversation_id}). Type a message; /quit to leave.", flush=True)
    try:
        while True:
            try:
                line = input("you> ")
            except EOFError:
                break
            if line.strip() in ("/quit", "/exit"):
                break
            session.runtime.send_text(line)
            session.runtime.wait_idle(timeout=300)
    except KeyboardInterrupt:
        pass
    finally:
        session.close()
    return 0


def _chat_files(settings, mic: Path, speaker: Path, conversation_id: str | None) -> int:
    session = open_session(settings, mic=mic, speaker=speaker, conversation_id=conversation_id,
                           observer=TranscriptPrinter(sys.stdout, stream_tokens=False))
    try:
        session.speech.source.finished.wait()
        session.speech.wait_idle(timeout=60)
        time.sleep(0.5)  # let the last end-of-turn timer run
        session.runtime.wait_idle(timeout=300)
    finally:
        session.close()
    print(f"Venus's voice is in {speaker}", flush=True)
    return 0


def _chat_devices(settings, conversation_id: str | None) -> int:
    session = open_session(settings, devices=True, conversation_id=conversation_id,
                           observer=TranscriptPrinter(sys.stdout, stream_tokens=False))
    print("Listening. Speak to Venus; Ctrl-C to leave.", flush=True)
    try:
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        session.close()
    return 0
