"""The torch backend: the same interface as LlamaBackend, with the transformer evaluated in torch.

Tokenization, the chat template, the worker thread and the prefix-reusing sync are LlamaBackend's (the
tokenizer is llama.cpp's, loaded from the same GGUF with vocab_only, so token ids match exactly); this class
replaces what touches the model: evaluation into a static KV cache, roll-back (a length change), the summary
splice (cached keys moved and re-rotated), logits reads and sampling on the device.
"""

from __future__ import annotations

import codecs
import ctypes
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.errors import BackendError
from engine.llm.backend import FinishInfo, GenerateRequest, SyncStats, TokenStream
from engine.llm.llama_backend import LlamaBackend, _Cancelled, _common_prefix, _common_suffix
from engine.llm.llama_options import GreedyGrammarSampler, choose_threads
from engine.llm.template import ChatMessage, ChatTemplate
from engine.llm.torch.gguf_weights import load_tensors, read_config, read_gguf
from engine.llm.torch.model import Transformer
from engine.llm.torch.sampling import Sampler
from engine.llm.torch.vocab import end_of_generation_ids, load_vocab

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TorchOptions:
    """How to load a GGUF model into the torch backend."""

    model_path: str  # the .gguf file
    n_ctx: int = 4096  # positions in the pre-allocated KV cache
    n_batch: int = 256  # most tokens per forward pass while prefilling
    n_threads: int = 0  # CPU threads; 0 = choose_threads()
    device: str = "auto"  # "auto" (CUDA when available), "cuda" or "cpu"
    weights: str = "auto"  # "float" (dequantized), "int8" (per-channel, dequantized in the matmul); auto: int8 on CUDA
    content_cache_size: int = 4096  # remembered tokenisations of message contents

    def __post_init__(self) -> None:
        if self.n_ctx < 64:
            raise ValueError(f"n_ctx must be at least 64, got {self.n_ctx}")
        if not 1 <= self.n_batch <= self.n_ctx:
            raise ValueError(f"n_batch must be within 1..n_ctx ({self.n_ctx}), got {self.n_batch}")
        if self.device not in ("auto", "cuda", "cpu"):
            raise ValueError(f"device must be auto, cuda or cpu, got {self.device!r}")
        if self.weights not in ("auto", "float", "int8"):
            raise ValueError(f"weights must be auto, float or int8, got {self.weights!r}")

    @classmethod
    def from_settings(cls, llm: Any, model_path: str) -> TorchOptions:
        """Options from the `llm` section of the settings (engine.settings.LLMSettings)."""
        return cls(model_path=model_path, n_ctx=llm.n_ctx, n_batch=min(llm.n_batch, llm.n_ctx),
                   n_threads=llm.n_threads, device=getattr(llm, "device", "auto"))


