"""Options, thread choice, model loading and samplers for the in-process llama.cpp backend."""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import llama_cpp
import numpy as np
import psutil
from llama_cpp import _internals

from engine.errors import ModelCorrupt, ModelNotFound
from engine.llm.backend import GenerateRequest
from engine.threads import env_threads

# llama.cpp's own log lines (ggml.h's ggml_log_level: 3 warn, 4 error, 5 continues the line before; 1-2 debug and
# info, which llama.cpp writes for every decode step, are dropped here). llama-cpp-python prints them straight to
# stderr, so `venus chat` showed lines such as "decode: removing memory module entries ..." each time Venus
# cancelled a decode it no longer needed (the user cut in). They go to Venus's log instead: llama.cpp's warnings are
# about states Venus handles and reports itself, so they are INFO there; its errors stay errors.
_LLAMA_LEVELS = {3: logging.INFO, 4: logging.ERROR}
_llama_log = logging.getLogger("llama_cpp")
_llama_pending = threading.local()  # the line being written, in pieces; None while a dropped one continues
# Set while a decode that Venus asked to stop unwinds: llama.cpp reports the abort as failures ("failed to compute
# graph", "failed to decode, ret = 2"), which are then expected and logged as INFO.
ABORTING = threading.Event()


def _on_llama_log(level: int, text: bytes | None, _user_data: ctypes.c_void_p) -> None:
    if level != 5:
        mapped = _LLAMA_LEVELS.get(level)
        _llama_pending.line = None if mapped is None else \
            [min(mapped, logging.INFO) if ABORTING.is_set() else mapped, ""]
    pending = getattr(_llama_pending, "line", None)
    if pending is None:
        return
    pending[1] += (text or b"").decode("utf-8", errors="replace")
    if pending[1].endswith("\n"):
        _llama_pending.line = None
        if pending[1].strip():
            _llama_log.log(pending[0], "%s", pending[1].strip())


_LLAMA_LOG_CALLBACK = llama_cpp.llama_log_callback(_on_llama_log)  # referenced for the life of the process
llama_cpp.llama_log_set(_LLAMA_LOG_CALLBACK, ctypes.c_void_p(0))


def choose_threads(requested: int) -> int:
    """Threads for decoding: the setting, or (0) VENUS_THREADS_LLM or the physical cores minus one for audio and UI, 1 to 8."""
    if requested > 0:
        return requested
    from_env = env_threads("llm")
    if from_env:
        return from_env
    physical = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    return max(1, min(8, physical - 1))


@dataclass(frozen=True)
class LlamaOptions:
    """How to load a GGUF model in process."""

    model_path: str  # the .gguf file
    n_ctx: int = 4096  # context window in tokens
    n_batch: int = 256  # most tokens per llama_decode call (prompts are chunked to this)
    n_threads: int = 0  # decode threads; 0 = choose_threads()
    n_gpu_layers: int = 0  # layers offloaded to the GPU (-1 = all); needs a CUDA build
    flash_attn: bool = False  # flash attention (helps long contexts on GPU)
    content_cache_size: int = 4096  # remembered tokenisations of message contents

    def __post_init__(self) -> None:
        if self.n_ctx < 64:
            raise ValueError(f"n_ctx must be at least 64, got {self.n_ctx}")
        if not 1 <= self.n_batch <= self.n_ctx:
            raise ValueError(f"n_batch must be within 1..n_ctx ({self.n_ctx}), got {self.n_batch}")
        if self.n_threads < 0:
            raise ValueError(f"n_threads must be 0 (choose) or more, got {self.n_threads}")
        if self.n_gpu_layers < -1:
            raise ValueError(f"n_gpu_layers must be -1 (all) or more, got {self.n_gpu_layers}")

    @classmethod
    def from_settings(cls, llm: Any, model_path: str) -> LlamaOptions:
        """Options from the `llm` section of the settings (engine.settings.LLMSettings)."""
        return cls(
            model_path=model_path, n_ctx=llm.n_ctx, n_batch=min(llm.n_batch, llm.n_ctx),
            n_threads=llm.n_threads, n_gpu_layers=llm.n_gpu_layers,
        )


