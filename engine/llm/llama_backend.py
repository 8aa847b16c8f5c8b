"""The in-process backend: llama.cpp through llama-cpp-python's low-level API, on one worker thread.

The backend keeps the list of tokens that sit in the KV cache. `sync` renders the conversation to tokens,
keeps the longest common prefix, removes the rest with `llama_memory_seq_rm` and evaluates only the new
suffix, in chunks of at most n_batch (a larger batch aborts the process inside llama.cpp).

CUDA: build llama-cpp-python with `CMAKE_ARGS="-DGGML_CUDA=on" pip install --no-cache-dir llama-cpp-python`
and set `llm.n_gpu_layers` (-1 = all layers); CPU builds ignore it.
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
from concurrent.futures import Future
from typing import Any, TypeVar

import llama_cpp
import numpy as np
from llama_cpp import _internals, _logger

from engine.errors import BackendError
from engine.llm.backend import FinishInfo, GenerateRequest, SyncStats, TokenStream
from engine.llm.llama_options import (
    ABORTING,
    GreedyGrammarSampler,
    LlamaOptions,
    choose_threads,
    load_model,
    make_sampler,
)
from engine.llm.template import ChatMessage, ChatTemplate

log = logging.getLogger(__name__)
T = TypeVar("T")


class _Cancelled(Exception):
    """A job stopped because its cancel flag was set."""


class LlamaBackend:
    """A GGUF model in process with an incrementally maintained KV cache (sequence 0)."""

    continues_open_turn = True  # generate() continues a trailing assistant message where its text ends

    def __init__(self, options: LlamaOptions) -> None:
        self.options = options
        _logger.set_verbose(False)  # llama.cpp's own chatter only for errors
        self.n_threads = choose_threads(options.n_threads)
        self._model = load_model(options)
        self._vocab = self._model.vocab
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = options.n_ctx
        cparams.n_batch = options.n_batch
        cparams.n_ubatch = options.n_batch
        cparams.n_threads = self.n_threads
        cparams.n_threads_batch = self.n_threads
        self._threads_now = self._threads_wanted = self.n_threads  # see use_threads()
        self.steps_by_threads: dict[int, int] = {}  # llama_decode calls per thread count (benchmarks, tests)
        # a second sequence, in the same cache, to evaluate a spliced middle at positions before the kept
        # suffix (llama.cpp wants each sequence's new positions to follow its last one); see splice()
        cparams.n_seq_max = 2
        cparams.kv_unified = True
        cparams.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if options.flash_attn else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        try:
            self._ctx = _internals.LlamaContext(model=self._model, params=cparams, verbose=False)
        except ValueError as exc:
            raise BackendError(
                f"llama.cpp could not create a {options.n_ctx}-token context for {options.model_path} ({exc})",
                fix="lower llm.n_ctx or llm.n_gpu_layers in settings",
            ) from exc
        self.n_ctx = llama_cpp.llama_n_ctx(self._ctx.ctx)
        self.n_vocab = self._model.n_vocab()
        self._batch = _internals.LlamaBatch(n_tokens=options.n_batch, embd=0, n_seq_max=1, verbose=False)
        self.metadata = self._model.metadata()
        bos_id, eos_id = self._model.token_bos(), self._model.token_eos()
        self._bos = bos_id if self._model.add_bos_token() and bos_id >= 0 else None
        self.template = ChatTemplate.for_model(
            self.metadata,
            bos_token=self._model.token_get_text(bos_id) if bos_id >= 0 else "",
            eos_token=self._model.token_get_text(eos_id) if eos_id >= 0 else "",
        )
        self._evaluated: list[int] = []  # tokens in the KV cache, in position order
        self.decode_steps = 0  # generated tokens decoded so far (one per step of the decode loop)
        self._logits_at = -1  # position whose logits llama_get_logits_ith(-1) currently holds
        self._special_cache: dict[str, list[int]] = {}
        self._tokens_with_cache: dict[str, list[int]] = {}
        self._content_cache: OrderedDict[str, list[int]] = OrderedDict()
        self._abort = threading.Event()  # set by cancel(): stops whatever the worker is evaluating
        self._job_cancel: threading.Event | None = None  # the running generation's own cancel flag
        self._abort_callback = llama_cpp.ggml_abort_callback(self._should_abort)
        self._piece_buffer = ctypes.create_string_buffer(256)
        self._streams: set[TokenStream] = set()
        self._streams_lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = queue.SimpleQueue()
        # Reads that leave sequence 0 alone (words_logprob): they also run while an answer's decode is held,
        # between its steps, rather than after the whole answer (see _run_side_jobs)
        self._side_jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work, name="venus-llm", daemon=True)
        self._worker.start()
        self._closed = False

    # ---- the LLMBackend interface -----------------------------------------------------------------------

    def sync(self, messages: Sequence[ChatMessage], *, evaluate: bool = True) -> SyncStats:
        """Make the KV cache hold `messages`: keep the common prefix, drop the rest, evaluate the new suffix."""
        return self._call(lambda: self._sync_job(self.context_tokens(messages), evaluate))

    def generate(self, messages: Sequence[ChatMessage], request: GenerateRequest) -> TokenStream:
        """Stream a continuation; a trailing assistant message is continued, otherwise a new turn is opened."""
        messages = list(messages)
        if not messages or messages[-1].role != "assistant":
            messages.append(ChatMessage("assistant", ""))
        stream = TokenStream()
        with self._streams_lock:
            self._streams.add(stream)
        self._submit(lambda: self._generate_job(messages, request, stream))
        return stream

    def cancel(self) -> None:
        """Stop the running generation (and any queued one) before its next decode step."""
        with self._streams_lock:
            for stream in self._streams:
                stream.cancel()
        self._abort.set()

    def close(self) -> None:
        """Stop the worker and free the model."""
        if self._closed:
            return
        self._closed = True
        self.cancel()
        self._jobs.put(None)
        self._worker.join(timeout=10)
        while True:  # reads that never ran: their callers get an error, not a wait forever
            try:
                _, future = self._side_jobs.get_nowait()
            except queue.Empty:
                break
            if future.set_running_or_notify_cancel():
                future.set_exception(BackendError("the LLM backend is closed"))
        self._batch.close()
        self._ctx.close()
        self._model.close()

    # ---- extras of the in-process backend -------------------------------------------------------------

    def context_tokens(self, messages: Sequence[ChatMessage], *, open_last: bool = False) -> list[int]:
        """The token ids of a rendered conversation; `open_last` leaves the last message without its end."""
        tokens: list[int] = []
        for i, message in enumerate(messages):
            piece = self.template.piece(message)
            tokens += self._special_tokens(piece.head)
            tokens += self._content_tokens(piece.content)
            if not (open_last and i == len(messages) - 1):
                tokens += self._special_tokens(piece.tail)
        if self._bos is not None and tokens[:1] != [self._bos]:
            tokens.insert(0, self._bos)
        return tokens

    def token_count(self, messages: Sequence[ChatMessage]) -> int:
        """How many tokens the conversation renders to."""
        return len(self.context_tokens(messages))

    @property
    def cached_tokens(self) -> list[int]:
        """A copy of the tokens now in the KV cache."""
        return list(self._evaluated)

    def splice(self, messages: Sequence[ChatMessage]) -> SyncStats:
        """Like `sync`, but a tail shared with the cache stays too: only the middle that changed is evaluated.

        Used when old turns are folded into the summary: the system prompt (prefix) and the recent turns
        (suffix) stay in the cache, the dropped turns are removed, the suffix is shifted down
        (`llama_memory_seq_add`, RoPE re-applied, no evaluation) and the new summary is evaluated in the gap.
        The suffix keeps the keys and values it had, computed while the dropped turns preceded it: llama.cpp's
        context shift makes the same approximation. Falls back to `sync` when the cache cannot shift.
        """
        return self._call(lambda: self._splice_job(self.context_tokens(messages)))

    def attention_break_even(self) -> int:
        """How many cached tokens cost as much attention per evaluated token as the weight matrices do."""
        meta = self.metadata
        arch = meta.get("general.architecture", "")
        try:
            layers, heads = int(meta[f"{arch}.block_count"]), int(meta[f"{arch}.attention.head_count"])
            embd = int(meta[f"{arch}.embedding_length"])
            head_dim = int(meta.get(f"{arch}.attention.key_length", embd // heads))
        except (KeyError, ValueError, ZeroDivisionError):
            return self.n_ctx
        model = self._model.model
        weights = llama_cpp.llama_model_n_params(model) - self.n_vocab * llama_cpp.llama_model_n_embd(model)
        return max(1, int(weights / (2 * layers * heads * head_dim)))

    def sync_tokens(self, tokens: Sequence[int], *, evaluate: bool = True) -> SyncStats:
        """Low level: make the KV cache hold exactly `tokens` (prefix reuse as in `sync`)."""
        return self._call(lambda: self._sync_job(list(tokens), evaluate))

    def generate_from_tokens(self, tokens: Sequence[int], request: GenerateRequest) -> TokenStream:
        """Low level: stream a continuation of exactly `tokens`."""
        stream = TokenStream()
        with self._streams_lock:
            self._streams.add(stream)
        self._submit(lambda: self._generate_tokens_job(list(tokens), request, stream, None))
        return stream

    def end_of_turn_probability(self, messages: Sequence[ChatMessage], user_text: str) -> float:
        """P(the user's message is whole after `user_text`), read from the logits after its last token: the
        probability of the end-of-message marker plus that of sentence-final punctuation (". ? !"), since a
        chat model closes a finished sentence with a stop before it ends the message.

        Pass the words without ASR punctuation. `messages` are the context before the user's message; the KV
        cache keeps whatever prefix they share with the last call, so only the changed words are evaluated.
        """
        closers = self.closing_tokens()
        return float(np.exp(self.next_token_logprobs(messages, user_text, [closers])[0]))

    def closing_tokens(self) -> list[int]:
        """The tokens that may close a user's message after a word: its end-of-message marker and ". ? !"."""
        if self._closed:  # the vocabulary went with the model
            raise BackendError("the LLM backend is closed")
        tail = self._special_tokens(self.template.piece(ChatMessage("user", "")).tail)
        if not tail:
            raise BackendError("the chat template has no end-of-turn marker after a user message")
        return sorted({tail[0], *self._sentence_end_tokens()})

    def word_token(self, word: str) -> int | None:
        """The token of `word` as it follows another word (" the"), or None if it takes more than one."""
        if self._closed:
            raise BackendError("the LLM backend is closed")
        ids = self._content_tokens(f" {word}" if word[:1].isalnum() else word)
        return ids[0] if len(ids) == 1 else None

    def next_token_logprobs(self, messages: Sequence[ChatMessage], user_text: str,
                            groups: Sequence[Sequence[int]]) -> np.ndarray:
        """log P(the next token is one of each group) after `user_text`, as the user's still open message.

        One read of the logits (the words are usually in the KV cache already from the partials); the end of
        turn features of engine.runtime.turn_taking are made from it.
        """
        if self._closed:
            raise BackendError("the LLM backend is closed")
        probe = [*messages, ChatMessage("user", user_text)]
        tokens = self.context_tokens(probe, open_last=True)
        groups = [list(g) for g in groups]

        def job() -> np.ndarray:
            self._sync_tokens(tokens, evaluate=True)
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._ctx.ctx, -1), shape=(self.n_vocab,))
            shifted = logits.astype(np.float64) - float(logits.max())
            log_total = float(np.log(np.exp(shifted).sum()))
            return np.array([float(np.log(np.exp(shifted[g]).sum())) - log_total if g else -np.inf for g in groups])

        return self._call(job)

    def words_logprob(self, messages: Sequence[ChatMessage], user_text: str, frame: str) -> tuple[float, float, int]:
        """How likely the model finds `user_text` as the user's next message after `messages`, and as the words
        that follow the plain text `frame`: (log P in the conversation, log P after the frame, the words' tokens).

        Both are read on the cache's second sequence, so the conversation's cache (sequence 0) stays as it is:
        the conversation's prefix is shared with it where the two agree, and only the rest is evaluated.
        """
        if self._closed:
            raise BackendError("the LLM backend is closed")
        words = self._content_tokens(user_text)
        if not words:
            return 0.0, 0.0, 0
        chat = self.context_tokens([*messages, ChatMessage("user", "")], open_last=True)
        framed = ([self._bos] if self._bos is not None else []) + self._content_tokens(frame)
        if not framed:
            raise ValueError("words_logprob needs a frame or a BOS token to read the first word after")

        def job() -> tuple[float, float, int]:
            mem = self._ctx.memory
            try:
                keep = min(_common_prefix(self._evaluated, chat), len(chat) - 1)
                llama_cpp.llama_memory_seq_rm(mem, 1, 0, -1)
                llama_cpp.llama_memory_seq_cp(mem, 0, 1, 0, keep)
                in_chat = self._score_words(chat, keep, words)
                llama_cpp.llama_memory_seq_rm(mem, 1, 0, -1)
                in_frame = self._score_words(framed, 0, words)
            finally:
                llama_cpp.llama_memory_seq_rm(mem, 1, 0, -1)
                self._logits_at = -1  # the logits now belong to sequence 1
            return in_chat, in_frame, len(words)

        return self._call_side(job)

    def _score_words(self, prefix: list[int], kept: int, words: list[int]) -> float:
        """log P(words | prefix) on sequence 1, which already holds prefix[:kept]."""
        if len(prefix) + len(words) >= self.n_ctx:
            raise BackendError(f"the context needs {len(prefix) + len(words)} tokens but the window holds {self.n_ctx}")
        n = self.options.n_batch
        head = prefix[kept:-1]
        for start in range(0, len(head), n):
            self._decode(head[start:start + n], seq=1, pos=kept + start)
        tail = [prefix[-1], *words[:-1]]  # each of these positions predicts the next word token
        total = 0.0
        for start in range(0, len(tail), n):
            chunk = tail[start:start + n]
            self._apply_threads()
            batch = self._batch.batch
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = len(prefix) - 1 + start + i
                batch.seq_id[i][0] = 1
                batch.n_seq_id[i] = 1
                batch.logits[i] = True
            rc = llama_cpp.llama_decode(self._ctx.ctx, batch)
            if rc != 0:
                if rc == 2:
                    raise _Cancelled()
                raise BackendError(f"llama_decode failed with code {rc} while reading the words' likelihood")
            for i in range(len(chunk)):
                logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._ctx.ctx, i), shape=(self.n_vocab,))
                shifted = logits.astype(np.float64) - float(logits.max())
                total += float(shifted[words[start + i]] - np.log(np.exp(shifted).sum()))
        return total

    def _sentence_end_tokens(self) -> list[int]:
        # the first token of each sentence-final mark as it follows a word ("." "?" "!")
        return [ids[0] for mark in (".", "?", "!") if (ids := self._content_tokens(mark))]

    def choose(self, messages: Sequence[ChatMessage], continuations: Sequence[str]) -> int:
        """Which text the model would write to open its turn, by walking its logits over the candidates' tokens.

        The candidates are tokenized as the opening of an assistant message after `messages`; their shared
        tokens are evaluated in one batch and, wherever they part, the candidate whose next token the model
        rates highest stays. A choice among n fixed openings costs one batch plus one step per parting point,
        instead of one step per generated token under a grammar. Returns the index, or -1 if cancelled.
        The KV cache ends on the chosen path (the rest of that candidate is evaluated by the next sync).
        """
        if not continuations:
            raise ValueError("choose() needs at least one continuation")
        messages = list(messages)
        return self._call(lambda: self._choose_job(messages, list(continuations)))

    def _choose_job(self, messages: list[ChatMessage], continuations: list[str]) -> int:
        self._abort.clear()
        paths = [self.context_tokens([*messages, ChatMessage("assistant", c)], open_last=True) for c in continuations]
        alive = list(range(len(paths)))
        pos = min(_common_prefix(paths[0], p) for p in paths)
        try:
            self._sync_tokens(paths[0][:pos], evaluate=True)
            while len(alive) > 1:
                ends = [i for i in alive if pos >= len(paths[i])]
                if ends:  # a candidate that is a prefix of the others wins ties by ending first
                    return ends[0]
                options = {paths[i][pos] for i in alive}
                if len(options) == 1:
                    token = options.pop()
                else:
                    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._ctx.ctx, -1),
                                                   shape=(self.n_vocab,))
                    token = max(options, key=lambda t: float(logits[t]))
                    alive = [i for i in alive if paths[i][pos] == token]
                if len(alive) > 1:
                    self._evaluate([token])
                    pos += 1
        except _Cancelled:
            return -1
        return alive[0]

    def prepare(self, request: GenerateRequest) -> None:
        """Do a request's one-off work now (the token scan behind `avoid_chars`, ~70 ms for a 49k vocabulary)."""
        if request.avoid_chars:
            self._call(lambda: self._tokens_with(request.avoid_chars))

    def _tokens_with(self, chars: str) -> list[int]:
        """Ids of every token whose text holds one of `chars` (worked out once per set of characters)."""
        if chars not in self._tokens_with_cache:
            wanted = set(chars.encode("utf-8"))
            self._tokens_with_cache[chars] = [
                t for t in range(self.n_vocab)
                if not llama_cpp.llama_vocab_is_control(self._vocab, t) and wanted.intersection(self._piece(t))]
        return self._tokens_with_cache[chars]

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Text of token ids (special tokens shown)."""
        return self._model.detokenize(list(tokens), special=True).decode("utf-8", errors="replace")

    def remember_tokenization(self, text: str, tokens: Sequence[int]) -> None:
        """Record how a message content was actually evaluated, so re-rendering it reuses the same tokens."""
        if self.detokenize(tokens) == text:
            self._content_cache[text] = list(tokens)
            self._trim_content_cache()

    # ---- worker thread ------------------------------------------------------------------------------------

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the caller, which re-raises it
                future.set_exception(exc)

    def _submit(self, fn: Callable[[], T]) -> Future[T]:
        if self._closed:
            raise BackendError("the LLM backend is closed")
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return future

    def _call(self, fn: Callable[[], T]) -> T:
        return self._submit(fn).result()

    def _call_side(self, fn: Callable[[], T]) -> T:
        # A side job runs on the worker as soon as it is idle (the poke in the main queue), or sooner, between the
        # steps of a held decode: a reading of words over Venus's voice is wanted while her answer is held for it.
        if self._closed:
            raise BackendError("the LLM backend is closed")
        future: Future[T] = Future()
        self._side_jobs.put((fn, future))
        self._jobs.put((lambda: self._run_side_jobs(fresh=True), Future()))
        return future.result()

    def _run_side_jobs(self, *, fresh: bool = False) -> bool:
        """Run the queued side jobs (worker thread); True when one ran. `fresh`: no other job is under way, so an
        abort left from before is cleared, as every job does when it starts."""
        ran = False
        while True:
            try:
                fn, future = self._side_jobs.get_nowait()
            except queue.Empty:
                return ran
            if not future.set_running_or_notify_cancel():
                continue
            if fresh:
                self._abort.clear()
            ran = True
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the caller, which re-raises it
                future.set_exception(exc)

    # ---- tokens -----------------------------------------------------------------------------------------

    def _tokenize(self, text: str, special: bool) -> list[int]:
        if not text:
            return []
        return self._model.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def _special_tokens(self, text: str) -> list[int]:
        cached = self._special_cache.get(text)
        if cached is None:
            cached = self._special_cache[text] = self._tokenize(text, special=True)
        return cached

    def _content_tokens(self, text: str) -> list[int]:
        # Message contents never parse special tokens: typed "<|im_end|>" stays text.
        cached = self._content_cache.get(text)
        if cached is None:
            cached = self._content_cache[text] = self._tokenize(text, special=False)
            self._trim_content_cache()
        else:
            self._content_cache.move_to_end(text)
        return cached

    def _trim_content_cache(self) -> None:
        while len(self._content_cache) > self.options.content_cache_size:
            self._content_cache.popitem(last=False)

    def _piece(self, token: int) -> bytes:
        n = llama_cpp.llama_token_to_piece(self._vocab, token, self._piece_buffer, 256, 0, False)
        return self._piece_buffer.raw[:n] if n > 0 else b""

    # ---- KV cache ---------------------------------------------------------------------------------------

    def _sync_job(self, tokens: list[int], evaluate: bool) -> SyncStats:
        self._abort.clear()
        kept_before = _common_prefix(self._evaluated, tokens)
        try:
            return self._sync_tokens(tokens, evaluate=evaluate)
        except _Cancelled:
            kept = min(kept_before, len(self._evaluated))
            return SyncStats(kept=kept, evaluated=len(self._evaluated) - kept, total=len(tokens), cancelled=True)

    def _sync_tokens(self, tokens: list[int], *, evaluate: bool) -> SyncStats:
        if len(tokens) >= self.n_ctx:
            raise BackendError(
                f"the context needs {len(tokens)} tokens but the window holds {self.n_ctx}",
                fix="raise llm.n_ctx in settings (the conversation trims old turns to fit)",
            )
        keep = _common_prefix(self._evaluated, tokens)
        if evaluate and keep == len(tokens) and keep > 0 and self._logits_at != keep - 1:
            keep -= 1  # the cached logits belong to another position: evaluate the last token again
        removed = len(self._evaluated) - keep
        if removed:
            llama_cpp.llama_memory_seq_rm(self._ctx.memory, 0, keep, -1)
            del self._evaluated[keep:]
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
        self._abort.clear()
        old = self._evaluated
        keep = _common_prefix(old, tokens)
        tail = _common_suffix(old[keep:], tokens[keep:])
        mem = self._ctx.memory
        if tail == 0 or len(tokens) >= self.n_ctx or not llama_cpp.llama_memory_can_shift(mem):
            return self._sync_job(tokens, True)
        middle = tokens[keep:len(tokens) - tail]
        removed = len(old) - keep - tail
        llama_cpp.llama_memory_seq_rm(mem, 0, keep, keep + removed)
        llama_cpp.llama_memory_seq_add(mem, 0, keep + removed, -1, len(middle) - removed)
        self._evaluated = old[:keep] + old[keep + removed:]  # positions no longer match until the middle is in
        self._logits_at = -1
        stats = SyncStats(kept=keep + tail, removed=removed, total=len(tokens))
        if not middle:
            return stats
        started = time.perf_counter()
        llama_cpp.llama_memory_seq_cp(mem, 0, 1, 0, keep)  # sequence 1 sees the prefix; its next position is `keep`
        # not abortable: the middle is a short summary, and an aborted one would cost the whole suffix
        try:
            for start in range(0, len(middle), self.options.n_batch):
                self._decode(middle[start:start + self.options.n_batch], seq=1, pos=keep + start)
            llama_cpp.llama_memory_seq_cp(mem, 1, 0, keep, keep + len(middle))
        except BaseException:
            llama_cpp.llama_memory_seq_rm(mem, 0, keep, -1)  # drop the shifted suffix too: it lost its context
            self._evaluated = old[:keep]
            raise
        finally:
            llama_cpp.llama_memory_seq_rm(mem, 1, -1, -1)
        self._evaluated = list(tokens)
        stats.decode_s = time.perf_counter() - started
        stats.evaluated = len(middle)
        return stats

    def _should_abort(self, _data: object) -> bool:
        job = self._job_cancel
        stop = self._abort.is_set() or (job is not None and job.is_set())
        if stop:
            ABORTING.set()
        return stop

    def _evaluate(self, tokens: list[int]) -> None:
        """Decode tokens after the cache in chunks of n_batch; abortable between graph nodes."""
        llama_cpp.llama_set_abort_callback(self._ctx.ctx, self._abort_callback, None)
        try:
            step = self.options.n_batch
            for start in range(0, len(tokens), step):
                self._decode(tokens[start:start + step])
        finally:
            llama_cpp.llama_set_abort_callback(self._ctx.ctx, llama_cpp.ggml_abort_callback(), None)
            ABORTING.clear()

    def use_threads(self, n_threads: int | None) -> None:
        """Decode with `n_threads` from the next step on (None: the configured count again); any thread.

        For CPU sharing: the runtime lends the LLM every core while nothing else needs one (the user's turn
        ended and the voice has nothing to synthesize yet) and takes them back when the ASR or the voice does.
        """
        self._threads_wanted = self.n_threads if n_threads is None else max(1, int(n_threads))

    @property
    def threads_in_use(self) -> int:
        """The thread count the last decode step ran with."""
        return self._threads_now

    def _apply_threads(self) -> None:
        # before each llama_decode call, on the worker thread: where a thread count may change safely
        wanted = self._threads_wanted
        if wanted != self._threads_now:
            llama_cpp.llama_set_n_threads(self._ctx.ctx, wanted, wanted)
            self._threads_now = wanted
        self.steps_by_threads[wanted] = self.steps_by_threads.get(wanted, 0) + 1

    def _decode(self, chunk: Sequence[int], *, seq: int = 0, pos: int | None = None) -> None:
        """Evaluate `chunk` after the cache (sequence 0), or into sequence `seq` from position `pos`."""
        self._apply_threads()
        n_past = len(self._evaluated) if pos is None else pos
        batch = self._batch.batch
        batch.n_tokens = len(chunk)
        for i, token in enumerate(chunk):
            batch.token[i] = token
            batch.pos[i] = n_past + i
            batch.seq_id[i][0] = seq
            batch.n_seq_id[i] = 1
            batch.logits[i] = False
        batch.logits[len(chunk) - 1] = True
        rc = llama_cpp.llama_decode(self._ctx.ctx, batch)
        if rc != 0:
            llama_cpp.llama_memory_seq_rm(self._ctx.memory, seq, n_past, -1)
            self._logits_at = -1
            if rc == 2:
                raise _Cancelled()
            raise BackendError(f"llama_decode failed with code {rc} at position {n_past}",
                               fix="lower llm.n_batch or llm.n_ctx in settings")
        if seq == 0:
            self._evaluated.extend(chunk)
            self._logits_at = len(self._evaluated) - 1

    def _refresh_logits(self) -> None:
        # the last token of sequence 0 is evaluated again, so that the logits are its own
        last = len(self._evaluated) - 1
        token = self._evaluated.pop()
        llama_cpp.llama_memory_seq_rm(self._ctx.memory, 0, last, -1)
        self._decode([token])

    # ---- generation -------------------------------------------------------------------------------------

    def _generate_job(self, messages: list[ChatMessage], request: GenerateRequest, stream: TokenStream) -> None:
        try:
            tokens = self.context_tokens(messages, open_last=True)
        except Exception as exc:
            self._finish(stream, FinishInfo(reason=f"error: {exc}"), exc)
            return
        self._generate_tokens_job(tokens, request, stream, messages[-1].full_content())

    def _generate_tokens_job(
        self, tokens: list[int], request: GenerateRequest, stream: TokenStream, open_content: str | None
    ) -> None:
        finish = FinishInfo()
        error: BaseException | None = None
        start = 0
        self._abort.clear()
        self._job_cancel = stream.cancelled
        try:
            if stream.cancelled.is_set():
                raise _Cancelled()
            self._sync_tokens(tokens, evaluate=True)
            start = len(self._evaluated)
            self._decode_loop(request, stream, finish)
        except _Cancelled:
            finish.reason = "cancelled"
        except BaseException as exc:
            finish.reason = f"error: {exc}"
            error = exc
        finally:
            self._job_cancel = None
        if open_content is not None and finish.reason in ("complete", "max_tokens", "stop"):
            # so that the finished turn, rendered again, maps onto the tokens already in the cache
            body = self._evaluated[len(tokens) - len(self._content_tokens(open_content)):] if start else []
            self.remember_tokenization(open_content + finish.text, body)
        self._finish(stream, finish, error)

    def _finish(self, stream: TokenStream, finish: FinishInfo, error: BaseException | None) -> None:
        with self._streams_lock:
            self._streams.discard(stream)
        stream.close(finish, error)

    def _decode_loop(self, request: GenerateRequest, stream: TokenStream, finish: FinishInfo) -> None:
        greedy_grammar = bool(request.grammar) and request.temperature == 0.0
        sampler = GreedyGrammarSampler(self._vocab, request.grammar, self.n_vocab) if greedy_grammar else None
        banned = self._tokens_with(request.avoid_chars) if request.avoid_chars else ()
        chain = None if greedy_grammar else make_sampler(self._vocab, request, self.n_vocab, banned)
        utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        stops = request.stop
        hold_max = max((len(s) for s in stops), default=1) - 1
        pending = ""
        ctx, vocab, batch = self._ctx.ctx, self._vocab, self._batch.batch
        try:
            finish.reason = "max_tokens"
            for _ in range(request.max_tokens):
                stream.wait_if_held(self._run_side_jobs)
                if stream.cancelled.is_set():
                    finish.reason = "cancelled"
                    break
                if self._evaluated and self._logits_at != len(self._evaluated) - 1:  # a side job used the logits
                    self._refresh_logits()
                if len(self._evaluated) >= self.n_ctx:
                    finish.reason = "context_full"
                    break
                if sampler is not None:
                    logits = llama_cpp.llama_get_logits_ith(ctx, -1)
                    token = sampler.sample(np.ctypeslib.as_array(logits, shape=(self.n_vocab,)))
                else:
                    token = llama_cpp.llama_sampler_sample(chain, ctx, -1)
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    finish.reason = "complete"
                    break
                pending, stopped = self._release(stream, finish, pending + utf8.decode(self._piece(token)), stops,
                                                 hold_max)
                if stopped:
                    break
                # decode the sampled token into the cache: one-token batch at the next position
                pos = len(self._evaluated)
                batch.n_tokens = 1
                batch.token[0] = token
                batch.pos[0] = pos
                batch.seq_id[0][0] = 0
                batch.n_seq_id[0] = 1
                batch.logits[0] = True
                self._apply_threads()
                rc = llama_cpp.llama_decode(ctx, batch)
                if rc != 0:
                    llama_cpp.llama_memory_seq_rm(self._ctx.memory, 0, pos, -1)
                    self._logits_at = -1
                    raise BackendError(f"llama_decode failed with code {rc} at position {pos}")
                self._evaluated.append(token)
                self.decode_steps += 1
                finish.tokens.append(token)
                self._logits_at = pos
            if finish.reason != "stop":
                self._emit(stream, finish, pending + utf8.decode(b"", final=True))
        finally:
            if sampler is not None:
                sampler.close()
            if chain is not None:
                llama_cpp.llama_sampler_free(chain)

    def _release(self, stream: TokenStream, finish: FinishInfo, pending: str, stops: Sequence[str],
                 hold_max: int) -> tuple[str, bool]:
        """Emit what of the decoded `pending` text can no longer begin a stop string; returns the text held back
        and True when a stop string ended the answer (finish.reason is then "stop")."""
        if stops:
            cut = min((i for i in (pending.find(s) for s in stops) if i >= 0), default=-1)
            if cut >= 0:
                self._emit(stream, finish, pending[:cut])
                finish.reason = "stop"
                return "", True
            ready = len(pending) - _held_back(pending, stops, hold_max)
        else:
            ready = len(pending)
        if ready:
            self._emit(stream, finish, pending[:ready])
        return pending[ready:], False

    @staticmethod
    def _emit(stream: TokenStream, finish: FinishInfo, text: str) -> None:
        if text:
            finish.text += text
            stream.put(text)


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _held_back(text: str, stops: Sequence[str], hold_max: int) -> int:
    """How many trailing characters could still be the start of a stop sequence."""
    for k in range(min(hold_max, len(text)), 0, -1):
        tail = text[-k:]
        if any(s.startswith(tail) for s in stops):
            return k
    return 0
