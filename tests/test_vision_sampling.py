"""Perception sampling: ~1 fps while the user speaks, ~0.3 fps when quiet, and on every scene change."""

from __future__ import annotations

import pytest
from vision_scenes import scenes

from engine.vision import FrameSampler, SampleTrigger, SamplingOptions


def run(sampler: FrameSampler, frames, fps: float, speaking=lambda t: False):
    """Feed frames at `fps` (simulated clock); returns (time, trigger) for each sampled frame."""
    picked = []
    for i, frame in enumerate(frames):
        t = i / fps
        trigger = sampler.consider(frame, t, speaking(t))
        if trigger is not None:
            picked.append((round(t, 2), trigger))
    return picked


def test_quiet_and_speaking_rates_on_a_still_scene():
    still = [scenes()["frontal"]] * 300  # 30 s at 10 fps
    quiet = run(FrameSampler(), still, 10.0)
    assert quiet[0] == (0.0, SampleTrigger.SCENE_CHANGE)
    assert {trigger for _, trigger in quiet[1:]} == {SampleTrigger.QUIET}
    assert 9 <= len(quiet) <= 11  # 30 s at 0.3 fps plus the first frame
    speaking = run(FrameSampler(), still, 10.0, speaking=lambda t: 10.0 <= t < 20.0)
    during = [t for t, trigger in speaking if trigger == SampleTrigger.SPEAKING]
    assert 9 <= len(during) <= 11 and all(10.0 <= t < 21.0 for t in during)
    assert len(speaking) > len(quiet) + 5


def test_scene_change_samples_at_once_and_still_scenes_do_not():
    frames = scenes()
    sequence = [frames["frontal"]] * 20 + [frames["empty_room"]] * 20 + [frames["text_card"]] * 20
    picked = run(FrameSampler(), sequence, 10.0)
    changes = [t for t, trigger in picked if trigger == SampleTrigger.SCENE_CHANGE]
    assert changes == [0.0, 2.0, 4.0]


def test_small_changes_do_not_count_as_a_new_scene():
    frame = scenes()["frontal"]
    sampler = FrameSampler()
    sampler.consider(frame, 0.0, False)
    noisy = frame.copy()
    noisy[::7, ::7] = 255  # sensor noise on a few pixels
    assert sampler.scene_difference(noisy) < SamplingOptions().scene_change_threshold
    assert sampler.consider(noisy, 0.5, False) is None


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="sample rates"):
        SamplingOptions(quiet_fps=0)
    with pytest.raises(ValueError, match="scene_change_threshold"):
        SamplingOptions(scene_change_threshold=300)
