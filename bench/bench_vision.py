"""Vision: CPU per sampled frame (median, per stage) and the idle cost of having the camera on.

Run: .venv/bin/python -m bench.bench_vision [SECONDS]   (seconds per idle phase, default 10). Needs the
dev extra (scikit-image photographs) and the installed face model. CPU is process CPU time, so on a shared
machine the ratios printed side by side are what to read, not the absolute numbers.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.settings import CameraSettings
from engine.timeline import Timeline
from engine.vision import CenterFaceDetector, RapidTextReader, SampleTrigger, VisionPerception, VisionService
from engine.vision._cv import cv2

FRAME = (640, 480)


def _frames() -> dict[str, np.ndarray]:
    from skimage import data

    def fit(rgb: np.ndarray) -> np.ndarray:
        bgr = cv2.cvtColor(rgb, cv2.COLOR_GRAY2BGR if rgb.ndim == 2 else cv2.COLOR_RGB2BGR)
        scale = min(FRAME[0] / bgr.shape[1], FRAME[1] / bgr.shape[0])
        small = cv2.resize(bgr, (round(bgr.shape[1] * scale), round(bgr.shape[0] * scale)))
        canvas = np.full((FRAME[1], FRAME[0], 3), 90, np.uint8)
        top, left = (FRAME[1] - small.shape[0]) // 2, (FRAME[0] - small.shape[1]) // 2
        canvas[top : top + small.shape[0], left : left + small.shape[1]] = small
        return canvas

    card = np.full((FRAME[1], FRAME[0], 3), 40, np.uint8)
    cv2.rectangle(card, (120, 160), (520, 320), (245, 245, 240), -1)
    cv2.putText(card, "MILK 2 LITRES", (140, 230), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (20, 20, 20), 3)
    return {"face": fit(data.astronaut()), "empty": fit(data.coffee()), "text": card}


def _cpu_ms(fn, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        samples.append((time.process_time() - start) * 1000)
    return samples


def per_frame_costs(repeats: int = 15) -> None:
    """Median CPU ms per sampled frame for each stage, side by side."""
    frames = _frames()
    detector = CenterFaceDetector.from_registry()
    reader = RapidTextReader()
    reader.read(frames["text"])  # load the OCR models outside the measurement
    perception = VisionPerception(Timeline(), detector, reader)
    rows = {
        "face detection (face frame)": _cpu_ms(lambda: detector.detect(frames["face"]), repeats),
        "face detection (empty frame)": _cpu_ms(lambda: detector.detect(frames["empty"]), repeats),
        "OCR (text card)": _cpu_ms(lambda: reader.read(frames["text"]), repeats),
        "OCR (face frame, no text)": _cpu_ms(lambda: reader.read(frames["face"]), repeats),
        "sample, periodic (faces only)": _cpu_ms(
            lambda: perception.process(frames["face"], 0, SampleTrigger.QUIET), repeats
        ),
        "sample, scene change (faces + OCR)": _cpu_ms(
            lambda: perception.process(frames["text"], 0, SampleTrigger.SCENE_CHANGE), repeats
        ),
    }
    base = statistics.median(rows["face detection (face frame)"])
    print(f"CPU per sampled frame, median of {repeats} (640x480):")
    for name, samples in rows.items():
        median = statistics.median(samples)
        print(f"  {name:38s} {median:8.1f} ms   x{median / base:5.1f} of face detection")


def idle_cost(seconds: float) -> None:
    """Process CPU per wall second: camera off, then on in steady state (30 fps file camera, still scene, quiet)."""
    frames = _frames()
    with tempfile.TemporaryDirectory() as tmp:
        video = Path(tmp) / "still.avi"
        writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, FRAME)
        for _ in range(int(30 * (seconds + 5))):
            writer.write(frames["face"])
        writer.release()

        start_wall, start_cpu = time.monotonic(), time.process_time()
        time.sleep(seconds)
        off = (time.process_time() - start_cpu) / (time.monotonic() - start_wall)

        timeline = Timeline()
        service = VisionService(CameraSettings(device=str(video)), timeline)
        previews = []
        service.add_preview_callback(lambda frame, t_ms: previews.append(t_ms))
        service.start()
        time.sleep(3.0)  # past the first sample, which loads the OCR models
        previews.clear()
        processed_before = service.perception.frames_processed
        start_wall, start_cpu = time.monotonic(), time.process_time()
        time.sleep(seconds)
        on = (time.process_time() - start_cpu) / (time.monotonic() - start_wall)
        processed = service.perception.frames_processed - processed_before
        service.stop()
    print(f"idle cost over {seconds:g} s (still scene, user quiet):")
    print(f"  camera off: {off * 100:6.2f} % of one core")
    print(
        f"  camera on : {on * 100:6.2f} % of one core  ({len(previews)} preview frames, {processed} sampled)"
    )
    print(f"  camera on costs {(on - off) * 100:.2f} percentage points of one core more than off")


def main(argv: list[str]) -> int:
    """Run both measurements."""
    seconds = float(argv[0]) if argv else 10.0
    per_frame_costs()
    idle_cost(seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
