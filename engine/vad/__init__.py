"""Voice activity detection: Silero VAD frames in, speech segments out."""

from engine.vad.silero import (
    FRAME_SAMPLES,
    SAMPLE_RATE,
    SegmenterOptions,
    SileroVad,
    SpeechProbability,
    VadSegmenter,
    VadTransition,
)

__all__ = [
    "FRAME_SAMPLES", "SAMPLE_RATE", "SegmenterOptions", "SileroVad", "SpeechProbability", "VadSegmenter",
    "VadTransition",
]
