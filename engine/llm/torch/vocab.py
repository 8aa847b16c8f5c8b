"""The tokenizer of a GGUF: llama.cpp's own, loaded with vocab_only (no weights), so ids match llama.cpp's."""

from __future__ import annotations

from typing import Any

import llama_cpp
from llama_cpp import _internals, _logger

from engine.errors import ModelCorrupt


def load_vocab(model_path: str) -> tuple[Any, Any]:
    """(llama_cpp LlamaModel holding only the vocabulary, its llama_vocab pointer) for `model_path`."""
    _logger.set_verbose(False)
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    try:
        model = _internals.LlamaModel(path_model=model_path, params=params, verbose=False)
    except ValueError as exc:
        raise ModelCorrupt(f"llama.cpp could not read the tokenizer of {model_path} ({exc})",
                           fix="download or import the model again") from exc
    return model, model.vocab


def end_of_generation_ids(vocab: Any, n_vocab: int) -> set[int]:
    """Every token that ends a generation (end of text, end of turn)."""
    return {t for t in range(n_vocab) if llama_cpp.llama_vocab_is_eog(vocab, t)}
