"""Speaker similarity on real synthesized voices: the enrolled voice scores high, other voices low."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package

import shutil

import numpy as np
import pytest

from engine.speaker import MfccPitchEmbedder, SpeakerEmbeddingOptions, SpeakerProfile

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("sox") is None,
                                reason="espeak-ng and sox are needed to synthesize voices")

ENROL = ["Hello, I would like some help with my calendar today.", "Please read me my new messages."]
PROBE = "What is the weather going to be like tomorrow afternoon?"


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    from bench.duplex.synth import SpeechCache, Voice

    cache = SpeechCache(tmp_path_factory.mktemp("speech"))
    return lambda text, voice: cache.render(text, Voice(voice))


def test_enrolled_voice_scores_higher_than_other_voices(speech) -> None:
    profile = SpeakerProfile()
    for text in ENROL:
        assert profile.enroll(speech(text, "en-us"))
    assert profile.utterance_count == 2
    own = profile.similarity(speech(PROBE, "en-us"))
    others = {v: profile.similarity(speech(PROBE, v)) for v in ("en-us+f3", "en+m3", "en-us+m7")}
    assert own is not None and own > 0.6, own
    for voice, value in others.items():
        assert value is not None and value < 0.5 and value < own - 0.2, (voice, value, own)


def test_silence_and_short_clips_give_no_embedding() -> None:
    embedder = MfccPitchEmbedder()
    assert embedder.embed(np.zeros(16000, dtype=np.float32)[:100]) is None
    profile = SpeakerProfile()
    assert profile.similarity(np.zeros(16000, dtype=np.float32)) is None  # nothing enrolled yet
    assert not profile.enroll(np.zeros(400, dtype=np.float32))
    assert not profile.enrolled


def test_loudness_does_not_change_identity(speech) -> None:
    embedder = MfccPitchEmbedder()
    clip = speech(PROBE, "en-us")
    assert embedder.similarity(embedder.embed(clip), embedder.embed(clip * 0.2)) > 0.95


def test_profile_stops_enrolling_at_its_limit(speech) -> None:
    profile = SpeakerProfile(max_utterances=1)
    assert profile.enroll(speech(ENROL[0], "en-us"))
    assert not profile.enroll(speech(ENROL[1], "en-us"))


@pytest.mark.parametrize("kwargs", [dict(sample_rate=4000), dict(frame_ms=1), dict(n_cepstra=80),
                                    dict(min_voiced_frames=0), dict(energy_floor_db=3.0)])
def test_bad_options_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        SpeakerEmbeddingOptions(**kwargs)
    with pytest.raises(ValueError):
        SpeakerProfile(max_utterances=0)


def test_the_learned_voice_encoder_runs_without_torch(speech) -> None:
    from engine.models.registry import resolve
    from engine.speaker import VoiceEncoder, VoiceEncoderEmbedder

    encoder = VoiceEncoder(resolve("resemblyzer-voice-encoder", kind="speaker"))
    assert "torch" not in sys.modules
    own = [encoder.embed(speech(t, "en-us")) for t in (*ENROL, PROBE)]
    woman = encoder.embed(speech(PROBE, "en-us+f3"))
    assert all(v is not None and v.shape == (256,) and abs(float(np.linalg.norm(v)) - 1.0) < 1e-4 for v in own)
    same = encoder.similarity(own[0], own[2])
    assert same > 0.75 and same > encoder.similarity(own[0], woman) + 0.15
    calibrated = VoiceEncoderEmbedder(encoder)
    assert calibrated.similarity(own[0], own[2]) > 0.8 > 0.2 > calibrated.similarity(own[0], woman)
    assert encoder.embed(np.zeros(16000, np.float32)) is None and encoder.embed(np.full(800, 0.1, np.float32)) is None


def test_the_default_profile_combines_both_embeddings(speech) -> None:
    from engine.speaker import CombinedEmbedder, default_embedder

    embedder = default_embedder()
    assert isinstance(embedder, CombinedEmbedder) and len(embedder.parts) == 2
    profile = SpeakerProfile(embedder)
    for text in ENROL:
        assert profile.enroll(speech(text, "en-us"))
    own, other = profile.similarity(speech(PROBE, "en-us")), profile.similarity(speech(PROBE, "en-us+f3"))
    assert own is not None and other is not None and own > 0.6 > 0.4 > other, (own, other)


def test_a_damaged_voice_encoder_file_is_a_clear_error(tmp_path) -> None:
    from engine.errors import ModelCorrupt
    from engine.models.registry import resolve
    from engine.speaker import VoiceEncoder

    good = resolve("resemblyzer-voice-encoder", kind="speaker").read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good[: len(good) // 2])
    with pytest.raises(ModelCorrupt, match="truncated|could not be read"):
        VoiceEncoder(cut)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ModelCorrupt):
        VoiceEncoder(junk)
