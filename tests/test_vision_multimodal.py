"""Multimodal model configuration: every wrong setting fails early with the setting named.

No multimodal GGUF ships in a PyPI package, so answering from an image cannot run here; the real loading
path is exercised up to the projector with a text-only GGUF, which must be refused cleanly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from vision_scenes import scenes

from engine.errors import ConfigError, ModelCorrupt, ModelNotFound
from engine.settings import CameraSettings, Settings
from engine.timeline import Timeline, VideoObservation
from engine.vision import (
    CHAT_HANDLERS,
    CenterFaceDetector,
    MultimodalModel,
    MultimodalOptions,
    SampleTrigger,
    VisionService,
    describe_observation,
    guess_chat_format,
)


@pytest.fixture
def gguf_pair(tmp_path: Path) -> tuple[Path, Path]:
    """Two files with a GGUF header (not loadable models: enough for the checks before loading)."""
    model = tmp_path / "Qwen2.5-VL-3B-Instruct-Q4_K_M.gguf"
    projector = tmp_path / "mmproj-Qwen2.5-VL-3B-Instruct-f16.gguf"
    for path in (model, projector):
        path.write_bytes(b"GGUF" + b"\0" * 60)
    return model, projector


@pytest.mark.parametrize(
    ("file_name", "chat_format"),
    [
        ("Qwen2.5-VL-3B-Instruct-Q4_K_M.gguf", "qwen2.5-vl"),
        ("moondream2-text-model-f16.gguf", "moondream"),
        ("MiniCPM-V-2_6-Q4_K_M.gguf", "minicpm-v-2.6"),
        ("llava-v1.6-mistral-7b.Q4_K_M.gguf", "llava-1.6"),
        ("ggml-model-llava-7b-q4_k.gguf", "llava-1.5"),
        ("nanollava-text-model-f16.gguf", "nanollava"),
    ],
)
def test_chat_format_is_guessed_from_the_file_name(file_name, chat_format):
    assert guess_chat_format(Path(file_name)) == chat_format
    assert chat_format in CHAT_HANDLERS


def test_unknown_model_family_asks_for_the_setting():
    with pytest.raises(ConfigError, match="camera.multimodal_chat_format"):
        guess_chat_format(Path("my-private-model.gguf"))


def test_options_are_validated_up_front():
    with pytest.raises(ValueError, match="camera.multimodal_projector"):
        MultimodalOptions(model="a.gguf", projector="")
    with pytest.raises(ValueError, match="chat_format"):
        MultimodalOptions(model="a.gguf", projector="b.gguf", chat_format="gpt-4o")
    with pytest.raises(Exception, match="multimodal_chat_format"):
        Settings.model_validate({"camera": {"multimodal_chat_format": "gpt-4o"}})


def test_missing_and_wrong_files_name_the_setting(tmp_path: Path, gguf_pair):
    model, projector = gguf_pair
    with pytest.raises(ModelNotFound, match="does not exist"):
        MultimodalModel(MultimodalOptions(model=str(tmp_path / "gone.gguf"), projector=str(projector)))
    not_gguf = tmp_path / "mmproj.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 a zip, not a model")
    with pytest.raises(ModelCorrupt, match="camera.multimodal_projector"):
        MultimodalModel(MultimodalOptions(model=str(model), projector=str(not_gguf)))
    ready = MultimodalModel(MultimodalOptions(model=str(model), projector=str(projector)))
    assert ready.chat_format == "qwen2.5-vl" and ready.name == model.name
    with pytest.raises(ValueError, match="at least one frame"):
        ready.ask("what am I holding?", [])


def test_a_text_only_model_with_no_real_projector_is_refused_when_loaded():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from engine.models.registry import resolve

    try:
        text_model = resolve("smollm2-135m-instruct-q4_1")
    except ModelNotFound as exc:
        pytest.skip(f"default LLM not installed: {exc}")
    model = MultimodalModel(
        MultimodalOptions(
            model=str(text_model), projector=str(text_model), chat_format="qwen2.5-vl", n_ctx=512, n_threads=1
        )
    )
    with pytest.raises(ModelCorrupt, match="camera.multimodal_projector"):
        model.load()
    model.close()


def test_settings_show_which_vision_mode_is_active(gguf_pair):
    try:
        detector = CenterFaceDetector.from_registry()
    except ModelNotFound as exc:
        pytest.skip(f"face model not installed: {exc}")
    model, projector = gguf_pair
    timeline = Timeline()
    plain = VisionService(CameraSettings(ocr_enabled=False), timeline, detector=detector)
    assert plain.active_mode == "presence only" and plain.frames is None
    settings = CameraSettings(multimodal_model=str(model), multimodal_projector=str(projector))
    multimodal = VisionService(settings, timeline, detector=detector, reader=None)
    assert multimodal.active_mode == f"multimodal: {model.name}"
    # with a multimodal model, sampled frames are kept in memory (never on disk) for the context
    observation = multimodal.perception.process(scenes()["frontal"], 1234, trigger=SampleTrigger.SCENE_CHANGE)
    assert observation is not None and observation.frame_ref.startswith("mem:")
    assert multimodal.frames.get(observation.frame_ref).shape == (480, 640, 3)
    assert multimodal.frames.jpeg(observation.frame_ref)[:2] == b"\xff\xd8"
    # every new scene is observed with its frame held, even when presence and text did not change
    same_person = multimodal.perception.process(scenes()["mirrored"], 2400, trigger=SampleTrigger.SCENE_CHANGE)
    periodic = multimodal.perception.process(scenes()["mirrored"], 5800, trigger=SampleTrigger.QUIET)
    assert same_person is not None and same_person.person_present and periodic is None
    assert same_person.frame_ref.startswith("mem:") and same_person.frame_ref != observation.frame_ref
    assert multimodal.frames.get(same_person.frame_ref).shape == (480, 640, 3)
    assert plain.perception.process(scenes()["frontal"], 1234, trigger=SampleTrigger.SCENE_CHANGE).frame_ref == ""
    multimodal.stop()
    assert multimodal.frames.get(observation.frame_ref) is None  # turning the camera off forgets them


def test_without_a_multimodal_model_venus_says_what_it_cannot_see():
    seen = VideoObservation(person_present=True, facing_screen=True, faces=1)
    assert "I can see you, facing the screen" in describe_observation(seen)
    assert "can't recognise objects" in describe_observation(seen)
    assert "can't recognise objects" not in describe_observation(seen, multimodal_name="moondream2.gguf")
