"""Perception on sampled frames: presence, attention and text become VideoObservations on the timeline.

Only derived facts go on the timeline. A frame is kept (in memory, keyed by frame_ref) only when a multimodal
model will look at it or the user opted in to storing frames.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import numpy as np

from engine.timeline.events import SystemNotice, VideoObservation
from engine.timeline.timeline import Timeline
from engine.vision.attention import AttentionOptions, AttentionTracker, FrameAttention, assess_faces
from engine.vision.faces import FaceDetector
from engine.vision.frames import FrameStore
from engine.vision.ocr import OcrResult, TextReader, normalise_text
from engine.vision.sampling import SampleTrigger

log = logging.getLogger(__name__)

_URGENT = frozenset(
    {SampleTrigger.SCENE_CHANGE, SampleTrigger.REQUEST}
)  # triggers a later periodic sample must not erase


@dataclass(frozen=True)
class PerceptionOptions:
    """Which work runs on which sampled frames."""

    ocr_enabled: bool = True  # read text at all
    ocr_triggers: frozenset[SampleTrigger] = frozenset(
        {SampleTrigger.SCENE_CHANGE, SampleTrigger.REQUEST}
    )  # OCR costs ~0.4 s
    keep_frames: bool = False  # put observed frames in the FrameStore (a multimodal model or opt-in storage)
    observe_scene_changes: bool = (
        False  # every new scene becomes an observation (so a multimodal model sees it)
    )

    def __post_init__(self) -> None:
        unknown = set(self.ocr_triggers) - set(SampleTrigger)
        if unknown:
            raise ValueError(f"ocr_triggers holds unknown triggers {sorted(unknown)}")


@dataclass(frozen=True)
class FrameFacts:
    """Everything perception derived from one frame (never the frame itself)."""

    t_ms: int
    trigger: SampleTrigger
    attention: FrameAttention
    ocr: OcrResult | None  # None when OCR did not run on this frame


class VisionPerception:
    """Runs detectors on sampled frames (on its own worker thread) and appends observations when facts change."""

    def __init__(
        self,
        timeline: Timeline,
        detector: FaceDetector,
        reader: TextReader | None = None,
        *,
        attention: AttentionOptions | None = None,
        frames: FrameStore | None = None,
        options: PerceptionOptions | None = None,
    ) -> None:
        self.timeline = timeline
        self.detector = detector
        self.reader = reader
        self.options = options or PerceptionOptions()
        self.frames = frames
        self.tracker = AttentionTracker(attention)
        self.last_text = ""  # the text currently in view ("" when none)
        self.last_facts: FrameFacts | None = None
        self.frames_processed = 0
        # detectors and the tracker are not thread-safe; requests and the worker share them
        self._work_lock = threading.RLock()
        self._slot: tuple[np.ndarray, int, SampleTrigger] | None = None
        self._slot_cv = threading.Condition()
        self._stopping = False
        self._busy = False  # a frame is being processed by the worker
        self._thread: threading.Thread | None = None

    # ---- synchronous core ----------------------------------------------------------------------------------

    def analyse(self, frame_bgr: np.ndarray, t_ms: int, trigger: SampleTrigger) -> FrameFacts:
        """Run the detectors on one frame; no timeline side effects."""
        with self._work_lock:
            faces = self.detector.detect(frame_bgr)
            attention = assess_faces(faces, self.tracker.options)
            ocr = None
            if self.reader is not None and self.options.ocr_enabled and trigger in self.options.ocr_triggers:
                ocr = self.reader.read(frame_bgr)
        return FrameFacts(t_ms=t_ms, trigger=trigger, attention=attention, ocr=ocr)

    def process(
        self,
        frame_bgr: np.ndarray,
        t_ms: int,
        trigger: SampleTrigger,
        *,
        force: bool = False,
        description: str = "",
    ) -> VideoObservation | None:
        """Analyse a sampled frame and append an observation when presence, attention or text changed (or `force`)."""
        with self._work_lock:
            facts = self.analyse(frame_bgr, t_ms, trigger)
            self.frames_processed += 1
            self.last_facts = facts
            attention_changed = self.tracker.update(facts.attention, t_ms / 1000.0)
            new_text = ""
            if facts.ocr is not None:
                current = facts.ocr.text
                if current and normalise_text(current) != normalise_text(self.last_text):
                    new_text = current
                self.last_text = current
            new_scene = self.options.observe_scene_changes and trigger == SampleTrigger.SCENE_CHANGE
            if not (attention_changed or new_text or new_scene or force):
                return None
            state = self.tracker.state
            assert state is not None  # update() always sets it
            frame_ref = (
                self.frames.put(frame_bgr, t_ms)
                if self.frames is not None and self.options.keep_frames
                else ""
            )
            observation = VideoObservation(
                t_ms=t_ms,
                person_present=state.person_present,
                facing_screen=state.facing_screen,
                text_seen=new_text or (self.last_text if force else ""),
                description=description,
                frame_ref=frame_ref,
                faces=facts.attention.faces,
                trigger=str(trigger),
            )
        return self.timeline.append(observation)  # type: ignore[return-value]

    # ---- worker thread -------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker that processes submitted frames (idempotent)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="venus-vision", daemon=True)
        self._thread.start()

    def submit(self, frame_bgr: np.ndarray, t_ms: int, trigger: SampleTrigger) -> None:
        """Queue a sampled frame; a frame still waiting is replaced (perception never falls behind the camera)."""
        with self._slot_cv:
            if self._slot is not None and self._slot[2] in _URGENT and trigger not in _URGENT:
                trigger = self._slot[
                    2
                ]  # the newer frame still shows the new scene: keep its OCR and observation
            self._slot = (frame_bgr, t_ms, trigger)
            self._slot_cv.notify()

    def drain(self, timeout_s: float = 30.0) -> bool:
        """Wait until no submitted frame is waiting or being processed; True when idle."""
        with self._slot_cv:
            return self._slot_cv.wait_for(lambda: self._slot is None and not self._busy, timeout_s)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the worker after the frame in progress; a waiting frame is dropped."""
        with self._slot_cv:
            self._stopping = True
            self._slot = None
            self._slot_cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def _run(self) -> None:
        while True:
            with self._slot_cv:
                self._slot_cv.wait_for(lambda: self._slot is not None or self._stopping)
                if self._stopping:
                    return
                assert self._slot is not None
                frame, t_ms, trigger = self._slot
                self._slot = None
                self._busy = True
            try:
                self.process(frame, t_ms, trigger)
            except Exception as exc:  # one bad frame must not end perception; say it once per failure
                log.exception("vision perception failed on a frame")
                self.timeline.append(
                    SystemNotice(
                        level="warning", code="vision-failed", text=f"could not analyse a frame: {exc}"
                    )
                )
            finally:
                with self._slot_cv:
                    self._busy = False
                    self._slot_cv.notify_all()
