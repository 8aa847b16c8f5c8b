"""Asking Venus about what the camera sees: it looks (OCR, faces) and says what it can and cannot see."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.runtime import Runtime, RuntimeOptions, TextMouth
from engine.settings import CameraSettings, Settings
from engine.timeline import Timeline
from engine.timeline import events as ev

sys.path.insert(0, str(Path(__file__).parent))
from vision_scenes import CARD_WORDS_NEEDED, card_words_read, scenes, write_video  # noqa: E402


def test_what_does_this_say_reads_the_card_held_up_to_the_camera(tmp_path, wait_until) -> None:
    pytest.importorskip("rapidocr", reason="rapidocr provides the OCR models")
    from engine.llm import Conversation, ConversationOptions, open_backend
    from engine.vision import VisionService

    video = write_video(tmp_path / "card.avi", [(scenes()["text_card"], 60.0)])
    settings = Settings()
    timeline = Timeline()
    backend = open_backend(settings.llm)
    vision = VisionService(CameraSettings(enabled=True, device=str(video)), timeline)
    said: list[str] = []
    runtime = Runtime(timeline, Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm)),
                      TextMouth(lambda turn_id, clause: said.append(clause)), settings=settings, vision=vision,
                      options=RuntimeOptions(proactive_gap_ms=300)).start()
    vision.start()
    try:
        assert wait_until(lambda: vision.capture.latest_frame is not None)
        runtime.send_text("What does this say?")
        assert wait_until(lambda: said)
        assert runtime.wait_idle(60)
    finally:
        runtime.close()
        vision.close()
        backend.close()
    answer = " ".join(said).lower()
    assert card_words_read(answer) >= CARD_WORDS_NEEDED, answer  # most of the card, as OCR reads it on this CPU
    assert "no multimodal model" in answer  # it says plainly what it cannot do
    looked = [e for e in timeline.events() if isinstance(e, ev.VideoObservation) and e.trigger == "request"]
    assert looked and card_words_read(looked[-1].text_seen) >= CARD_WORDS_NEEDED, looked
    assert not any(isinstance(e, ev.AssistantToken) for e in timeline.events()), "answered by looking, not guessing"


def test_without_a_camera_venus_says_it_cannot_look(wait_until) -> None:
    from engine.llm import Conversation, ConversationOptions, open_backend

    settings = Settings()
    timeline = Timeline()
    backend = open_backend(settings.llm)
    said: list[str] = []
    runtime = Runtime(timeline, Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm)),
                      TextMouth(lambda turn_id, clause: said.append(clause)), settings=settings).start()
    try:
        runtime.send_text("Can you see me?")
        assert wait_until(lambda: said)
    finally:
        runtime.close()
        backend.close()
    assert "camera is off" in " ".join(said).lower()


def test_results_wait_while_nobody_is_at_the_camera_and_are_said_when_the_user_returns(tmp_path, wait_until) -> None:
    """The proactive gate: a finished task is not put into words to an empty room, and is once a face is back."""
    from engine.llm import Conversation, ConversationOptions, open_backend
    from engine.vision import VisionService
    from harness import Harness

    frames = scenes()
    video = write_video(tmp_path / "away.avi", [(frames["empty_room"], 10.0), (frames["frontal"], 60.0)])
    settings = Settings()
    settings.llm.temperature = 0.0
    settings.llm.max_tokens = 24
    timeline = Timeline()
    backend = open_backend(settings.llm)
    harness = Harness(settings.harness, timeline.append)
    vision = VisionService(CameraSettings(enabled=True, device=str(video), ocr_enabled=False, away_after_s=0.0),
                           timeline)
    runtime = Runtime(timeline, Conversation(timeline, backend, ConversationOptions.from_settings(settings.llm),
                                             tools=harness.tool_specs()),
                      TextMouth(), harness=harness, settings=settings, vision=vision,
                      options=RuntimeOptions(proactive_gap_ms=300)).start()
    assert runtime.wait_ready(120)  # the system prompt is evaluated: a delivery would be answered at once
    vision.start()

    def observations(present: bool) -> list[ev.VideoObservation]:
        return [e for e in timeline.events(kinds=[ev.Kind.VIDEO_OBSERVATION]) if e.person_present is present]

    try:
        assert wait_until(lambda: observations(False))  # the camera sees the empty room
        task = harness.submit("calculate", {"expression": "6 * 7"})
        assert wait_until(lambda: any(isinstance(e, ev.DelegationResult) and e.task_id == task
                                      for e in timeline.events()))
        assert wait_until(lambda: observations(True), timeout=60)  # the user is back in front of the camera
        assert wait_until(lambda: timeline.events(kinds=[ev.Kind.CONTROL_DECISION]))
        assert runtime.wait_idle(60)
    finally:
        runtime.close()
        vision.close()
        harness.shutdown()
        backend.close()
    result = next(e for e in timeline.events() if isinstance(e, ev.DelegationResult) and e.task_id == task)
    back = observations(True)[0]
    assert back.seq > result.seq, "the result came after the user was back: nothing was held"
    # the room stayed empty for many proactive gaps after the result: time enough to have spoken, had it been let
    assert back.t_ms - result.t_ms >= 5 * 300, (result.t_ms, back.t_ms)
    # nothing was started for it while the room was empty: Venus began to think of the words once the user was back
    thinking = [e for e in timeline.events(kinds=[ev.Kind.RUNTIME_STATE])
                if e.seq > result.seq and e.state == ev.RuntimeStateName.THINKING]
    assert thinking and thinking[0].seq > back.seq, "the result was put into words while nobody was there"
    follow_up = timeline.events(kinds=[ev.Kind.CONTROL_DECISION])[0]
    assert follow_up.seq > back.seq
    assert follow_up.action == ev.Action.RESPOND
