"""The model side of Venus: context from the timeline, control decisions, streaming decode, backends."""

from __future__ import annotations

import os
from typing import Any

from engine.errors import BackendError
from engine.llm.backend import FinishInfo, GenerateRequest, LLMBackend, SyncStats, TokenStream
from engine.llm.budget import OFFER, SentenceBudget, asks_for_more
from engine.llm.chunker import ChunkerOptions, ClauseChunker, chunk_stream, sentence_ends
from engine.llm.context import (
    INTERRUPTED_MARK,
    SMALL_MODEL_PROMPT,
    RenderOptions,
    cut_to_heard,
    extractive_summary,
    render_messages,
)
from engine.llm.control import (
    DECISION_PREFIX,
    ToolSpec,
    allowed_actions,
    as_tool_specs,
    decision_grammar,
    decision_schema,
    format_decision,
    parse_decision,
)
from engine.llm.conversation import AssistantTurn, Conversation, ConversationOptions, tool_calls_enabled
from engine.llm.llama_backend import LlamaBackend
from engine.llm.llama_options import LlamaOptions, choose_threads
from engine.llm.remote import RemoteBackend, RemoteOptions
from engine.llm.template import ChatMessage, ChatTemplate

BACKEND_ENV = "VENUS_LLM_BACKEND"  # set by `--llm-backend` on venus chat / duplex; wins over llm.backend


def chosen_backend(llm: Any) -> str:
    """Which backend open_backend() will use: the --llm-backend option (VENUS_LLM_BACKEND) or llm.backend."""
    return os.environ.get(BACKEND_ENV) or llm.backend


def open_backend(llm: Any, *, api_key: str = "") -> LLMBackend:
    """The backend the `llm` settings section asks for (in-process llama.cpp or torch, or a remote server)."""
    backend = chosen_backend(llm)
    if backend == "remote":
        return RemoteBackend(RemoteOptions.from_settings(llm, api_key=api_key))
    from engine.models.registry import resolve

    path = str(resolve(llm.model, kind="llm"))
    if backend == "torch":
        try:
            from engine.llm.torch import TorchBackend, TorchOptions
        except ImportError as exc:
            raise BackendError(f"llm.backend is torch but {exc.name or 'torch'} is not installed",
                               fix='pip install "venus-assistant[torch]" (README: the CUDA build for a GPU)') from exc
        return TorchBackend(TorchOptions.from_settings(llm, path))
    if backend != "llama_cpp":
        raise BackendError(f"unknown LLM backend {backend!r}", fix="use llama_cpp, torch or remote")
    return LlamaBackend(LlamaOptions.from_settings(llm, path))


__all__ = [
    "DECISION_PREFIX",
    "INTERRUPTED_MARK",
    "OFFER",
    "SMALL_MODEL_PROMPT",
    "SentenceBudget",
    "asks_for_more",
    "sentence_ends",
    "tool_calls_enabled",
    "LlamaBackend",
    "LlamaOptions",
    "RemoteBackend",
    "RemoteOptions",
    "choose_threads",
    "chosen_backend",
    "BACKEND_ENV",
    "AssistantTurn",
    "ChatMessage",
    "ChatTemplate",
    "ChunkerOptions",
    "ClauseChunker",
    "Conversation",
    "ConversationOptions",
    "FinishInfo",
    "GenerateRequest",
    "LLMBackend",
    "RenderOptions",
    "SyncStats",
    "TokenStream",
    "ToolSpec",
    "allowed_actions",
    "as_tool_specs",
    "chunk_stream",
    "cut_to_heard",
    "decision_grammar",
    "decision_schema",
    "extractive_summary",
    "format_decision",
    "open_backend",
    "parse_decision",
    "render_messages",
]
