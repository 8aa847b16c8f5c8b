"""Venus's camera path: capture, sampling, presence and attention, OCR and multimodal models on the timeline."""

from engine.vision.attention import (
    AttentionCue,
    AttentionOptions,
    AttentionState,
    AttentionTracker,
    FrameAttention,
    addressee_cue,
    assess_faces,
    is_facing,
    latest_attention,
    should_hold_proactive,
)
from engine.vision.camera import FrameSource, OpenCVCamera, VideoFileCamera, source_for_device
from engine.vision.capture import CameraCapture, CaptureOptions, PreviewCallback, SampleCallback
from engine.vision.faces import (
    DEFAULT_FACE_MODEL,
    CenterFaceDetector,
    Face,
    FaceDetector,
    FaceDetectorOptions,
)
from engine.vision.frames import FrameStore
from engine.vision.multimodal import (
    CHAT_HANDLERS,
    MultimodalModel,
    MultimodalOptions,
    context_images,
    guess_chat_format,
)
from engine.vision.ocr import OcrOptions, OcrResult, RapidTextReader, TextLine, TextReader, normalise_text
from engine.vision.perception import FrameFacts, PerceptionOptions, VisionPerception
from engine.vision.sampling import FrameSampler, SampleTrigger, SamplingOptions
from engine.vision.service import VisionService, describe_observation

__all__ = [
    "CHAT_HANDLERS",
    "DEFAULT_FACE_MODEL",
    "AttentionCue",
    "AttentionOptions",
    "AttentionState",
    "AttentionTracker",
    "CameraCapture",
    "CaptureOptions",
    "CenterFaceDetector",
    "Face",
    "FaceDetector",
    "FaceDetectorOptions",
    "FrameAttention",
    "FrameFacts",
    "FrameSampler",
    "FrameSource",
    "FrameStore",
    "MultimodalModel",
    "MultimodalOptions",
    "OcrOptions",
    "OcrResult",
    "OpenCVCamera",
    "PerceptionOptions",
    "PreviewCallback",
    "RapidTextReader",
    "SampleCallback",
    "SampleTrigger",
    "SamplingOptions",
    "TextLine",
    "TextReader",
    "VideoFileCamera",
    "VisionPerception",
    "VisionService",
    "addressee_cue",
    "assess_faces",
    "context_images",
    "describe_observation",
    "guess_chat_format",
    "is_facing",
    "latest_attention",
    "normalise_text",
    "should_hold_proactive",
    "source_for_device",
]
