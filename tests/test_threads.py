"""Kernel thread counts: the VENUS_THREADS_* variables reach the real sessions, settings still win."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.asr.whisper import WhisperOptions
from engine.llm.llama_options import choose_threads
from engine.models.registry import resolve
from engine.settings import Settings
from engine.threads import default_threads
from engine.vad.silero import SileroVad


def test_defaults_are_one_thread_when_nothing_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind in ("CT2", "ONNX", "LLM"):
        monkeypatch.delenv(f"VENUS_THREADS_{kind}", raising=False)
    assert default_threads("ct2") == 1 and default_threads("onnx") == 1
    assert Settings().asr.n_threads == 1 and Settings().tts.n_threads == 1
    assert 1 <= choose_threads(0) <= 8


def test_the_environment_sets_each_kernels_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENUS_THREADS_CT2", "2")
    monkeypatch.setenv("VENUS_THREADS_ONNX", "3")
    monkeypatch.setenv("VENUS_THREADS_LLM", "5")
    assert WhisperOptions(Path("unused")).threads == 2
    assert Settings().asr.n_threads == 2 and Settings().tts.n_threads == 3
    assert choose_threads(0) == 5
    assert choose_threads(4) == 4  # an explicit setting wins over the environment
    assert WhisperOptions(Path("unused"), threads=1).threads == 1


def test_an_onnx_session_runs_with_the_count_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENUS_THREADS_ONNX", "2")
    vad = SileroVad(resolve("silero-vad-v6"))
    assert vad._session.get_session_options().intra_op_num_threads == 2
    explicit = SileroVad(resolve("silero-vad-v6"), threads=1)
    assert explicit._session.get_session_options().intra_op_num_threads == 1


@pytest.mark.parametrize("raw", ["two", "0", "-1", "1000"])
def test_a_malformed_count_is_an_error_that_names_the_variable(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("VENUS_THREADS_CT2", raw)
    with pytest.raises(ValueError, match="VENUS_THREADS_CT2"):
        WhisperOptions(Path("unused"))
