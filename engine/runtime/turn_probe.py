"""The chat LLM's judgement of whether the user's words are a whole turn: one read of its next-token
distribution after the words (`LlamaBackend.next_token_logprobs`), made on the LLM worker, where the words are
already in the KV cache from the partials, and weighed by the probe that bench/duplex/eot_probe.py fits.

The loop never waits on the model: it asks for the words it has (`lookup`), and until the answer comes the
end-of-turn rule waits a little (RuntimeOptions.end_of_turn_probe_wait_ms), then decides without it.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.runtime import _eot_probe_weights
from engine.runtime.turn_taking import PROBE_WORDS, probe_probability, strip_asr_punctuation

log = logging.getLogger(__name__)

_KEEP = 16  # judged transcripts remembered (a turn's final, its partial at the end of speech, the turn before)


def probe_groups(backend: Any) -> list[list[int]]:
    """The token groups the probe reads: the closers (end-of-message marker, ". ? !"), then each of PROBE_WORDS
    (a word that is not one token in this vocabulary reads as impossible, which the probe's floor clips)."""
    groups = [list(backend.closing_tokens())]
    for word in PROBE_WORDS:
        token = backend.word_token(word)
        groups.append([token] if token is not None else [])
    return groups


def can_probe(backend: Any) -> bool:
    """The backend reads its own logits (llama.cpp and the torch backend; not a remote server)."""
    return all(callable(getattr(backend, name, None)) for name in ("next_token_logprobs", "closing_tokens",
                                                                   "word_token"))


def judge_words(conversation: Any, groups: list[list[int]], text: str) -> float | None:
    """The probe's probability that `text` (the user's whole turn so far) is a whole turn, read now on the
    calling thread; None when the backend cannot read its logits."""
    words = strip_asr_punctuation(text)
    logprobs = conversation.next_token_logprobs(words, groups)
    if logprobs is None:
        return None
    value = probe_probability(logprobs, len(words.split()))
    if not math.isfinite(value) or not np.all(np.isfinite(logprobs) | np.isneginf(logprobs)):
        log.warning("the end-of-turn probe read non-numbers from the model for %r; the lexical model decides", text)
        return None
    return value


class TurnProbe:
    """Asks the conversation's model, on its worker, how likely the user's words are a whole turn."""

    def __init__(self, conversation: Any, submit: Callable[[Callable[[], None]], Any], model: str) -> None:
        """`conversation`: engine.llm.Conversation; `submit`: runs a job on the LLM worker (AssistantTurns);
        `model`: the chat model's id (settings.llm.model). The probe's weights were fitted on one model's logits
        (`_eot_probe_weights.MODEL`): with any other the lexical model decides."""
        self._conversation = conversation
        self._submit = submit
        self.enabled = model == _eot_probe_weights.MODEL and can_probe(getattr(conversation, "backend", None))
        self._groups: list[list[int]] | None = None
        self._lock = threading.Lock()
        self._judged: OrderedDict[str, float | None] = OrderedDict()
        self._asked: set[str] = set()

    def lookup(self, text: str) -> tuple[float | None, bool]:
        """(the probe's probability for `text` or None, whether an answer is still coming); asks for it once."""
        if not self.enabled or not text.strip():
            return None, False
        with self._lock:
            if text in self._judged:
                return self._judged[text], False
            if text in self._asked:
                return None, True
            self._asked.add(text)
        try:
            self._submit(lambda: self._judge(text))
        except RuntimeError:  # the worker is shut down (Venus is closing): the lexical model decides
            with self._lock:
                self._asked.discard(text)
                self._judged[text] = None
            return None, False
        return None, True

    def _judge(self, text: str) -> None:
        value: float | None = None
        try:
            if self._groups is None:
                self._groups = probe_groups(self._conversation.backend)
            value = judge_words(self._conversation, self._groups, text)
        except Exception:  # the lexical model decides alone; a failing model shows up at the answer
            log.exception("the end-of-turn probe failed for %r", text)
        with self._lock:
            self._asked.discard(text)
            self._judged[text] = value
            while len(self._judged) > _KEEP:
                self._judged.popitem(last=False)
