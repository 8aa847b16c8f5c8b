"""Who words over Venus's voice are said to, read by the chat LLM: how much likelier it finds them as the user's
next message in this conversation than as words said to the people at home (a likelihood ratio per token).

"How old is the Taj Mahal?" over her answer about the Eiffel Tower reads as said to her (+1.5 nats a token);
"Is anyone using the car tonight?" as said to the family (-0.8). The word cues of engine.runtime.cues find a
name, a stop cue or a request form; what they cannot weigh is whether the words fit a conversation with an
assistant at all, which the model has read millions of. The overlap policy asks only when its word rules would
stop Venus for the words alone (`ConversationContext.addressee_score`), and only on the final transcript.

The threshold was chosen on the train and dev splits' text by bench/duplex/addressee_fit.py for one model's logits
(`_addressee_weights.MODEL`); with any other model the policy's word rules decide alone.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from engine.runtime import _addressee_weights

log = logging.getLogger(__name__)

# The words' other reading: said at home, to someone in the room, while the assistant talked
FRAME = 'At home, while the computer was talking, she turned to her family and said: "'
_KEEP = 16


def can_score(backend: Any) -> bool:
    """The backend reads its own logits (llama.cpp; not a remote server)."""
    return callable(getattr(backend, "words_logprob", None))


def log_ratio(conversation: Any, text: str) -> float | None:
    """Nats per token by which the conversation's model prefers `text` as the user's next message over the same
    words said at home; None when the backend cannot read its logits or the words are empty."""
    read = conversation.words_logprob(text.strip(), FRAME)
    if read is None:
        return None
    in_chat, at_home, tokens = read
    value = (in_chat - at_home) / tokens if tokens else None
    if value is not None and not math.isfinite(value):  # a model that reads non-numbers decides nothing
        log.warning("the addressee probe read a non-number from the model for %r; the word rules decide", text)
        return None
    return value


class AddresseeProbe:
    """Reads `log_ratio` on the thread `submit` runs jobs on; `score` waits a bounded time for it, once."""

    def __init__(self, conversation: Any, submit: Callable[[Callable[[], None]], Any], model: str) -> None:
        """`conversation`: engine.llm.Conversation; `submit`: runs a job on the probe's thread; `model`: the chat
        model's id (settings.llm.model)."""
        self._conversation = conversation
        self._submit = submit
        self.enabled = model == _addressee_weights.MODEL and can_score(getattr(conversation, "backend", None))
        self._lock = threading.Lock()
        self._done: OrderedDict[str, float | None] = OrderedDict()
        self._pending: dict[str, threading.Event] = {}

    def score(self, text: str, wait_s: float) -> float | None:
        """The log ratio of `text`, asked for once and awaited up to `wait_s` by that first call only (a later
        call for words still being read returns None at once: the loop must not block on them twice)."""
        text = text.strip()
        if not self.enabled or not text:
            return None
        with self._lock:
            if text in self._done:
                return self._done[text]
            if text in self._pending:
                return None
            ready = self._pending[text] = threading.Event()
            try:
                self._submit(lambda: self._read(text, ready))
            except RuntimeError:  # the thread is shut down (Venus is closing): the word rules decide
                del self._pending[text]
                return None
        ready.wait(wait_s)
        with self._lock:
            return self._done.get(text)

    def _read(self, text: str, ready: threading.Event) -> None:
        value: float | None = None
        try:
            value = log_ratio(self._conversation, text)
        except Exception:  # the word rules decide alone; a failing model shows up at the answer
            log.exception("the addressee probe failed for %r", text)
        with self._lock:
            self._pending.pop(text, None)
            self._done[text] = value
            while len(self._done) > _KEEP:
                self._done.popitem(last=False)
        ready.set()
