"""Small talk on the default LLMs (issue #23 item 4): greetings, thanks, "who are you", "never mind" and chit-chat
typed into `venus chat`'s code path (open_session, Runtime.send_text, the real harness), once per default model.

    python -m bench.intents.smalltalk [--models ID ...] [--conversations N]

Counted per answer, on what Venus said (the turn's final text, after the reply guard) and, for reference, on the
raw token stream the model produced (what the guard saw; `venus chat` prints tokens as they stream):
- prompt leak: a brace or an "action" key (the control format), a built-in tool's identifier (set_timer), a whole
  sentence of the system message or of the control instructions (4+ words), or 8 words in a row from them;
- loop: the same 6 words in a row twice in one answer;
- over-long: more than 2 sentences or more than 40 words, not counting the spoken-length budget's closing offer
  ("Want me to go on?", engine/llm/budget.py), which is counted on its own;
- markup: a tag such as </caption> (chat-template or training debris; not a prompt leak, reported beside it).
Targets: leaks 0, loops 0, over-long <= 5 %.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).parent
DEFAULT_MODELS = ("smollm2-135m-instruct-q4_1", "gemma3-270m-q4_k_m")
TARGET_OVERLONG = 0.05
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_MARKUP = re.compile(r"</?[A-Za-z_][\w-]*>")
try:
    from engine.llm.budget import OFFER
except ImportError:  # a checkout without the spoken-length budget
    OFFER = "Want me to go on?"


def load_conversations() -> list[list[str]]:
    """The small-talk conversations (lists of lines typed one after another)."""
    return yaml.safe_load((HERE / "smalltalk.yaml").read_text())["conversations"]


def words(text: str) -> list[str]:
    """Lower-case words."""
    return [w.lower() for w in _WORD.findall(text)]


def sentences(text: str) -> list[str]:
    """Sentences (split at . ! ? followed by a space or the end), each with at least one word."""
    return [s for s in _SENTENCE_END.split(text.replace("\n", ". ")) if _WORD.search(s)]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i: i + n] == needle for i in range(len(haystack) - n + 1))


def leak(answer: str, instructions: str, tool_names: Sequence[str]) -> str | None:
    """Why `answer` leaks the system or control prompt (module docstring), or None."""
    if "{" in answer or "}" in answer:
        return "a brace of the control format"
    if re.search(r'"action"|\baction\s*:', answer, re.IGNORECASE):
        return "the control format's action key"
    for name in tool_names:
        if "_" in name and name in answer:
            return f"the tool identifier {name}"
    said = words(answer)
    for sentence in sentences(instructions):
        sentence_words = words(sentence)
        if len(sentence_words) >= 4 and _contains(said, sentence_words):
            return f"a sentence of the instructions: {sentence.strip()!r}"
    runs = {tuple(w) for w in (words(instructions)[i: i + 8] for i in range(len(words(instructions)) - 7))}
    for i in range(len(said) - 7):
        if tuple(said[i: i + 8]) in runs:
            return f"8 words of the instructions: {' '.join(said[i: i + 8])!r}"
    return None


def loops(answer: str, run: int = 6) -> bool:
    """The same `run` words in a row twice in one answer."""
    said = words(answer)
    seen: set[tuple[str, ...]] = set()
    for i in range(len(said) - run + 1):
        key = tuple(said[i: i + run])
        if key in seen:
            return True
        seen.add(key)
    return False


def without_offer(answer: str) -> str:
    """The answer without the spoken-length budget's closing offer to go on."""
    text = answer.rstrip()
    return text[: -len(OFFER)].rstrip() if text.endswith(OFFER) else text


def overlong(answer: str) -> bool:
    """More than 2 sentences or more than 40 words (the budget's offer to go on not counted)."""
    answer = without_offer(answer)
    return len(sentences(answer)) > 2 or len(words(answer)) > 40


@dataclass
class Answer:
    """One typed line and what came back."""

    line: str
    text: str  # what Venus said (the turns' final text)
    raw: str  # the model's token stream
    reasons: list[str] = field(default_factory=list)  # AssistantTurnEnd reasons
    tools: list[str] = field(default_factory=list)  # tools a delegation started
    seconds: float = 0.0


def converse(settings, shared, lines: Sequence[str]) -> tuple[list[Answer], str, list[str]]:
    """Type `lines` into one fresh session; the answers, the instructions the model read, the tool names."""
    from engine.llm.control import describe_actions
    from engine.runtime.session import open_session
    from engine.timeline import events as ev

    session = open_session(settings, persist=False, shared=shared)
    seen: list = []
    session.timeline.subscribe(seen.append)
    tools = [t["name"] for t in session.harness.tool_specs()] if session.harness is not None else []
    instructions = session.conversation.messages()[0].content + "\n" + describe_actions(session.conversation.tools)
    answers = []
    try:
        for line in lines:
            start = len(seen)
            started = time.monotonic()
            session.runtime.send_text(line)
            if not session.runtime.wait_idle(timeout=240):
                print(f"    (no answer to {line!r} within 240 s)")
            events = list(seen[start:])
            ends = [e for e in events if isinstance(e, ev.AssistantTurnEnd)]
            answers.append(Answer(
                line=line, text=" ".join(e.text.strip() for e in ends if e.text.strip()),
                raw="".join(e.text for e in events if isinstance(e, ev.AssistantToken)),
                reasons=[e.reason for e in ends],
                tools=[e.tool for e in events if isinstance(e, ev.DelegationDispatched)],
                seconds=time.monotonic() - started,
            ))
    finally:
        session.close()
    return answers, instructions, tools


