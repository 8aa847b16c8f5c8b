"""Speech recognition: faster-whisper behind a small Transcriber protocol, streamed by a worker thread."""

from engine.asr.whisper import (
    StreamingRecognizer,
    Transcriber,
    Transcript,
    WhisperOptions,
    WhisperTranscriber,
)

__all__ = ["StreamingRecognizer", "Transcriber", "Transcript", "WhisperOptions", "WhisperTranscriber"]
