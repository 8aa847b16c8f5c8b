"""Speech synthesis: Piper and espeak-ng voices, and clause splitting for streaming."""

from engine.tts.clauses import split_clauses
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
    "proportional_words", "split_clauses",
]