def pick_device(wanted: str) -> torch.device:
    """The torch device for `llm.device`: auto takes CUDA when a card is visible."""
    if wanted == "cuda" and not torch.cuda.is_available():
        raise BackendError("llm.device is cuda but torch sees no CUDA device",
                           fix='install the CUDA build of torch (README) or set llm.device to "auto"')
    if wanted == "cuda" or (wanted == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


class TorchBackend(LlamaBackend):
    """A GGUF model evaluated by torch (CPU: float32 weights; CUDA: bfloat16 with int8 per-channel weights)."""

    continues_open_turn = True

    def __init__(self, options: TorchOptions) -> None:
        # LlamaBackend.__init__ is not called (it creates a llama.cpp context): the state its shared methods
        # (tokens, template, worker, sync) read is set up here instead
        self.options = options
        self.device = pick_device(options.device)
        self.n_threads = choose_threads(options.n_threads)
        self._threads_now = self._threads_wanted = self.n_threads
        self.steps_by_threads: dict[int, int] = {}
        reader = read_gguf(options.model_path)
        self.config = read_config(reader, options.model_path)
        cuda = self.device.type == "cuda"
        int8 = options.weights == "int8" or (options.weights == "auto" and cuda)
        self.model = Transformer(self.config, load_tensors(reader, options.model_path), n_ctx=options.n_ctx,
                                 device=self.device, dtype=torch.bfloat16 if cuda else torch.float32, int8=int8)
        del reader
        self._model, self._vocab = load_vocab(options.model_path)
        self.n_ctx = options.n_ctx
        self.n_vocab = self.config.n_vocab
        self.metadata = self._model.metadata()
        bos_id, eos_id = self._model.token_bos(), self._model.token_eos()
        self._bos = bos_id if self._model.add_bos_token() and bos_id >= 0 else None
        self.template = ChatTemplate.for_model(
            self.metadata,
            bos_token=self._model.token_get_text(bos_id) if bos_id >= 0 else "",
            eos_token=self._model.token_get_text(eos_id) if eos_id >= 0 else "",
        )
        self._piece_buffer = ctypes.create_string_buffer(256)
        self._eog_ids = end_of_generation_ids(self._vocab, self.n_vocab)
        self._evaluated: list[int] = []
        self.decode_steps = 0
        self._logits: torch.Tensor | None = None  # logits after the last evaluated token, on the device
        self._logits_at = -1
        self._special_cache: dict[str, list[int]] = {}
        self._tokens_with_cache: dict[str, list[int]] = {}
        self._content_cache: OrderedDict[str, list[int]] = OrderedDict()
        self._abort = threading.Event()
        self._job_cancel: threading.Event | None = None
        self._streams: set[TokenStream] = set()
        self._streams_lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Any] | None] = queue.SimpleQueue()
        self._closed = False
        self._worker = threading.Thread(target=self._work, name="venus-llm", daemon=True)
        self._worker.start()

    def close(self) -> None:
        """Stop the worker and free the weights and the cache."""
        if self._closed:
            return
        self._closed = True
        self.cancel()
        self._jobs.put(None)
        self._worker.join(timeout=10)
        self.model = None  # type: ignore[assignment]
        self._model.close()

    def attention_break_even(self) -> int:
        """How many cached tokens cost as much attention per evaluated token as the weight matrices do."""
        c = self.config
        weights = c.n_layers * (c.n_embd * c.head_dim * (2 * c.n_heads + 2 * c.n_kv_heads) + 3 * c.n_embd * c.n_ff)
        return max(1, int(weights / (2 * c.n_layers * c.n_heads * c.head_dim)))

    # ---- evaluation ---------------------------------------------------------------------------------------

    def _apply_threads(self) -> None:
        wanted = self._threads_wanted
        if wanted != self._threads_now or torch.get_num_threads() != wanted:
            if self.device.type == "cpu":
                torch.set_num_threads(wanted)
            self._threads_now = wanted
        self.steps_by_threads[wanted] = self.steps_by_threads.get(wanted, 0) + 1

    def _should_abort(self, _data: object = None) -> bool:
        job = self._job_cancel
        return self._abort.is_set() or (job is not None and job.is_set())

    def _forward(self, tokens: Sequence[int], pos: int, *, abortable: bool) -> None:
        self._apply_threads()
        ids = torch.tensor(list(tokens), dtype=torch.long, device=self.device)
        stop = self._should_abort if abortable else None
        logits = self.model.forward(ids, pos, should_stop=stop)
        if logits is None:
            raise _Cancelled()
        self._logits = logits

    def _evaluate(self, tokens: list[int]) -> None:
        """Evaluate tokens after the cache in chunks of n_batch; cancel stops it between layers."""
        step = self.options.n_batch
        for start in range(0, len(tokens), step):
            self._decode(tokens[start:start + step])

    def _decode(self, chunk: Sequence[int], *, seq: int = 0, pos: int | None = None) -> None:
        n_past = len(self._evaluated) if pos is None else pos
        try:
            self._forward(chunk, n_past, abortable=pos is None)
        except _Cancelled:
            self._logits_at = -1
            raise
        if pos is None:
            self._evaluated.extend(chunk)
            self._logits_at = len(self._evaluated) - 1

    def _sync_tokens(self, tokens: list[int], *, evaluate: bool) -> SyncStats:
        if len(tokens) >= self.n_ctx:
            raise BackendError(
                f"the context needs {len(tokens)} tokens but the window holds {self.n_ctx}",
                fix="raise llm.n_ctx in settings (the conversation trims old turns to fit)")
        keep = _common_prefix(self._evaluated, tokens)
        if evaluate and keep == len(tokens) and keep > 0 and self._logits_at != keep - 1:
            keep -= 1  # the logits belong to another position: evaluate the last token again
        removed = len(self._evaluated) - keep
        if removed:
            del self._evaluated[keep:]  # roll-back: the static cache is indexed by position
            if self._logits_at >= keep:
                self._logits_at = -1
        stats = SyncStats(kept=keep, removed=removed, total=len(tokens))
        if evaluate and keep < len(tokens):
            started = time.perf_counter()
            self._evaluate(tokens[keep:])
            stats.decode_s = time.perf_counter() - started
            stats.evaluated = len(tokens) - keep
        return stats

    def _splice_job(self, tokens: list[int]) -> SyncStats:
        """Keep the cached prefix and the shared tail; move the tail (keys re-rotated) and evaluate the middle."""
        self._abort.clear()
        old = self._evaluated
        keep = _common_prefix(old, tokens)
        tail = _common_suffix(old[keep:], tokens[keep:])
        if tail == 0 or len(tokens) >= self.n_ctx:
            return self._sync_job(tokens, True)
        middle = tokens[keep:len(tokens) - tail]
        removed = len(old) - keep - tail
        self.model.move(len(old) - tail, keep + len(middle), tail)
        stats = SyncStats(kept=keep + tail, removed=removed, total=len(tokens))
        started = time.perf_counter()
        try:
            for start in range(0, len(middle), self.options.n_batch):
                # the middle's queries see only earlier positions: the prefix and itself, never the moved tail
                self._forward(middle[start:start + self.options.n_batch], keep + start, abortable=False)
        except BaseException:
            self._evaluated = old[:keep]
            self._logits_at = -1
            raise
        self._evaluated = list(tokens)
        self._logits_at = -1  # the logits are the middle's, not the tail's
        stats.decode_s = time.perf_counter() - started
        stats.evaluated = len(middle)
        return stats

    def _current_logits(self) -> torch.Tensor:
        if self._logits is None or self._logits_at != len(self._evaluated) - 1:
            raise BackendError("no logits for the last cached token (internal: evaluate first)")
        return self._logits

    # ---- reads of the logits ----------------------------------------------------------------------------

    def next_token_logprobs(self, messages: Sequence[ChatMessage], user_text: str,
                            groups: Sequence[Sequence[int]]) -> np.ndarray:
        """log P(the next token is one of each group) after `user_text`, as the user's still open message."""
        if self._closed:
            raise BackendError("the LLM backend is closed")
        tokens = self.context_tokens([*messages, ChatMessage("user", user_text)], open_last=True)
        groups = [list(g) for g in groups]

        def job() -> np.ndarray:
            self._sync_tokens(tokens, evaluate=True)
            logprobs = torch.log_softmax(self._current_logits().double(), dim=-1)
            return np.array([float(torch.logsumexp(logprobs[g], 0)) if g else -np.inf for g in groups])

        return self._call(job)

    def _choose_job(self, messages: list[ChatMessage], continuations: list[str]) -> int:
        self._abort.clear()
        paths = [self.context_tokens([*messages, ChatMessage("assistant", c)], open_last=True) for c in continuations]
        alive = list(range(len(paths)))
        pos = min(_common_prefix(paths[0], p) for p in paths)
        try:
            self._sync_tokens(paths[0][:pos], evaluate=True)
            while len(alive) > 1:
                ends = [i for i in alive if pos >= len(paths[i])]
                if ends:
                    return ends[0]
                options = {paths[i][pos] for i in alive}
                if len(options) == 1:
                    token = options.pop()
                else:
                    logits = self._current_logits()
                    token = max(options, key=lambda t: float(logits[t]))
                    alive = [i for i in alive if paths[i][pos] == token]
                if len(alive) > 1:
                    self._evaluate([token])
                    pos += 1
        except _Cancelled:
            return -1
        return alive[0]

    # ---- generation -------------------------------------------------------------------------------------

    def _decode_loop(self, request: GenerateRequest, stream: TokenStream, finish: FinishInfo) -> None:
        grammar = GreedyGrammarSampler(self._vocab, request.grammar, self.n_vocab) if request.grammar else None
        banned = self._tokens_with(request.avoid_chars) if request.avoid_chars else ()
        sampler = Sampler(request, self.n_vocab, banned, self.device)
        utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        stops = request.stop
        hold_max = max((len(s) for s in stops), default=1) - 1
        pending = ""
        try:
            finish.reason = "max_tokens"
            for _ in range(request.max_tokens):
                stream.wait_if_held()
                if stream.cancelled.is_set():
                    finish.reason = "cancelled"
                    break
                if len(self._evaluated) >= self.n_ctx:
                    finish.reason = "context_full"
                    break
                logits = self._current_logits()
                if grammar is not None:  # a grammar turn is decided greedily (llama.cpp's grammar, on the CPU)
                    token = grammar.sample(logits.float().cpu().numpy())
                else:
                    token = sampler.sample(logits)  # on the device; .item() is the one sync per step
                if token in self._eog_ids:
                    finish.reason = "complete"
                    break
                pending, stopped = self._release(stream, finish, pending + utf8.decode(self._piece(token)), stops,
                                                 hold_max)
                if stopped:
                    break
                pos = len(self._evaluated)
                self._forward([token], pos, abortable=False)
                self._evaluated.append(token)
                self._logits_at = pos
                self.decode_steps += 1
                finish.tokens.append(token)
            if finish.reason != "stop":
                self._emit(stream, finish, pending + utf8.decode(b"", final=True))
        finally:
            if grammar is not None:
                grammar.close()
