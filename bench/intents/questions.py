"""Spoken questions against typed ones (issue #23 item 4): does answering by voice cost correctness?

    python -m bench.intents.questions [--models ID ...] [--limit N] [--voice espeak|piper]

Each question of questions.yaml is asked twice by the same model, each time in a fresh session with the real
harness: typed (`Runtime.send_text`, as `venus chat` does), and spoken: espeak-ng reads it (the voice picked by
a hash of the text, as in bench/intents/run.py) into a WAV that plays, in real time, into the session's
microphone path (VAD, end of turn, whisper, the runtime), as `venus chat --mic` does. An answer is right when it
holds one of the question's accepted words. Printed: the typed and spoken scores and their gap (target: the spoken
score within 3 points of the typed one), how many transcripts differ from the question, and every question whose
two answers disagree. `--voice piper` speaks the questions with Venus's own Piper voice instead of espeak-ng (a
more natural voice: what is lost to recognition of a robotic voice, and what to any voice).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from bench.intents.smalltalk import throwaway_folders

HERE = Path(__file__).parent
TARGET_GAP = 0.03
DEFAULT_MODELS = ("smollm2-135m-instruct-q4_1",)
_NUMBERS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
            "eight": "8", "nine": "9", "ten": "10", "twelve": "12", "sixty": "60", "hundred": "100"}


@dataclass(frozen=True)
class Question:
    """One question and the words that make an answer right."""

    ask: str
    accept: tuple[str, ...]


@dataclass
class Reply:
    """What came back to one question, typed or spoken."""

    heard: str  # the user's words as Venus got them (the typed text, or the final transcript)
    answer: str  # what Venus said


def load_questions() -> list[Question]:
    """The question set."""
    raw = yaml.safe_load((HERE / "questions.yaml").read_text())["questions"]
    return [Question(q["ask"], tuple(q["accept"])) for q in raw]


def _norm(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return " " + " ".join(_NUMBERS.get(w, w) for w in words) + " "


def right(question: Question, answer: str) -> bool:
    """The answer holds an accepted word or phrase (whole words, or with a plural or possessive ending; digits or
    number words alike)."""
    said = _norm(answer)
    return any(_norm(word) in said or re.search(rf"\b{re.escape(word)}(?:s|es|'s|’s)?\b", answer.lower())
               for word in question.accept)


def _collect(session, started: int) -> Reply:
    from engine.timeline import events as ev

    events = session.timeline.events()[started:]
    heard = " ".join(e.text.strip() for e in events if isinstance(e, (ev.UserText, ev.AsrFinal)))
    answer = " ".join(e.text.strip() for e in events if isinstance(e, ev.AssistantTurnEnd) and e.text.strip())
    return Reply(heard, answer)


def ask_typed(settings, shared, question: Question) -> Reply:
    """Type the question into a fresh text session."""
    from engine.runtime.session import open_session

    session = open_session(settings, persist=False, shared=shared)
    try:
        session.runtime.send_text(question.ask)
        session.runtime.wait_idle(timeout=240)
        return _collect(session, 0)
    finally:
        session.close()


def speak(text: str, folder: Path, voice: str, shared) -> np.ndarray:
    """`text` as 16 kHz speech: espeak-ng (bench/intents/run.py's voices) or Venus's Piper voice."""
    if voice == "espeak":
        from bench.intents.run import synthesize

        return synthesize(text, folder / "q.wav")
    from engine.audio.resample import resample_clip

    clause = shared.synthesizer.synthesize(text)
    return resample_clip(clause.audio.astype(np.float32), clause.sample_rate, 16000)


def ask_spoken(settings, shared, question: Question, folder: Path, voice: str = "espeak") -> Reply:
    """Play the spoken question into a fresh voice session's microphone path and wait for the answer."""
    import soundfile as sf

    from engine.runtime.session import open_session
    from engine.timeline import events as ev

    speech = speak(question.ask, folder, voice, shared)
    mic = folder / "mic.wav"
    # half a second of room before the words; the file source adds the silence that closes the turn
    sf.write(mic, np.concatenate([np.zeros(8000, np.float32), speech, np.zeros(8000, np.float32)]), 16000)
    answered = threading.Event()
    session = open_session(settings, mic=mic, speaker=folder / "out.wav", persist=False, shared=shared)
    session.timeline.subscribe(lambda e: answered.set() if isinstance(e, ev.AssistantTurnEnd) else None)
    try:
        answered.wait(timeout=len(speech) / 16000 + 60)
        session.runtime.wait_idle(timeout=60)
        return _collect(session, 0)
    finally:
        session.close()


def judge_model(model: str, questions: Sequence[Question], voice: str = "espeak") -> dict[str, float]:
    """Ask every question typed and spoken on `model`; print the scores; returns them."""
    from engine.runtime.session import load_shared
    from engine.settings import Settings

    settings = Settings()
    settings.llm.model = model
    started = time.monotonic()
    shared = load_shared(settings, speech=True)
    print(f"{model}: loaded in {time.monotonic() - started:.1f} s; questions spoken by {voice}")
    typed, spoken = [], []
    try:
        with tempfile.TemporaryDirectory() as folder:
            for question in questions:
                typed.append(ask_typed(settings, shared, question))
                spoken.append(ask_spoken(settings, shared, question, Path(folder), voice))
    finally:
        shared.close()
    n = len(questions)
    typed_right = [right(q, r.answer) for q, r in zip(questions, typed, strict=True)]
    spoken_right = [right(q, r.answer) for q, r in zip(questions, spoken, strict=True)]
    misheard = sum(_norm(r.heard) != _norm(q.ask) for q, r in zip(questions, spoken, strict=True))
    t, s = sum(typed_right) / n, sum(spoken_right) / n
    print(f"  typed:  {sum(typed_right):3d}/{n} = {t:.3f}")
    print(f"  spoken: {sum(spoken_right):3d}/{n} = {s:.3f}   gap {100 * (t - s):+.1f} points   "
          f"target <= {100 * TARGET_GAP:.0f}   met: {'yes' if t - s <= TARGET_GAP else 'NO'}")
    print(f"  transcripts that differ from the question (case and punctuation aside): {misheard}/{n}; "
          f"no answer typed {sum(not r.answer for r in typed)}, spoken {sum(not r.answer for r in spoken)}")
    for q, a, b, ra, rb in zip(questions, typed, spoken, typed_right, spoken_right, strict=True):
        if ra != rb:
            print(f"    {'typed' if ra else 'spoken'} only: {q.ask!r}\n        heard {b.heard!r}\n"
                  f"        typed answer {a.answer[:100]!r}\n        spoken answer {b.answer[:100]!r}")
    return {"typed": t, "spoken": s}


def run_questions(models: Sequence[str] = DEFAULT_MODELS, limit: int | None = None, voice: str = "espeak") -> None:
    """The question set on each model, in throwaway config, data and log folders."""
    questions = load_questions()[:limit]
    print(f"spoken questions: {len(questions)} questions, typed and spoken, per model")
    with throwaway_folders():
        for model in models:
            judge_model(model, questions, voice)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.intents.questions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS))
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--voice", choices=("espeak", "piper"), default="espeak", help="who speaks the questions")
    args = parser.parse_args(argv)
    run_questions(args.models, args.limit, args.voice)
    return 0


if __name__ == "__main__":
    sys.exit(main())
