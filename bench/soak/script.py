"""The soak's scripted conversation: the user's side as one long 16 kHz WAV, plus the MCP calls the bench makes.

The user (one espeak-ng voice, as one person talks to Venus for half an hour) cycles through plain questions,
requests the local intents turn into tasks (the time, arithmetic, timers, notes), long requests interrupted a few
seconds into Venus's answer, and a spoken request for the MCP server's tools. Each turn is followed by silence long
enough for Venus to answer it. The MCP calls themselves are made by the bench through the session's harness on a
schedule (docs/BENCHMARKS.md, "Soak"): no local intent reaches an MCP tool and the tiny default model answers such
requests in words.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from bench.duplex.scenario_text import INTERRUPTIONS, LONG_REQUESTS, QUESTIONS
from bench.duplex.synth import SAMPLE_RATE, SpeechCache, Voice

USER_VOICE = Voice("en-us", 165, 50)
USER_RMS_DB = -20.0  # the user's speech level in the mic file (dBFS, RMS), as in bench/duplex
NOISE_RMS_DB = -65.0  # a faint room hiss, so the mic is never digital silence

# What the local intents answer without the LLM (engine/intents; each phrasing checked against the matcher).
TIME_REQUESTS = ("What time is it?", "What's the time?", "Tell me the time.")
ARITHMETIC = ("What is 12 times 14?", "What is 250 divided by 5?", "What is 17 plus 25?", "How much is 9 times 8?")
TIMERS = ("Set a timer for 30 seconds.", "Set a timer for 45 seconds.", "Set a timer for one minute.")
NOTES = ("Take a note: buy milk.", "Take a note: call the dentist on Monday.", "Make a note to water the plants.")
# Asked aloud; the 135M model answers these in words, so the soak also counts whether it ever calls the tool.
MCP_REQUESTS = ("Use the soak add tool to add 2 and 40.", "Ask the soak server to echo hello.",
                "Use the word count tool on the quick brown fox.")

# Silence after each kind of turn before the user speaks again (s): room for Venus's whole answer.
GAP_S = {"question": 15.0, "time": 7.0, "arithmetic": 7.0, "timer": 7.0, "note": 7.0, "mcp_request": 12.0,
         "interruption": 15.0}
INTERRUPT_AFTER_S = 3.0  # the interruption starts this long after the long request ends (Venus ~2 s into it)
CYCLE = ("question", "time", "arithmetic", "interruption", "timer", "question", "note", "mcp_request",
         "interruption")

MCP_EVERY_S = 20.0  # one bench-side MCP call this often
MCP_CANCEL_AFTER_S = 2.0  # every fourth call is a long `wait` the bench cancels after this long


@dataclass(frozen=True)
class Turn:
    """One stretch of the user's speech in the mic file."""

    start_s: float  # on the mic file's clock
    end_s: float
    kind: str  # a key of GAP_S, or "long" for the request an interruption cuts
    text: str


@dataclass(frozen=True)
class McpCall:
    """A call of the soak server's tool the bench submits through the harness at `at_s` (mic clock)."""

    at_s: float
    tool: str  # the registry's name, "<server>__<tool>"
    arguments: dict[str, Any] = field(default_factory=dict)
    cancel_after_s: float | None = None  # cancel the task this long after submitting it


@dataclass(frozen=True)
class Script:
    """The whole soak: the user's turns and the bench's MCP calls."""

    seconds: float
    turns: tuple[Turn, ...]
    mcp_calls: tuple[McpCall, ...]

    def save(self, path: Path) -> None:
        """Write the script as JSON (the session process reads the MCP calls from it)."""
        path.write_text(json.dumps(asdict(self), indent=1), encoding="utf-8")

    @staticmethod
    def load(path: Path) -> Script:
        """Read a script written by `save`."""
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Script(raw["seconds"], tuple(Turn(**t) for t in raw["turns"]),
                      tuple(McpCall(**c) for c in raw["mcp_calls"]))


def _pick(kind: str, rng: random.Random) -> str:
    pools = {"question": QUESTIONS, "time": TIME_REQUESTS, "arithmetic": ARITHMETIC, "timer": TIMERS,
             "note": NOTES, "mcp_request": MCP_REQUESTS}
    return rng.choice(pools[kind])


def plan(seconds: float, seed: int = 1, server: str = "soak") -> Script:
    """The turns and MCP calls of a soak lasting `seconds` of mic audio (text and times only, no audio)."""
    if seconds < 60:
        raise ValueError(f"a soak needs at least 60 s of conversation, got {seconds}")
    rng = random.Random(seed)
    cache = SpeechCache()
    turns: list[Turn] = []
    t, i = 3.0, 0
    while True:
        kind = CYCLE[i % len(CYCLE)]
        i += 1
        if kind == "interruption":
            request, (cut_in, _) = rng.choice(LONG_REQUESTS), rng.choice(INTERRUPTIONS)
            spoken = [(request, "long", 0.0), (cut_in, "interruption", INTERRUPT_AFTER_S)]
        else:
            spoken = [(_pick(kind, rng), kind, 0.0)]
        placed: list[Turn] = []
        for text, turn_kind, delay in spoken:
            start = (placed[-1].end_s + delay) if placed else t
            length = cache.render(text, USER_VOICE).size / SAMPLE_RATE
            placed.append(Turn(round(start, 3), round(start + length, 3), turn_kind, text))
        if placed[-1].end_s + GAP_S[kind] > seconds:
            break
        turns.extend(placed)
        t = placed[-1].end_s + GAP_S[kind]
    calls: list[McpCall] = []
    for n, at in enumerate(np.arange(10.0, seconds - 10.0, MCP_EVERY_S)):
        at = round(float(at), 3)
        if n % 4 == 0:
            calls.append(McpCall(at, f"{server}__add", {"a": n, "b": 40}))
        elif n % 4 == 1:
            calls.append(McpCall(at, f"{server}__echo", {"text": f"soak call {n}"}))
        elif n % 4 == 2:
            calls.append(McpCall(at, f"{server}__word_count", {"text": rng.choice(QUESTIONS)}))
        else:
            calls.append(McpCall(at, f"{server}__wait", {"seconds": 30}, cancel_after_s=MCP_CANCEL_AFTER_S))
    return Script(seconds, tuple(turns), tuple(calls))


def _rms_db(audio: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(audio.astype(np.float64) ** 2)) + 1e-12))


def render(script: Script, path: Path, seed: int = 1) -> Path:
    """Write the user's side of `script` as a 16 kHz mono 16-bit WAV at `path`."""
    cache = SpeechCache()
    rng = np.random.default_rng(seed)
    track = (rng.standard_normal(int(script.seconds * SAMPLE_RATE)) * 10 ** (NOISE_RMS_DB / 20)).astype(np.float32)
    for turn in script.turns:
        clip = cache.render(turn.text, USER_VOICE)
        clip = clip * np.float32(10 ** ((USER_RMS_DB - _rms_db(clip)) / 20))
        start = int(round(turn.start_s * SAMPLE_RATE))
        end = min(track.size, start + clip.size)
        track[start:end] += clip[: end - start]
    sf.write(str(path), np.clip(track, -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16")
    return path
