"""Presence and facing-the-screen decisions on real photographs, with the CenterFace model from its wheel."""

from __future__ import annotations

from pathlib import Path

import pytest
from vision_scenes import EXPECTED_ATTENTION, scenes

from engine.errors import ModelCorrupt, ModelNotFound
from engine.vision import (
    AttentionOptions,
    AttentionTracker,
    CenterFaceDetector,
    FaceDetectorOptions,
    FrameAttention,
    assess_faces,
)


@pytest.fixture(scope="module")
def detector() -> CenterFaceDetector:
    try:
        return CenterFaceDetector.from_registry()
    except ModelNotFound as exc:
        pytest.skip(f"face model not installed: {exc}")


@pytest.fixture(scope="module")
def frames():
    return scenes()


@pytest.mark.parametrize("scene", sorted(EXPECTED_ATTENTION))
def test_presence_and_facing_per_scene(detector, frames, scene):
    faces = detector.detect(frames[scene])
    verdict = assess_faces(faces, AttentionOptions())
    assert (verdict.person_present, verdict.facing_screen) == EXPECTED_ATTENTION[scene], (
        scene,
        [(f.score, f.yaw_degrees(), f.roll_degrees()) for f in faces],
    )


def test_landmarks_fall_inside_the_face_and_mirror_flips_yaw(detector, frames):
    turned = detector.detect(frames["turned"])[0]
    mirrored = detector.detect(frames["turned_mirrored"])[0]
    for face in (turned, mirrored):
        x1, y1, x2, y2 = face.box
        assert all(x1 - 5 <= x <= x2 + 5 and y1 - 5 <= y <= y2 + 5 for x, y in face.landmarks)
    # the same head seen in a mirror turns the other way, by about as much
    assert turned.yaw_degrees() * mirrored.yaw_degrees() < 0
    assert abs(abs(turned.yaw_degrees()) - abs(mirrored.yaw_degrees())) < 15
    frontal = detector.detect(frames["frontal"])[0]
    assert abs(frontal.yaw_degrees()) < 10 < abs(turned.yaw_degrees())


def test_facing_limit_is_a_setting(detector, frames):
    """The same turned head faces the screen or not by facing_max_yaw_deg alone, either side of its yaw."""
    faces = detector.detect(frames["turned"])
    yaw = abs(faces[0].yaw_degrees())
    assert not assess_faces(faces, AttentionOptions()).facing_screen
    assert assess_faces(faces, AttentionOptions(facing_max_yaw_deg=min(90.0, yaw + 5))).facing_screen
    assert not assess_faces(faces, AttentionOptions(facing_max_yaw_deg=yaw - 5)).facing_screen


def test_tracker_keeps_presence_for_a_moment_then_reports_away():
    tracker = AttentionTracker(AttentionOptions(away_after_s=3.0))
    seen = FrameAttention(faces=1, person_present=True, facing_screen=True)
    nobody = FrameAttention(faces=0, person_present=False, facing_screen=False)
    assert tracker.update(seen, 0.0) is True
    assert tracker.update(seen, 1.0) is False
    # head turned fully away for two seconds: still present, no longer facing
    assert tracker.update(nobody, 2.0) is True
    assert tracker.state.person_present and not tracker.state.facing_screen
    assert tracker.update(nobody, 3.5) is False
    assert tracker.update(nobody, 4.5) is True
    assert not tracker.state.person_present


def test_bad_options_and_bad_model_files(tmp_path: Path):
    with pytest.raises(ValueError, match="input_width"):
        FaceDetectorOptions(input_width=100)
    with pytest.raises(ValueError, match="facing_max_yaw_deg"):
        AttentionOptions(facing_max_yaw_deg=0)
    with pytest.raises(ModelNotFound, match="venus models install"):
        CenterFaceDetector(tmp_path / "missing.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not an onnx model at all")
    with pytest.raises(ModelCorrupt, match=str(broken)):
        CenterFaceDetector(broken)
