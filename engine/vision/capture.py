"""The capture worker: reads a frame source on its own thread, feeds the preview at full rate and hands
sampled frames to perception. A lost camera becomes a timeline notice and a retry, never a crash."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.errors import CameraError
from engine.timeline.events import Event, SystemNotice, UserSpeechEnd, UserSpeechStart
from engine.timeline.timeline import Timeline
from engine.vision.camera import FrameSource
from engine.vision.sampling import FrameSampler, SampleTrigger

log = logging.getLogger(__name__)

PreviewCallback = Callable[[np.ndarray, int], None]  # (BGR frame, session ms); must not modify the frame
SampleCallback = Callable[[np.ndarray, int, SampleTrigger], None]  # (BGR frame, session ms, why)


@dataclass(frozen=True)
class CaptureOptions:
    """How the capture worker treats a failing camera."""

    retry_interval_s: float = 2.0  # wait between attempts to reopen a lost camera
    max_retries: int | None = None  # give up after this many failed reopen attempts; None = keep trying

    def __post_init__(self) -> None:
        if self.retry_interval_s <= 0:
            raise ValueError(f"retry_interval_s must be positive, got {self.retry_interval_s}")
        if self.max_retries is not None and self.max_retries < 0:
            raise ValueError(f"max_retries must not be negative, got {self.max_retries}")


class CameraCapture:
    """Owns one frame source and its thread; `start` turns the camera on, `stop` turns it off."""

    def __init__(
        self,
        source: FrameSource,
        timeline: Timeline,
        on_sample: SampleCallback,
        sampler: FrameSampler | None = None,
        options: CaptureOptions | None = None,
    ) -> None:
        self.source = source
        self.timeline = timeline
        self.options = options or CaptureOptions()
        self._on_sample = on_sample
        self._sampler = sampler or FrameSampler()
        self._preview: list[PreviewCallback] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._user_speaking = False
        self._unsubscribe = timeline.subscribe(self._on_event)
        self.latest_frame: np.ndarray | None = None  # the newest frame, for requests ("what does this say?")
        self.latest_frame_ms = -1
        self.frames_read = 0

    # ---- control -------------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True while the capture thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Turn the camera on (idempotent); announces it on the timeline so the UI can show it."""
        if self.running:
            return
        self._stop.clear()
        # announce first, so "camera-on" precedes anything the worker reports
        self.timeline.append(
            SystemNotice(level="info", code="camera-on", text=f"camera on ({self.source.name})")
        )
        self._thread = threading.Thread(target=self._run, name="venus-camera", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Turn the camera off and wait for the thread; announces it on the timeline."""
        thread = self._thread
        self._stop.set()
        if thread is not None:
            thread.join(timeout_s)
            self._thread = None
            self.timeline.append(
                SystemNotice(level="info", code="camera-off", text=f"camera off ({self.source.name})")
            )
        self.latest_frame = None  # nothing of the camera outlives it being on

    def close(self) -> None:
        """Stop and detach from the timeline."""
        self.stop()
        self._unsubscribe()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait for the thread to finish by itself (a file that ended); True when it did."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout_s)
        return not thread.is_alive()

    def add_preview_callback(self, callback: PreviewCallback) -> Callable[[], None]:
        """Receive every frame (full rate, on the capture thread); returns a function that removes it."""
        with self._lock:
            self._preview.append(callback)

        def remove() -> None:
            with self._lock:
                if callback in self._preview:
                    self._preview.remove(callback)

        return remove

    # ---- worker --------------------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, UserSpeechStart):
            self._user_speaking = True
        elif isinstance(event, UserSpeechEnd):
            self._user_speaking = False

    def _notice(self, level: str, code: str, text: str) -> None:
        self.timeline.append(SystemNotice(level=level, code=code, text=text))

    def _open_with_retries(self) -> bool:
        failures = 0
        while not self._stop.is_set():
            try:
                self.source.open()
                if failures:
                    self._notice("info", "camera-restored", f"{self.source.name} is delivering frames again")
                return True
            except CameraError as exc:
                failures += 1
                if failures == 1:
                    self._notice(
                        "warning",
                        CameraError.code,
                        f"{exc}; retrying every {self.options.retry_interval_s:g} s",
                    )
                if self.options.max_retries is not None and failures > self.options.max_retries:
                    self._notice(
                        "error", CameraError.code, f"gave up on {self.source.name} after {failures} attempts"
                    )
                    return False
                self._stop.wait(self.options.retry_interval_s)
        return False

    def _run(self) -> None:
        try:
            self._capture_loop()
        except Exception as exc:  # a bug here must not take the assistant down; say so and stop the camera
            log.exception("camera worker failed")
            self._notice("error", CameraError.code, f"camera worker stopped: {exc}")
        finally:
            self.source.close()

    def _capture_loop(self) -> None:
        while not self._stop.is_set():
            if not self._open_with_retries():
                return
            while not self._stop.is_set():
                frame = self.source.read()
                if frame is None:
                    break
                self._deliver(frame)
            self.source.close()
            if self._stop.is_set():
                return
            if self.source.ended:
                self._notice("info", "camera-ended", f"{self.source.name} reached its end")
                return
            self._notice(
                "warning", CameraError.code, f"{self.source.name} stopped delivering frames; reconnecting"
            )
            self._stop.wait(self.options.retry_interval_s)

    def _deliver(self, frame: np.ndarray) -> None:
        t_ms = self.timeline.now_ms()
        self.frames_read += 1
        self.latest_frame, self.latest_frame_ms = frame, t_ms
        with self._lock:
            callbacks = list(self._preview)
        for callback in callbacks:
            try:
                callback(frame, t_ms)
            except Exception:  # a broken preview must not stop perception
                log.exception("preview callback %r failed", callback)
        trigger = self._sampler.consider(frame, t_ms / 1000.0, self._user_speaking)
        if trigger is not None:
            self._on_sample(frame, t_ms, trigger)
