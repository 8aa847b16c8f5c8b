"""The dual-loop runtime: turn-taking and overlap policies, the foreground loop, and session building."""

from engine.runtime.cues import AddresseeCues, addressee_cues
from engine.runtime.mouth import Mouth, TextMouth, Utterance
from engine.runtime.overlap import (
    ConversationContext,
    OverlapFeatures,
    OverlapOptions,
    OverlapPolicy,
    OverlapVerdict,
)
from engine.runtime.overlap_tracker import OverlapAction, OverlapStep, OverlapTracker
from engine.runtime.runtime import Runtime, RuntimeOptions
from engine.runtime.turn_taking import EndOfTurnDetector, EndOfTurnOptions, EndOfTurnVerdict
from engine.speaker import SpeakerProfile

__all__ = [
    "AddresseeCues", "addressee_cues", "ConversationContext", "EndOfTurnDetector", "EndOfTurnOptions", "EndOfTurnVerdict", "Mouth", "OverlapFeatures",
    "OverlapAction", "OverlapOptions", "OverlapPolicy", "OverlapStep", "OverlapTracker", "OverlapVerdict", "Runtime", "RuntimeOptions", "SpeakerProfile",
    "TextMouth", "Utterance",
]
