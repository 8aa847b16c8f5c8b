"""What the conversation language (`conversation.language`) changes in a session, decided in one place.

English is what every part was built and measured for, and nothing changes for it. Another language gets a
multilingual whisper told that language, a voice that speaks it (a Piper voice if one is installed, else
espeak-ng's), a system prompt that asks for answers in it, and the parts that read English words turned off
rather than misreading it: the lexical end-of-turn model (silence only instead), the English lexicons of the
overlap policy, the request words whisper is primed with, the local intents (English templates; the LLM
answers everything) and the spoken-answer budget (its offer to go on is an English sentence).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.asr.languages import asr_for_language, check_language
from engine.llm.context import language_instruction, language_name
from engine.llm.conversation import ConversationOptions
from engine.runtime.overlap import OverlapOptions, OverlapPolicy
from engine.runtime.runtime import RuntimeOptions
from engine.runtime.turn_taking import EndOfTurnDetector
from engine.settings import Settings
from engine.tts.voices import voice_for_language


@dataclass(frozen=True)
class LanguagePlan:
    """The settings a session runs on for its language, and what it tells the user about them."""

    language: str  # ISO 639-1 code, from conversation.language
    settings: Settings  # the user's settings with the language's model, voice and switches applied
    notices: tuple[str, ...] = ()  # what changed and what is missing, for the timeline

    @property
    def english(self) -> bool:
        """True when nothing changes: the conversation is in English."""
        return self.language == "en"

    def system_prompt(self, prompt: str) -> str:
        """The system prompt with the sentence that asks for answers in the language (unchanged for English)."""
        sentence = language_instruction(self.language)
        return f"{prompt.rstrip()} {sentence}" if sentence and sentence not in prompt else prompt

    def conversation_options(self, options: ConversationOptions) -> ConversationOptions:
        """The conversation's options with the language sentence in its system prompt."""
        render = dataclasses.replace(options.render, system_prompt=self.system_prompt(options.render.system_prompt))
        return dataclasses.replace(options, render=render)

    def end_of_turn(self) -> EndOfTurnDetector | None:
        """The end-of-turn detector for another language (silence only); None for English (the runtime's own)."""
        if self.english:
            return None
        return EndOfTurnDetector.for_language(self.language, self.settings.conversation.end_of_turn_silence_ms)

    def overlap(self) -> OverlapPolicy | None:
        """The overlap policy with its English lexicons off for another language; None for English."""
        if self.english:
            return None
        return OverlapPolicy(OverlapOptions(sensitivity=self.settings.conversation.duplex_sensitivity,
                                            english_words=False))

    def runtime_options(self, options: RuntimeOptions | None) -> RuntimeOptions | None:
        """The loop's options: the local intents (English templates) off for another language."""
        if self.english:
            return options
        return dataclasses.replace(options or RuntimeOptions(), local_intents=False)


def plan_language(settings: Settings, *, speech: bool) -> LanguagePlan:
    """The plan for `settings.conversation.language`; `speech` also chooses the whisper and the voice.

    Raises ConfigError for a language whisper does not know, and ModelNotFound (with the install command) when
    speech in another language than English has no multilingual whisper installed.
    """
    language = check_language(settings.conversation.language.strip().lower())
    if language == "en":
        return LanguagePlan(language, settings)
    name = language_name(language)
    notices = [f"The conversation is in {name}: Venus is asked to answer in {name}; everyday requests (timers, "
               "notes, ...) are recognised in English only, so the language model answers everything; the end of a "
               "turn is judged from silence alone, and speech over Venus from names, loudness and the voice."]
    asr, tts = settings.asr, settings.tts
    llm = settings.llm.model_copy(update={"max_spoken_sentences": 0})  # its offer ("Want me to go on?") is English
    if speech:
        choice = asr_for_language(language, asr.model, asr.language)
        asr = asr.model_copy(update={"model": choice.model, "language": choice.language, "request_hint": False})
        if choice.switched:
            notices.append(f"Speech recognition: {choice.model} (multilingual), since {settings.asr.model} knows "
                           "only English.")
        voice = voice_for_language(language, tts.engine, tts.voice, tts.espeak_voice)
        tts = tts.model_copy(update={"engine": voice.engine, "voice": voice.voice})
        if voice.fallback:
            get = f" (`venus models get {voice.suggestions[0]}` downloads one)" if voice.suggestions else ""
            notices.append(f"No Piper voice for {name} is installed{get}: espeak-ng's {voice.voice!r} voice speaks "
                           "instead.")
    effective = settings.model_copy(update={
        "asr": asr, "tts": tts, "llm": llm,
        "conversation": settings.conversation.model_copy(update={"language": language})})
    return LanguagePlan(language, effective, tuple(notices))
