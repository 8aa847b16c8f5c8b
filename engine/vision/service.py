"""The camera path assembled from settings: capture, sampling, perception, OCR and an optional multimodal model."""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from engine import paths
from engine.errors import VenusError
from engine.settings import CameraSettings
from engine.timeline.events import SystemNotice, VideoObservation
from engine.timeline.timeline import Timeline
from engine.vision._cv import cv2
from engine.vision.attention import AttentionOptions
from engine.vision.camera import FrameSource, source_for_device
from engine.vision.capture import CameraCapture, CaptureOptions, PreviewCallback
from engine.vision.faces import CenterFaceDetector, FaceDetector
from engine.vision.frames import FrameStore
from engine.vision.multimodal import MultimodalModel, MultimodalOptions
from engine.vision.ocr import RapidTextReader, TextReader
from engine.vision.perception import PerceptionOptions, VisionPerception
from engine.vision.sampling import FrameSampler, SampleTrigger, SamplingOptions

log = logging.getLogger(__name__)


def describe_observation(observation: VideoObservation, multimodal_name: str = "") -> str:
    """A plain sentence of what Venus sees and what it cannot, for answers such as "what am I holding?"."""
    parts = []
    if observation.person_present is None:
        parts.append("The camera has not looked yet.")
    elif not observation.person_present:
        parts.append("I don't see anyone in front of the camera.")
    elif observation.facing_screen:
        parts.append(
            "I can see you, facing the screen."
            if observation.faces <= 1
            else f"I can see {observation.faces} people; someone is facing the screen."
        )
    else:
        parts.append("I can see you, but you are turned away from the screen.")
    if observation.text_seen:
        parts.append(f"The text I can read says: {' / '.join(observation.text_seen.splitlines())}.")
    if observation.description:
        parts.append(observation.description)
    elif not multimodal_name:
        parts.append(
            "I can only tell whether someone is there and facing me, and read printed text; "
            "I can't recognise objects because no multimodal model is set up."
        )
    return " ".join(parts)


class VisionService:
    """Venus's eyes: `start` turns the camera on, `look` answers requests, observations go on the timeline."""

    def __init__(
        self,
        settings: CameraSettings,
        timeline: Timeline,
        *,
        source: FrameSource | None = None,
        detector: FaceDetector | None = None,
        reader: TextReader | None = None,
        multimodal: MultimodalModel | None = None,
    ) -> None:
        self.settings = settings
        self.timeline = timeline
        self.multimodal = multimodal if multimodal is not None else self._multimodal_from_settings(settings)
        store_dir = paths.data_dir() / "frames" if settings.store_frames else None
        keep = settings.store_frames or self.multimodal is not None
        self.frames = FrameStore(store_dir=store_dir) if keep else None
        self.perception = VisionPerception(
            timeline,
            detector or CenterFaceDetector.from_registry(settings.face_model),
            reader if reader is not None else (RapidTextReader() if settings.ocr_enabled else None),
            attention=AttentionOptions(
                facing_max_yaw_deg=settings.facing_max_yaw_deg, away_after_s=settings.away_after_s
            ),
            frames=self.frames,
            options=PerceptionOptions(
                ocr_enabled=settings.ocr_enabled,
                keep_frames=keep,
                observe_scene_changes=self.multimodal is not None,
            ),
        )
        sampler = FrameSampler(
            SamplingOptions(
                speaking_fps=settings.sample_fps_speaking,
                quiet_fps=settings.sample_fps_quiet,
                scene_change_threshold=settings.scene_change_threshold,
            )
        )
        self.capture = CameraCapture(
            source or source_for_device(settings.device),
            timeline,
            self.perception.submit,
            sampler,
            CaptureOptions(retry_interval_s=settings.retry_interval_s),
        )

    @staticmethod
    def _multimodal_from_settings(settings: CameraSettings) -> MultimodalModel | None:
        if not settings.multimodal_model:
            return None
        options = MultimodalOptions(
            model=settings.multimodal_model,
            projector=settings.multimodal_projector,
            chat_format=settings.multimodal_chat_format,
        )
        return MultimodalModel(options)  # checks the files now; loads the weights on first use

    @property
    def active_mode(self) -> str:
        """What settings should show: the multimodal model in use, or presence and OCR only."""
        if self.multimodal is not None:
            return f"multimodal: {self.multimodal.name}"
        return "presence and text reading (OCR)" if self.settings.ocr_enabled else "presence only"

    @property
    def is_on(self) -> bool:
        """True while the camera is capturing."""
        return self.capture.running

    def start(self) -> None:
        """Turn the camera on: perception worker first, then capture."""
        self.perception.start()
        self.capture.start()

    def stop(self) -> None:
        """Turn the camera off and forget in-memory frames."""
        self.capture.stop()
        self.perception.stop()
        if self.frames is not None:
            self.frames.clear()

    def add_preview_callback(self, callback: PreviewCallback) -> Callable[[], None]:
        """Every frame at full rate for the UI (BGR numpy, session ms); returns a function that removes it."""
        return self.capture.add_preview_callback(callback)

    def add_frame_sink(self, sink: Callable[[np.ndarray], None]) -> Callable[[], None]:
        """Like add_preview_callback for a sink that takes only the frame (the app bridge's `post_frame`)."""
        return self.capture.add_preview_callback(lambda frame, _t_ms: sink(frame))

    def look(self, question: str = "") -> VideoObservation:
        """Look now (for "what does this say?" or "what am I holding?"): always appends an observation."""
        frame, t_ms = self.capture.latest_frame, self.capture.latest_frame_ms
        if frame is None:
            text = "the camera is off" if not self.is_on else "the camera has not delivered a frame yet"
            return self.timeline.append(
                VideoObservation(description=f"I can't look: {text}.", trigger=str(SampleTrigger.REQUEST))
            )  # type: ignore[return-value]
        description = ""
        if self.multimodal is not None and question:
            ok, jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
            try:
                description = self.multimodal.ask(question, [jpeg.tobytes()]) if ok else ""
            except (VenusError, ValueError) as exc:
                self.timeline.append(SystemNotice(level="warning", code="multimodal-failed", text=str(exc)))
        observation = self.perception.process(
            frame, t_ms, SampleTrigger.REQUEST, force=True, description=description
        )
        assert observation is not None  # force=True always appends
        return observation

    def close(self) -> None:
        """Stop everything and free the models."""
        self.stop()
        self.capture.close()
        if self.multimodal is not None:
            self.multimodal.close()
