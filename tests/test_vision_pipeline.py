"""The whole camera path on a file-backed camera: observations on the timeline at the right times."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from vision_scenes import CARD_WORDS_NEEDED, card_words_read, scenes, write_video

from engine import paths
from engine.errors import ModelNotFound
from engine.settings import CameraSettings
from engine.timeline import Kind, SystemNotice, Timeline, VideoObservation
from engine.vision import (
    CameraCapture,
    CaptureOptions,
    CenterFaceDetector,
    OpenCVCamera,
    RapidTextReader,
    VideoFileCamera,
    VisionService,
    describe_observation,
)

pytest.importorskip("rapidocr", reason="rapidocr provides the OCR models")


@pytest.fixture(scope="module")
def detector() -> CenterFaceDetector:
    try:
        return CenterFaceDetector.from_registry()
    except ModelNotFound as exc:
        pytest.skip(f"face model not installed: {exc}")


@pytest.fixture(scope="module")
def reader() -> RapidTextReader:
    return RapidTextReader()


def wait_for(predicate, timeout_s: float = 60.0) -> bool:
    """Poll until `predicate()` is true (the camera runs in real time on its own thread)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def notices(timeline: Timeline) -> list[str]:
    return [e.code for e in timeline.events(kinds=[Kind.SYSTEM_NOTICE]) if isinstance(e, SystemNotice)]


def test_scenes_become_observations_in_order_and_at_their_time(tmp_path: Path, detector, reader):
    frames = scenes()
    # (scene, seconds): someone facing the screen, turning away, leaving, then a card with text in view
    # (each scene outlasts a scene change's OCR, a few seconds on a loaded two-core machine)
    script = [("frontal", 1.5), ("turned", 4.0), ("empty_room", 3.5), ("text_card", 2.0)]
    total_frames = round(sum(seconds for _, seconds in script) * 10)  # write_video's 10 fps
    video = write_video(tmp_path / "session.avi", [(frames[name], seconds) for name, seconds in script])
    settings = CameraSettings(enabled=True, device=str(video), sample_fps_quiet=1.0, away_after_s=1.5)
    timeline = Timeline()
    service = VisionService(settings, timeline, detector=detector, reader=reader)
    preview: list[int] = []
    preview_threads: set[str] = set()

    def on_preview(frame, t_ms):
        preview.append(t_ms)
        preview_threads.add(threading.current_thread().name)

    service.add_preview_callback(on_preview)
    sink_shapes: list[tuple[int, ...]] = []
    service.add_frame_sink(lambda frame: sink_shapes.append(frame.shape))
    assert service.active_mode == "presence and text reading (OCR)"
    service.start()
    try:
        assert service.is_on
        assert wait_for(lambda: "camera-ended" in notices(timeline), 90.0)
        assert service.perception.drain()
    finally:
        service.stop()
    assert notices(timeline)[0] == "camera-on" and notices(timeline)[-1] == "camera-off"

    # the preview got every frame at full rate; perception looked at only a few of them
    assert len(preview) == total_frames and preview_threads == {"venus-camera"}
    assert sink_shapes == [(480, 640, 3)] * total_frames
    # each scene at least once (how many more depends on how fast the machine runs OCR: the sampler's rates
    # are proved on a simulated clock in test_vision_sampling)
    assert len(script) <= service.perception.frames_processed <= 22

    start_ms = preview[0]
    windows, t = {}, 0.0
    for name, seconds in script:
        # 0.1 s early: the first frame is read a few ms after the pacing clock starts; 1 s late: sampling and load
        windows[name] = (start_ms + t * 1000 - 100, start_ms + (t + seconds) * 1000 + 1000)
        t += seconds
    observations = [e for e in timeline.events() if isinstance(e, VideoObservation)]
    facts = [(o.person_present, o.facing_screen, bool(o.text_seen)) for o in observations]
    assert facts == [(True, True, False), (True, False, False), (False, False, False), (False, False, True)], facts
    assert card_words_read(observations[3].text_seen) >= CARD_WORDS_NEEDED, observations[3].text_seen
    # the runtime keeps proactive speech back while the latest person_present is False (never to an empty room)
    for observation, scene in zip(
        observations, ["frontal", "turned", "empty_room", "text_card"], strict=True
    ):
        low, high = windows[scene]
        assert low <= observation.t_ms <= high, (scene, observation.t_ms - start_ms)
    # leaving is reported only after away_after_s without a face
    assert observations[2].t_ms - windows["empty_room"][0] >= 1000
    # observations keep derived facts only: no frame was kept or written
    assert all(o.frame_ref == "" for o in observations)
    assert not (paths.data_dir() / "frames").exists()


