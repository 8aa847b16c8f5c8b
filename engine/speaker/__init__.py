"""Who is speaking: speaker embeddings (a learned voice encoder and MFCC-pitch statistics) and the user's profile."""

from engine.speaker.profile import (
    CombinedEmbedder,
    MfccPitchEmbedder,
    SpeakerEmbedder,
    SpeakerEmbeddingOptions,
    SpeakerProfile,
    default_embedder,
)
from engine.speaker.voice_encoder import VoiceEncoder, VoiceEncoderEmbedder

__all__ = ["CombinedEmbedder", "MfccPitchEmbedder", "SpeakerEmbedder", "SpeakerEmbeddingOptions", "SpeakerProfile",
           "VoiceEncoder", "VoiceEncoderEmbedder", "default_embedder"]
