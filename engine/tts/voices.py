"""Which voice speaks a conversation language: a Piper voice for it when one is installed, else espeak-ng's.

The shipped Piper voice speaks English only. The catalog lists Piper voices in other languages
(`venus models get piper-es-es-davefx-medium`); until one is installed, espeak-ng (robotic, but installed with
Venus and speaking about a hundred languages) reads the answers in the right language rather than an English
voice reading Spanish.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.errors import ConfigError, VenusError
from engine.models.registry import all_entries, resolve, verify


@dataclass(frozen=True)
class VoiceChoice:
    """The voice for a language, and whether it is espeak-ng standing in for a Piper voice not installed."""

    engine: Literal["piper", "espeak"]
    voice: str  # a Piper model id or .onnx path, or an espeak-ng voice name
    fallback: bool = False  # espeak-ng speaks because no Piper voice for the language is installed
    suggestions: tuple[str, ...] = ()  # catalog ids of Piper voices for the language (`venus models get ID`)


def _base(code: str) -> str:
    return re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]


def piper_language(model_path: Path) -> str:
    """The language a Piper voice speaks ("es" for es_ES), from its .onnx.json; "" when it does not say."""
    config = Path(f"{model_path}.json")
    try:
        raw = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    language = raw.get("language") or {}
    code = language.get("family") or language.get("code") or (raw.get("espeak") or {}).get("voice") or ""
    return _base(code) if isinstance(code, str) else ""


def espeak_has_voice(language: str) -> bool:
    """True when espeak-ng is installed and has a voice for the language."""
    binary = shutil.which("espeak-ng")
    if binary is None or not re.fullmatch(r"[a-z]{2,3}", language):
        return False
    listed = subprocess.run([binary, f"--voices={language}"], capture_output=True, text=True, timeout=10, check=False)
    return any(_base(line.split()[1]) == language for line in listed.stdout.splitlines()[1:] if len(line.split()) > 1)


def catalog_voices(language: str) -> tuple[str, ...]:
    """Ids of the catalog's Piper voices for the language (empty when the catalog cannot be read)."""
    try:
        from engine.models.catalog import load_catalog

        return tuple(e.id for e in load_catalog().models if str(e.kind) == "tts" and language in e.languages)
    except (VenusError, OSError, ValueError):
        return ()


def _installed_piper(language: str) -> str | None:
    for entry in all_entries():
        if entry.kind == "tts" and not verify(entry, full=False) and piper_language(entry.primary) == language:
            return entry.id
    return None


def voice_for_language(language: str, engine: str, voice: str, espeak_voice: str = "en-us") -> VoiceChoice:
    """The voice for a conversation in `language`, given the configured tts.engine, tts.voice and tts.espeak_voice.

    English keeps the configured voice; so does another language when the configured voice already speaks it.
    Otherwise an installed Piper voice for the language, else espeak-ng's voice for it (`fallback`); a
    ConfigError when neither exists.
    """
    if language == "en":
        return VoiceChoice("espeak" if engine == "espeak" else "piper", voice)
    if engine == "piper":
        try:
            if piper_language(resolve(voice, "tts")) == language:
                return VoiceChoice("piper", voice)
        except VenusError:
            pass  # the configured voice is missing: the language's own voice is looked for below
    elif _base(spoken := voice if not voice.startswith("piper-") else espeak_voice) == language:
        return VoiceChoice("espeak", spoken)
    installed = _installed_piper(language)
    if installed is not None:
        return VoiceChoice("piper", installed)
    suggestions = catalog_voices(language)
    if espeak_has_voice(language):
        return VoiceChoice("espeak", language, fallback=True, suggestions=suggestions)
    get = f"`venus models get {suggestions[0]}`" if suggestions else "a Piper voice for it (`venus models import`)"
    raise ConfigError(f"no voice speaks {language!r} (conversation.language): no Piper voice for it is installed "
                      "and espeak-ng has none", fix=f"install {get}, or install espeak-ng")
