"""Speech recognition: faster-whisper behind a small Transcriber protocol, streamed by a worker thread."""

from engine.asr.languages import (
    MULTILINGUAL_MODEL,
    AsrChoice,
    asr_for_language,
    check_language,
    is_multilingual,
    spoken_language,
)
from engine.asr.whisper import (
    REQUEST_HINT,
    StreamingRecognizer,
    Transcriber,
    Transcript,
    WhisperOptions,
    WhisperTranscriber,
)

__all__ = [
    "MULTILINGUAL_MODEL", "REQUEST_HINT", "AsrChoice", "StreamingRecognizer", "Transcriber", "Transcript",
    "WhisperOptions", "WhisperTranscriber", "asr_for_language", "check_language", "is_multilingual",
    "spoken_language",
]