def judge_model(model: str, conversations: Sequence[Sequence[str]]) -> dict[str, float]:
    """Run every conversation on `model` and print its counts; returns the rates."""
    from engine.runtime.session import load_shared
    from engine.settings import Settings

    settings = Settings()
    settings.llm.model = model
    started = time.monotonic()
    shared = load_shared(settings, speech=False)
    print(f"{model}: loaded in {time.monotonic() - started:.1f} s")
    answers: list[Answer] = []
    flagged: list[str] = []
    counts = dict.fromkeys(("leak", "leak_raw", "loop", "loop_raw", "overlong", "markup", "offer", "guard", "tool",
                            "empty"), 0)
    try:
        for lines in conversations:
            got, instructions, tools = converse(settings, shared, lines)
            for answer in got:
                answers.append(answer)
                leaked, leaked_raw = leak(answer.text, instructions, tools), leak(answer.raw, instructions, tools)
                checks = {"leak": leaked is not None, "leak_raw": leaked_raw is not None, "loop": loops(answer.text),
                          "loop_raw": loops(answer.raw), "overlong": overlong(answer.text),
                          "markup": bool(_MARKUP.search(answer.text)),
                          "offer": answer.text.rstrip().endswith(OFFER),
                          "guard": any(r.startswith("guard") for r in answer.reasons), "tool": bool(answer.tools),
                          "empty": not answer.text.strip()}
                for key, hit in checks.items():
                    counts[key] += hit
                problems = [k for k, hit in checks.items() if hit and k != "offer"]
                if problems:
                    why = leaked or leaked_raw or ""
                    flagged.append(f"    [{', '.join(problems)}] {answer.line!r} -> {answer.text[:160]!r}"
                                   + (f"\n        raw {answer.raw[:160]!r}" if answer.raw.strip() != answer.text else "")
                                   + (f"\n        {why}" if why else "")
                                   + (f"\n        tools {answer.tools}" if answer.tools else ""))
    finally:
        shared.close()
    n = len(answers)
    share = {k: v / max(1, n) for k, v in counts.items()}
    seconds = [a.seconds for a in answers]
    print(f"  {n} lines in {len(conversations)} conversations; answer time median {statistics.median(seconds):.1f} s, "
          f"max {max(seconds):.1f} s")
    print(f"  prompt leaks (said):  {counts['leak']:3d}   target 0   met: {'yes' if not counts['leak'] else 'NO'}"
          f"   (in the raw stream: {counts['leak_raw']})")
    print(f"  loops (said):         {counts['loop']:3d}   target 0   met: {'yes' if not counts['loop'] else 'NO'}"
          f"   (in the raw stream: {counts['loop_raw']})")
    print(f"  over-long answers:    {counts['overlong']:3d} = {share['overlong']:.3f}   target <= {TARGET_OVERLONG:.2f}   "
          f"met: {'yes' if share['overlong'] <= TARGET_OVERLONG else 'NO'}")
    print(f"  markup in what was said (e.g. </caption>): {counts['markup']}; cut by the spoken-length budget "
          f"(ends with {OFFER!r}): {counts['offer']}")
    print(f"  stopped by the reply guard: {counts['guard']}; a tool started: {counts['tool']}; "
          f"empty answers: {counts['empty']}")
    for line in flagged:
        print(line)
    return share


@contextlib.contextmanager
def throwaway_folders() -> Iterator[Path]:
    """Venus's config, data and log folders in a temporary folder (VENUS_*_DIR), for a benchmark's sessions."""
    with tempfile.TemporaryDirectory() as home:
        for name in ("CONFIG", "DATA", "LOG"):
            folder = Path(home) / name.lower()
            folder.mkdir()
            os.environ[f"VENUS_{name}_DIR"] = str(folder)
        yield Path(home)


def run_smalltalk(models: Sequence[str] = DEFAULT_MODELS, conversations: int | None = None) -> None:
    """The small-talk set on each model, in throwaway config, data and log folders."""
    chosen = load_conversations()[:conversations]
    print(f"small talk: {sum(len(c) for c in chosen)} lines typed into `venus chat`'s session, per model")
    with throwaway_folders():
        for model in models:
            judge_model(model, chosen)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.intents.smalltalk", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS))
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    args = parser.parse_args(argv)
    run_smalltalk(args.models, args.conversations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