def load_model(options: LlamaOptions) -> _internals.LlamaModel:
    """Load the GGUF, turning llama.cpp's failures into errors that name the file and the fix."""
    params = llama_cpp.llama_model_default_params()
    params.n_gpu_layers = 0x7FFFFFFF if options.n_gpu_layers == -1 else options.n_gpu_layers
    try:
        return _internals.LlamaModel(path_model=options.model_path, params=params, verbose=False)
    except ValueError as exc:
        if "does not exist" in str(exc):
            raise ModelNotFound(f"model file {options.model_path} does not exist",
                                fix="check llm.model in settings or run `venus models install`") from exc
        raise ModelCorrupt(f"llama.cpp could not load {options.model_path} ({exc})",
                           fix="download or import the model again; it may be truncated or not a GGUF") from exc


def make_sampler(vocab: Any, request: GenerateRequest, n_vocab: int = 0, banned: Sequence[int] = ()) -> Any:
    """A llama.cpp sampler chain for a request: banned tokens and grammar first, then greedy or
    top-k/top-p/min-p/temperature."""
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    if banned:
        biases = (llama_cpp.llama_logit_bias * len(banned))()
        for i, token in enumerate(banned):
            biases[i].token, biases[i].bias = token, float("-inf")
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_logit_bias(n_vocab, len(banned), biases))
    if request.grammar:
        grammar = llama_cpp.llama_sampler_init_grammar(vocab, request.grammar.encode("utf-8"), b"root")
        if not grammar:
            llama_cpp.llama_sampler_free(chain)
            raise ValueError("the GBNF grammar did not parse (llama.cpp logs the position)")
        llama_cpp.llama_sampler_chain_add(chain, grammar)
    if request.temperature == 0.0:
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
        return chain
    if request.top_k > 0:
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_top_k(request.top_k))
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_top_p(request.top_p, 1))
    if request.min_p > 0:
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_min_p(request.min_p, 1))
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_temp(request.temperature))
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_dist(request.seed))
    return chain


class GreedyGrammarSampler:
    """Greedy decoding under a GBNF grammar, checking the plain argmax first (as llama.cpp's common sampler does).

    Filtering the whole vocabulary through the grammar costs about as much as a decode step of a small model;
    the argmax is usually allowed, and when it is, it is also the argmax among the allowed tokens: same result.
    """

    def __init__(self, vocab: Any, grammar: str, n_vocab: int) -> None:
        self._grammar = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
        if not self._grammar:
            raise ValueError("the GBNF grammar did not parse (llama.cpp logs the position)")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(self._one, 1, -1, False)
        self._all = np.zeros(n_vocab, dtype=np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")]))
        self._all["id"] = np.arange(n_vocab, dtype=np.int32)
        self._all_array = llama_cpp.llama_token_data_array(
            self._all.ctypes.data_as(llama_cpp.llama_token_data_p), n_vocab, -1, False
        )
        self.full_filters = 0  # steps whose argmax the grammar rejected, so the whole vocabulary was filtered

    def sample(self, logits: np.ndarray) -> int:
        """The most likely token the grammar allows after what it has accepted so far; accepts it."""
        token = int(np.argmax(logits))
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._one_array))
        if self._one[0].logit == -np.inf:  # rejected: filter every token and take the best remaining one
            self._all["logit"] = logits
            self._all_array.size, self._all_array.selected, self._all_array.sorted = len(self._all), -1, False
            llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._all_array))
            token = int(np.argmax(self._all["logit"]))
            self.full_filters += 1
        llama_cpp.llama_sampler_accept(self._grammar, token)
        return token

    def close(self) -> None:
        """Free the llama.cpp grammar."""
        if self._grammar:
            llama_cpp.llama_sampler_free(self._grammar)
            self._grammar = None
