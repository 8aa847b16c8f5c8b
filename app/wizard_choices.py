"""What the first-run wizard offers to choose from: devices, voices, languages, a model for this machine, tools.

No widgets here: each function reads the machine (PortAudio, espeak-ng, the model registry, the harness) and returns
plain records, so the pages only show them and the choices are testable without widgets.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psutil

from app.settings_audio import list_devices
from app.settings_fields import LANGUAGES as SETTINGS_LANGUAGES
from engine.models import all_entries, verify
from engine.settings import HarnessSettings

# Decoding reads every weight once per token; one core streams about 2.5 GB/s, and a spoken answer needs about
# 10 tokens a second, so each core the LLM gets carries about 250 MB of weights at speaking pace.
BYTES_PER_CORE = 250_000_000
# The LLM shares memory with whisper, the voice, the KV cache and the desktop: its file gets at most this share.
RAM_SHARE = 0.25

# The same languages as Settings → General (one list, app/settings_fields.py), as code -> name.
LANGUAGES = {code: name for name, code in SETTINGS_LANGUAGES}


@dataclass(frozen=True)
class Choice:
    """One entry of a wizard list: what is saved, what is shown, and why it cannot be chosen (empty = it can)."""

    value: str | int | None
    label: str
    unavailable: str = ""


@dataclass(frozen=True)
class Machine:
    """What the model recommendation looks at."""

    ram_bytes: int
    cores: int  # physical cores

    @classmethod
    def this(cls) -> Machine:
        """This computer."""
        return cls(psutil.virtual_memory().total, psutil.cpu_count(logical=False) or psutil.cpu_count() or 1)

    def describe(self) -> str:
        """"2 cores, 7.8 GB of memory"."""
        return f"{self.cores} core{'s' if self.cores != 1 else ''}, {self.ram_bytes / 1e9:.1f} GB of memory"


@dataclass(frozen=True)
class ModelOption:
    """An installed LLM and what the recommendation found about it."""

    id: str
    title: str
    size_bytes: int
    chat: bool  # its file has a chat template (a base model reads a written dialogue instead)
    fits: bool


@dataclass(frozen=True)
class Recommendation:
    """The LLM recommended for this machine, the installed ones it was chosen from, and the reason in words."""

    model_id: str | None
    options: tuple[ModelOption, ...]
    reason: str


def audio_devices(kind: str) -> list[Choice]:
    """The system default, then every PortAudio device with `kind` ("input" or "output") channels: the same list as
    Settings → Audio devices (app/settings_audio.py)."""
    devices = list_devices()
    names = devices.inputs if kind == "input" else devices.outputs
    # PortAudio missing or no device at all: the default stays, marked with why its check will fail
    return [Choice(None, f"System default {kind}", "" if names else devices.problem),
            *(Choice(name, name) for name in names)]


def voices() -> list[Choice]:
    """Installed Piper voices (value "piper:<id>"), then the espeak-ng English voices when espeak-ng is here."""
    choices = []
    for entry in all_entries():
        if entry.kind == "tts":
            problems = verify(entry, full=False)
            choices.append(Choice(f"piper:{entry.id}", entry.title, "; ".join(problems)))
    espeak = shutil.which("espeak-ng")
    names = _espeak_voices(espeak) if espeak else []
    choices += [Choice(f"espeak:{name}", f"espeak-ng {name} (light, robotic)") for name in names]
    if not espeak:
        choices.append(Choice("espeak:en-us", "espeak-ng en-us (light, robotic)", "espeak-ng is not installed"))
    return choices


def _espeak_voices(binary: str) -> list[str]:
    try:
        listing = subprocess.run([binary, "--voices=en"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ["en-us"]
    rows = [line.split() for line in listing.splitlines()[1:]]
    # mbrola voices ("mb/...") need the separate mbrola program; "!v/" rows are variants, not voices
    names = [row[1] for row in rows if len(row) > 4 and row[0].isdigit() and not row[4].startswith(("mb/", "!v/"))]
    return sorted(set(names), key=lambda n: (n != "en-us", n))


def asr_languages(model: str) -> set[str]:
    """Languages the speech recognition model `model` understands: a whisper "-en" model knows only English; a
    model given by path, or with no "-en", is taken at its word (all of them)."""
    entry = next((e for e in all_entries() if e.id == model and e.kind == "asr"), None)
    if entry is None:
        return set(LANGUAGES)
    known = entry.extra.get("languages")
    if known:
        return set(known)
    return {"en"} if entry.id.endswith(("-en", ".en")) else set(LANGUAGES)


def languages(asr_model: str) -> list[Choice]:
    """Every language Venus has words for; those the speech recognition model does not hear say why."""
    heard = asr_languages(asr_model)
    return [Choice(code, name, "" if code in heard else f"needs a multilingual speech model ({asr_model} is not)")
            for code, name in LANGUAGES.items()]


def recommend_model(machine: Machine | None = None) -> Recommendation:
    """The installed LLM for this machine: the largest chat model whose file fits the cores and the memory.

    The choice is among the installed models (the wizard shows the catalog's recommendation beside it, with a Get);
    a base model (no chat template) is recommended only when no chat model fits.
    """
    from engine.models.gguf import read_gguf

    machine = machine or Machine.this()
    budget = min(BYTES_PER_CORE * machine.cores, int(RAM_SHARE * machine.ram_bytes))
    options = []
    for entry in all_entries():
        if entry.kind != "llm" or verify(entry, full=False):
            continue
        path = entry.primary
        try:
            chat = read_gguf(path).chat_template is not None
        except Exception:  # an unreadable header: listed, never recommended
            chat = False
        size = path.stat().st_size
        options.append(ModelOption(entry.id, entry.title, size, chat, size <= budget))
    options.sort(key=lambda o: o.size_bytes)
    fitting = [o for o in options if o.fits]
    best = max(fitting, key=lambda o: (o.chat, o.size_bytes), default=None)
    where = f"this machine ({machine.describe()}: up to {budget / 1e6:.0f} MB of weights)"
    if best is None:
        smallest = options[0].id if options else None
        reason = (f"None of the installed models fits {where}; {smallest} is the smallest." if options
                  else "No language model is installed: run `venus models install`.")
        return Recommendation(smallest, tuple(options), reason)
    kind = "chat model" if best.chat else "model (a base model: no chat model fits)"
    return Recommendation(best.id, tuple(options), f"{best.title} is the largest installed {kind} that fits {where}.")


def describe_tools(settings: HarnessSettings) -> list[dict]:
    """Every tool as `venus tools` lists it, from a harness on a scratch store (the real tasks are not touched)."""
    from harness import Harness

    with tempfile.TemporaryDirectory(prefix="venus-wizard-") as scratch:
        harness = Harness(settings, lambda _event: None, store_path=Path(scratch) / "tasks.db")
        try:
            harness.wait_mcp_started(10)
            return harness.describe_tools()
        finally:
            harness.shutdown()


def tools_summary(rows: list[dict]) -> list[str]:
    """The tools in three sentences by level, unavailable ones marked, as the wizard shows them."""

    def names(level: str) -> str:
        return ", ".join(r["name"].replace("_", " ") + ("" if r["available"] else " (not on this computer)")
                         for r in rows if r["level"] == level) or "none"

    return [
        f"Runs without asking (stays inside Venus or your allowed folders): {names('allow')}.",
        f"Asks you first, every time, showing what it will do: {names('ask')}.",
        f"Off (the shell can be raised to ask, never to run unasked): {names('off')}.",
    ]
