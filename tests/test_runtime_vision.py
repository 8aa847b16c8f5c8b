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
from vision_scenes import CARD_TEXT, scenes, write_video  # noqa: E402


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
    for word in " ".join(CARD_TEXT).lower().split():
        assert word in answer, (word, answer)
    assert "no multimodal model" in answer  # it says plainly what it cannot do
    looked = [e for e in timeline.events() if isinstance(e, ev.VideoObservation) and e.trigger == "request"]
    assert looked and "milk" in looked[-1].text_seen.lower()
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
