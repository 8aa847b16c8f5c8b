"""What the conversation language (`conversation.language`) changes in a session, decided in one place.

English is what every part was built and measured for, and nothing changes for it. Another language gets a
multilingual whisper told that language, a voice that speaks it (a Piper voice if one is installed, else
espeak-ng's), a system prompt that asks for answers in it and no spoken-answer budget (its offer to go on is an
English sentence). The parts that read the user's words in English are turned off rather than let misread
another language: the lexical end-of-turn model (silence only instead), the English lexicons of the overlap
policy, the request words whisper is primed with and the local intents (English templates; the LLM answers
everything). Those follow the language the user speaks (`asr.language`, which follows the conversation's unless
set), the prompt and the voice the language Venus answers in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.asr.languages import asr_for_language, check_language, spoken_language
from engine.llm.context import language_instruction, language_name
from engine.llm.conversation import ConversationOptions
from engine.runtime.overlap import OverlapOptions, OverlapPolicy
from engine.runtime.runtime import RuntimeOptions
from engine.runtime.turn_taking import EndOfTurnDetector
from engine.settings import Settings
from engine.tts.voices import voice_for_language


@dataclass(frozen=True)
class LanguagePlan:
    """The settings a session runs on for its languages, and what it tells the user about them."""

    language: str  # the conversation's: Venus answers in it (conversation.language)
    spoken: str  # the user's: whisper listens for it ("" = detected each time); word cues need it to be "en"
    settings: Settings  # the user's settings with the languages' model, voice and switches applied
    notices: tuple[str, ...] = ()  # what changed and what is missing, for the timeline

    @property
    def english(self) -> bool:
        """True when nothing changes: the user speaks English and Venus answers in it."""
        return self.language == "en" and self.english_words

    @property
    def english_words(self) -> bool:
        """True when the user's words are English, so the cues read from English words apply."""
        return self.spoken == "en"

    def system_prompt(self, prompt: str) -> str:
        """The system prompt with the sentence that asks for answers in the language (unchanged for English)."""
        sentence = language_instruction(self.language)
        return f"{prompt.rstrip()} {sentence}" if sentence and sentence not in prompt else prompt

    def conversation_options(self, options: ConversationOptions) -> ConversationOptions:
        """The conversation's options with the language sentence in its system prompt."""
        render = dataclasses.replace(options.render, system_prompt=self.system_prompt(options.render.system_prompt))
        return dataclasses.replace(options, render=render)

    def end_of_turn(self) -> EndOfTurnDetector | None:
        """Silence only for words not in English; None for English (the runtime's own lexical detector)."""
        if self.english_words:
            return None
        return EndOfTurnDetector.for_language(self.spoken, self.settings.conversation.end_of_turn_silence_ms)

    def overlap(self) -> OverlapPolicy | None:
        """The overlap policy with its English lexicons off for words not in English; None for English."""
        if self.english_words:
            return None
        return OverlapPolicy(OverlapOptions(sensitivity=self.settings.conversation.duplex_sensitivity,
                                            english_words=False))

    def runtime_options(self, options: RuntimeOptions | None) -> RuntimeOptions | None:
        """The loop's options: the local intents (English templates) off for words not in English."""
        if self.english_words:
            return options
        return dataclasses.replace(options or RuntimeOptions(), local_intents=False)


def plan_language(settings: Settings, *, speech: bool) -> LanguagePlan:
    """The plan for `conversation.language` and `asr.language`; `speech` also chooses the whisper and the voice.

    Raises ConfigError for a language whisper does not know, and ModelNotFound (with the install command) when
    speech in another language than English has no multilingual whisper installed.
    """
    language = settings.conversation.language.strip().lower()
    spoken = spoken_language(language, settings.asr.language.strip().lower())
    if language == "en" and spoken == "en":
        return LanguagePlan(language, spoken, settings)
    check_language(language)
    if spoken:
        check_language(spoken, "asr.language")
    notices = []
    if language != "en":
        name = language_name(language)
        notices.append(f"The conversation is in {name}: Venus is asked to answer in {name}.")
    if spoken != "en":
        heard = f"in {language_name(spoken)}" if spoken else "in any language"
        notices.append(f"Speech is heard {heard}: everyday requests (timers, notes, ...) are recognised in English "
                       "only, so the language model answers everything; the end of a turn is judged from silence "
                       "alone, and speech over Venus from names, loudness and the voice.")
    asr, tts, llm = settings.asr, settings.tts, settings.llm
    if language != "en":
        llm = llm.model_copy(update={"max_spoken_sentences": 0})  # its offer ("Want me to go on?") is English
    if speech:
        choice = asr_for_language(spoken, asr.model)
        asr = asr.model_copy(update={"model": choice.model, "language": choice.language,
                                     "request_hint": asr.request_hint and spoken == "en"})
        if choice.switched:
            notices.append(f"Speech recognition: {choice.model} (multilingual), since {settings.asr.model} knows "
                           "only English.")
        voice = voice_for_language(language, tts.engine, tts.voice, tts.espeak_voice)
        tts = tts.model_copy(update={"engine": voice.engine, "voice": voice.voice})
        if voice.fallback:
            get = f" (`venus models get {voice.suggestions[0]}` downloads one)" if voice.suggestions else ""
            notices.append(f"No Piper voice for {language_name(language)} is installed{get}: espeak-ng's "
                           f"{voice.voice!r} voice speaks instead.")
    effective = settings.model_copy(update={
        "asr": asr, "tts": tts, "llm": llm,
        "conversation": settings.conversation.model_copy(update={"language": language})})
    return LanguagePlan(language, spoken, effective, tuple(notices))
