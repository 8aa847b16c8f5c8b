"""Speech recognition: faster-whisper behind a small Transcriber protocol, streamed by a worker thread."""

from engine.asr.whisper import (
    REQUEST_HINT,
    StreamingRecognizer,
    Transcriber,
    Transcript,
    WhisperOptions,
    WhisperTranscriber,
)

__all__ = ["REQUEST_HINT", "StreamingRecognizer", "Transcriber", "Transcript", "WhisperOptions", "WhisperTranscriber"]
