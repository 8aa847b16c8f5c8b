"""Smart Turn v3.2, the audio-only end-of-turn model: its input is computed as the model was trained on, a broken
file is refused with a clear error, and its verdicts hold over a set of real recordings' stand-ins."""

from __future__ import annotations

import types
import zipfile

import numpy as np
import pytest

from engine import paths
from engine.errors import ModelCorrupt
from engine.models.registry import get_entry, resolve
from engine.runtime.smart_turn import FRAMES, N_MELS, WINDOW_SAMPLES, SmartTurn, fit_window, log_mel_features
from tests.speech_helpers import espeak


@pytest.fixture(scope="module")
def model() -> SmartTurn:
    return SmartTurn(resolve("smart-turn-v3.2", "turn"))


def _reference_features():
    """The feature code that ships beside the model in the pipecat-ai wheel (the wheel `venus models install`
    took the model from): the model's own definition of its input, used here only to check ours."""
    source = get_entry("smart-turn-v3.2").files[0].sources[0]
    name, _, version = source.package.partition("==")
    wheels = sorted((paths.cache_dir() / "wheels").glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not wheels:
        pytest.skip(f"the {source.package} wheel is not in {paths.cache_dir() / 'wheels'}; `venus models install` "
                    "leaves it there")
    member = source.member.rsplit("/data/", 1)[0] + "/_whisper_features.py"
    module = types.ModuleType("smart_turn_reference_features")
    exec(zipfile.ZipFile(wheels[0]).read(member).decode(), module.__dict__)  # noqa: S102 - pinned, hashed wheel
    return module.compute_whisper_log_mel_features


def test_features_match_the_models_own_definition_of_its_input() -> None:
    reference = _reference_features()
    rng = np.random.default_rng(3)
    clips = [espeak("Could you move my dentist appointment to Thursday?"),
             espeak("Well, I was thinking", voice="en-gb"),
             0.1 * rng.standard_normal(WINDOW_SAMPLES + 4000).astype(np.float32)]  # longer than the window
    for clip in clips:
        window = fit_window(clip)
        ours, theirs = log_mel_features(window), reference(window, do_normalize=True)
        assert ours.shape == theirs.shape == (N_MELS, FRAMES)
        assert np.abs(ours - theirs).max() < 1e-3


def test_the_window_keeps_the_end_of_the_turn_at_the_end() -> None:
    short = np.ones(1000, dtype=np.float32)
    window = fit_window(short)
    assert window.shape == (WINDOW_SAMPLES,)
    assert np.all(window[-1000:] == 1.0) and not np.any(window[:-1000])  # silence goes in front
    long = np.arange(WINDOW_SAMPLES + 10, dtype=np.float32)
    assert fit_window(long)[0] == 10.0 and fit_window(long)[-1] == long[-1]  # the oldest audio is dropped
    with pytest.raises(ValueError, match="128000"):
        log_mel_features(short)


def test_silence_is_no_finished_turn(model: SmartTurn) -> None:
    assert model.probability_complete(np.zeros(16000, dtype=np.float32)) == 0.0
    assert model.probability_complete(np.zeros(0, dtype=np.float32)) == 0.0


def test_finished_sentences_sound_finished(model: SmartTurn) -> None:
    """Over a set of voices and sentences the model hears a finished turn in nearly all of them (espeak-ng's
    flat prosody is harder than a person's; the margin allows for one miss)."""
    sentences = ["Please turn the heating down a little.", "What's the tallest building in Chicago?",
                 "I'd like a cup of green tea.", "Remind me to water the plants on Saturday."]
    voices = ["en-us", "en-gb", "en-us+f2"]
    scores = [model.probability_complete(np.concatenate([espeak(s, voice=v), np.zeros(3200, np.float32)]))
              for s in sentences for v in voices]
    assert all(0.0 <= p <= 1.0 for p in scores)
    assert sum(p > 0.5 for p in scores) >= len(scores) - 1, scores


def test_a_file_that_is_not_the_model_is_refused_with_the_fix(tmp_path) -> None:
    junk = tmp_path / "smart-turn.onnx"
    junk.write_bytes(b"not an onnx file at all")
    with pytest.raises(ModelCorrupt, match="venus models install"):
        SmartTurn(junk)
    other_onnx = resolve("silero-vad-v6", "vad")  # a real ONNX model with other inputs
    with pytest.raises(ModelCorrupt, match="not a Smart Turn v3 model"):
        SmartTurn(other_onnx)
