"""The default models are installed, verify by sha256 and actually work."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from engine.errors import ModelCorrupt, ModelNotFound
from engine.models import default_model, get_entry, resolve, verify
from engine.models.gguf import read_gguf
from engine.models.manage import import_model, list_models


@pytest.mark.parametrize("kind", ["llm", "asr", "vad", "tts"])
def test_default_model_of_each_kind_verifies_by_sha256(kind: str) -> None:
    entry = default_model(kind)
    assert verify(entry, full=True) == [], f"run `venus models install`: {verify(entry)}"


def test_default_llm_generates_tokens() -> None:
    from llama_cpp import Llama

    llm = Llama(model_path=str(resolve("smollm2-135m-instruct-q4_1", "llm")), n_ctx=512, n_threads=2, verbose=False)
    out = llm.create_chat_completion(
        messages=[{"role": "user", "content": "Name a colour."}], max_tokens=16, temperature=0.0
    )
    text = out["choices"][0]["message"]["content"]
    assert out["usage"]["completion_tokens"] > 0
    assert text.strip()


_NUMBERS = {"1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "10": "ten", "20": "twenty"}


def _wer(ref: str, hyp: str) -> float:
    def norm(text: str) -> list[str]:
        return [_NUMBERS.get(w, w) for w in re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()]

    r, h = norm(ref), norm(hyp)
    d = np.zeros((len(r) + 1, len(h) + 1), dtype=int)
    d[:, 0], d[0, :] = range(len(r) + 1), range(len(h) + 1)
    for i in range(1, len(r) + 1):
        for j in range(1, len(h) + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (r[i - 1] != h[j - 1]))
    return d[len(r), len(h)] / max(1, len(r))


def test_default_asr_transcribes_espeak_sentences(speech) -> None:
    from faster_whisper import WhisperModel

    model = WhisperModel(str(resolve("whisper-tiny-en", "asr")), device="cpu", compute_type="int8", cpu_threads=2)
    sentences = [
        "Please set a timer for ten minutes.",
        "What is the capital of France?",
        "Can you read my latest email out loud?",
    ]
    heard = {}
    for sentence in sentences:
        _, audio = speech(sentence)
        segments, _ = model.transcribe(audio, language="en", beam_size=1)
        heard[sentence] = " ".join(s.text for s in segments)
    # a margin over the set, not per decode: another CPU may mishear a word, a broken model hears none
    errors = sum(_wer(ref, hyp) * len(ref.split()) for ref, hyp in heard.items())
    assert errors <= 0.15 * sum(len(ref.split()) for ref in sentences), heard
    assert all(_wer(ref, hyp) <= 0.5 for ref, hyp in heard.items()), heard


def test_default_vad_separates_speech_from_silence(speech) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(resolve("silero-vad-v6", "vad")), providers=["CPUExecutionProvider"])
    _, voice = speech("Hello, this is a test of the voice activity detector.")
    rng = np.random.default_rng(0)
    silence = (rng.standard_normal(16000 * 2) * 0.001).astype(np.float32)

    def speech_fraction(audio: np.ndarray) -> float:
        # This Silero v6 export takes 512-sample frames with 64 samples of context and LSTM state (h, c).
        h = np.zeros((1, 1, 128), dtype=np.float32)
        c = np.zeros((1, 1, 128), dtype=np.float32)
        context = np.zeros(64, dtype=np.float32)
        probs = []
        for start in range(0, len(audio) - 512 + 1, 512):
            frame = audio[start : start + 512]
            x = np.concatenate([context, frame])[None, :]
            prob, h, c = session.run(None, {"input": x, "h": h, "c": c})
            context = frame[-64:]
            probs.append(float(prob.squeeze()))
        return float(np.mean(np.array(probs) > 0.5))

    assert speech_fraction(voice) > 0.5
    assert speech_fraction(silence) < 0.05


def test_default_piper_voice_speaks_a_sentence() -> None:
    """The default voice loads as a Piper model and turns a sentence into seconds of audible speech."""
    from engine.tts.synth import PiperSynthesizer

    clause = PiperSynthesizer(resolve("piper-en-us-joe-medium", "tts")).synthesize("Please set a timer for ten minutes.")
    seconds = len(clause.audio) / clause.sample_rate
    assert clause.sample_rate == 22050 and 1.0 < seconds < 6.0, seconds
    assert float(np.sqrt(np.mean(clause.audio ** 2))) > 0.02  # speech, not silence


def test_every_shipped_llm_header_is_readable() -> None:
    smol = read_gguf(resolve("smollm2-135m-instruct-q4_1"))
    assert smol.architecture == "llama" and smol.chat_template
    assert 100e6 < smol.parameter_count < 200e6
    gemma = read_gguf(resolve("gemma3-270m-q4_k_m"))
    assert gemma.architecture == "gemma3" and gemma.context_length == 32768


def test_truncated_gguf_gives_a_clear_error(tmp_path) -> None:
    src = resolve("smollm2-135m-instruct-q4_1")
    cut = tmp_path / "cut.gguf"
    with open(src, "rb") as fh:
        cut.write_bytes(fh.read(5_000_000))
    with pytest.raises(ModelCorrupt, match=r"cut\.gguf is truncated"):
        read_gguf(cut)
    header_only = tmp_path / "tiny.gguf"
    header_only.write_bytes(cut.read_bytes()[:1000])
    with pytest.raises(ModelCorrupt, match="ends in the middle of its header"):
        read_gguf(header_only)
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a model at all" * 10)
    with pytest.raises(ModelCorrupt, match="not a GGUF file"):
        import_model(garbage)


def test_missing_model_names_the_fix(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "empty-models"))
    with pytest.raises(ModelNotFound, match="venus models install"):
        resolve("smollm2-135m-instruct-q4_1")
    with pytest.raises(ModelNotFound, match="no model with id"):
        get_entry("no-such-model")
    states = {s.entry.id: s for s in list_models()}
    assert not states["whisper-tiny-en"].ok


def test_import_links_in_place_without_copying(tmp_path, monkeypatch) -> None:
    src = tmp_path / "mine" / "my-model.gguf"
    src.parent.mkdir()
    shutil.copy(resolve("smollm2-135m-instruct-q4_1"), src)
    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "models"))
    entry = import_model(src)
    assert entry.primary == src.resolve()
    assert not any(p.suffix == ".gguf" for p in (tmp_path / "models").rglob("*"))
    assert resolve(entry.id, "llm") == src.resolve()