def test_request_reads_the_card_and_says_what_it_cannot_see(tmp_path: Path, detector, reader):
    video = write_video(tmp_path / "card.avi", [(scenes()["text_card"], 30.0)])
    timeline = Timeline()
    service = VisionService(CameraSettings(device=str(video)), timeline, detector=detector, reader=reader)
    closed = service.look("what does this say?")
    assert "camera is off" in closed.description
    service.start()
    try:
        assert wait_for(lambda: service.capture.latest_frame is not None)
        observation = service.look("what does this say?")
    finally:
        service.stop()
    assert observation.trigger == "request"
    assert card_words_read(observation.text_seen) >= CARD_WORDS_NEEDED, observation.text_seen
    sentence = describe_observation(observation)
    assert "don't see anyone" in sentence and "no multimodal model" in sentence
    assert card_words_read(sentence) >= CARD_WORDS_NEEDED, sentence  # what it read is said back
    assert service.capture.latest_frame is None  # nothing of the camera outlives it being on


def test_frames_are_stored_only_when_the_user_opts_in(tmp_path: Path, detector, reader):
    frames = scenes()
    video = write_video(tmp_path / "short.avi", [(frames["frontal"], 1.0), (frames["empty_wall"], 1.0)])
    timeline = Timeline()
    settings = CameraSettings(device=str(video), store_frames=True, away_after_s=0.0, ocr_enabled=False)
    service = VisionService(settings, timeline, detector=detector, reader=reader)
    service.start()
    try:
        assert wait_for(lambda: "camera-ended" in notices(timeline))
        assert service.perception.drain()
    finally:
        service.stop()
    observations = [e for e in timeline.events() if isinstance(e, VideoObservation)]
    assert [o.person_present for o in observations] == [True, False]
    for observation in observations:
        stored = Path(observation.frame_ref)
        assert stored.parent == paths.data_dir() / "frames" and stored.stat().st_size > 1000


def test_a_missing_camera_is_a_notice_and_a_retry_until_it_appears(tmp_path: Path):
    video_path = tmp_path / "late.avi"
    timeline = Timeline()
    got = []
    capture = CameraCapture(
        VideoFileCamera(video_path),
        timeline,
        lambda f, t, why: got.append(why),
        options=CaptureOptions(retry_interval_s=0.1),
    )
    capture.start()
    try:
        assert wait_for(lambda: "camera-lost" in notices(timeline))
        assert capture.running  # still trying, not crashed
        write_video(tmp_path / "staging.avi", [(scenes()["frontal"], 0.5)]).rename(video_path)
        assert wait_for(lambda: "camera-ended" in notices(timeline))
    finally:
        capture.close()
    assert notices(timeline) == ["camera-on", "camera-lost", "camera-restored", "camera-ended", "camera-off"]
    assert capture.frames_read == 5 and got  # frames flowed once the camera came back


def test_a_camera_that_never_opens_gives_up_with_an_error_notice():
    timeline = Timeline()
    capture = CameraCapture(
        OpenCVCamera(97),
        timeline,
        lambda *a: None,
        options=CaptureOptions(retry_interval_s=0.05, max_retries=2),
    )
    capture.start()
    assert capture.wait(30.0)
    capture.close()
    levels = [(e.code, e.level) for e in timeline.events(kinds=[Kind.SYSTEM_NOTICE])]
    assert levels[1] == ("camera-lost", "warning") and levels[2] == ("camera-lost", "error")
    assert "camera 97" in timeline.events(kinds=[Kind.SYSTEM_NOTICE])[1].text


def test_a_busy_worker_keeps_the_latest_frame_but_not_a_lost_scene_change(detector, reader):
    from engine.vision import SampleTrigger, VisionPerception

    timeline = Timeline()
    perception = VisionPerception(timeline, detector, reader)
    card = scenes()["text_card"]
    # both arrive before the worker runs: the newer frame wins, and it still counts as the new scene (OCR runs)
    perception.submit(scenes()["empty_wall"], 100, SampleTrigger.SCENE_CHANGE)
    perception.submit(card, 900, SampleTrigger.QUIET)
    perception.start()
    try:
        assert perception.drain()
    finally:
        perception.stop()
    observations = [e for e in timeline.events() if isinstance(e, VideoObservation)]
    assert perception.frames_processed == 1
    assert [(o.t_ms, o.trigger) for o in observations] == [(900, "scene_change")]
    assert card_words_read(observations[0].text_seen) >= CARD_WORDS_NEEDED, observations[0].text_seen
