"""Speech synthesis: Piper and espeak-ng voices, clause splitting for streaming, and text made speakable."""

from engine.tts.clauses import split_clauses
from engine.tts.normalize import speakable
from engine.tts.synth import (
    EspeakSynthesizer,
    PiperSynthesizer,
    SynthesizedClause,
    Synthesizer,
    TimedWord,
    VoiceOptions,
    proportional_words,
)

__all__ = [
    "EspeakSynthesizer", "PiperSynthesizer", "SynthesizedClause", "Synthesizer", "TimedWord", "VoiceOptions",
    "proportional_words", "speakable", "split_clauses",
]
