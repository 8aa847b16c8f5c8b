"""The remote backend: any OpenAI-compatible `/v1/chat/completions` server (llama.cpp server, vLLM, Ollama).

Answers stream as server-sent events. A remote server keeps no context Venus can address, so `sync` only
remembers the messages; the whole conversation is sent with each request. Servers cannot continue a partial
assistant message in the chat API, so a trailing open assistant message is left out of the request.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from engine.errors import BackendError
from engine.llm.backend import FinishInfo, GenerateRequest, SyncStats, TokenStream
from engine.llm.template import ChatMessage
from engine.secrets import PROCESS_REDACTOR, mask_secret


@dataclass(frozen=True)
class RemoteOptions:
    """Where the server is and how long to wait for it."""

    base_url: str = "http://127.0.0.1:8080/v1"  # ends in /v1
    model: str = ""  # model name sent to the server; empty = the server's default
    timeout_s: float = 60.0  # longest wait for the next streamed piece
    connect_timeout_s: float = 5.0  # longest wait to connect
    constraint: Literal["json_object", "json_schema", "grammar"] = "json_object"  # how decisions are constrained
    # bearer token, if the server wants one (from the keyring, never from settings); masked, and not in repr
    api_key: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if self.timeout_s <= 0 or self.connect_timeout_s <= 0:
            raise ValueError("timeout_s and connect_timeout_s must be positive")
        if self.api_key:
            mask_secret(self.api_key)  # from here on it never reaches a log, a notice or the timeline

    @classmethod
    def from_settings(cls, llm: Any, api_key: str = "") -> RemoteOptions:
        """Options from the `llm` section of the settings (engine.settings.LLMSettings)."""
        return cls(base_url=llm.remote_url, model=llm.remote_model, timeout_s=llm.remote_timeout_s, api_key=api_key)


class RemoteBackend:
    """Streams chat completions from an OpenAI-compatible server; cancel closes the stream at once."""

    def __init__(self, options: RemoteOptions) -> None:
        self.options = options
        headers = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else {}
        self._client = httpx.Client(
            base_url=options.base_url.rstrip("/"),
            timeout=httpx.Timeout(options.timeout_s, connect=options.connect_timeout_s),
            headers=headers,
        )
        self._active: dict[TokenStream, httpx.Response | None] = {}
        self._lock = threading.Lock()
        self._messages: list[ChatMessage] = []

    def sync(self, messages: Sequence[ChatMessage], *, evaluate: bool = True) -> SyncStats:
        """Remember the conversation (the server keeps no addressable cache)."""
        self._messages = list(messages)
        return SyncStats(total=len(messages))

    def generate(self, messages: Sequence[ChatMessage], request: GenerateRequest) -> TokenStream:
        """Stream the server's answer to `messages` on a background thread."""
        stream = TokenStream()
        with self._lock:
            self._active[stream] = None
        body = self._body(messages, request)
        threading.Thread(target=self._run, args=(stream, body), name="venus-remote-llm", daemon=True).start()
        return stream

    def cancel(self) -> None:
        """Stop every running stream: flag it and close its connection."""
        with self._lock:
            active = list(self._active.items())
        for stream, response in active:
            stream.cancel()
            if response is not None:
                try:
                    response.close()
                except Exception:  # closing a half-read response from another thread may complain
                    pass

    def close(self) -> None:
        """Cancel streams and close the connection pool."""
        self.cancel()
        self._client.close()

    # ---- internals ----------------------------------------------------------------------------------------

    def _body(self, messages: Sequence[ChatMessage], request: GenerateRequest) -> dict[str, Any]:
        wire = [m for m in messages]
        if wire and wire[-1].role == "assistant":
            wire = wire[:-1]  # an open assistant turn cannot be continued through the chat API
        body: dict[str, Any] = {
            # data (tool output, camera text) goes as a user turn: the "tool" role needs a tool call id, and it
            # is never sent as system, which is Venus's own
            "messages": [{"role": "user" if m.role == "tool" else m.role, "content": m.content}
                         for m in wire if m.role != "assistant" or m.content],
            "stream": True,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": request.seed,
        }
        if self.options.model:
            body["model"] = self.options.model
        if request.stop:
            body["stop"] = list(request.stop)
        if request.json_schema is not None or request.grammar:
            style = self.options.constraint
            if style == "grammar" and request.grammar:
                body["grammar"] = request.grammar
            elif style == "json_schema" and request.json_schema is not None:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "decision", "schema": request.json_schema, "strict": True},
                }
            elif request.json_schema is not None:
                body["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return body

    def _run(self, stream: TokenStream, body: dict[str, Any]) -> None:
        finish = FinishInfo(reason="complete")
        error: BaseException | None = None
        url = f"{self.options.base_url.rstrip('/')}/chat/completions"
        try:
            with self._client.stream("POST", "/chat/completions", json=body) as response:
                with self._lock:
                    self._active[stream] = response
                if response.status_code != 200:
                    detail = response.read().decode("utf-8", "replace")[:300]
                    raise _error(f"{url} answered HTTP {response.status_code}: {detail}",
                                 "check llm.remote_url, llm.remote_model and the API key in settings")
                for line in response.iter_lines():
                    if stream.cancelled.is_set():
                        finish.reason = "cancelled"
                        break
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    choice = (json.loads(data).get("choices") or [{}])[0]
                    piece = (choice.get("delta") or {}).get("content") or ""
                    if piece:
                        finish.text += piece
                        stream.put(piece)
                    if choice.get("finish_reason") == "length":
                        finish.reason = "max_tokens"
                    elif choice.get("finish_reason") == "stop":
                        finish.reason = "complete"
        except BackendError as exc:
            finish.reason, error = f"error: {exc}", exc
        except (httpx.HTTPError, json.JSONDecodeError, RuntimeError) as exc:
            if stream.cancelled.is_set():
                finish.reason = "cancelled"
            elif isinstance(exc, httpx.TimeoutException):
                error = _error(f"{url} did not answer within {self.options.timeout_s:g} s ({type(exc).__name__})",
                               "check that the server is running, or raise llm.remote_timeout_s", exc)
                finish.reason = f"error: {error}"
            else:
                error = _error(f"talking to {url} failed: {exc}",
                               "check llm.remote_url in settings and that the server is reachable", exc)
                finish.reason = f"error: {error}"
        finally:
            with self._lock:
                self._active.pop(stream, None)
            stream.close(finish, error)


def _error(message: str, fix: str, cause: BaseException | None = None) -> BackendError:
    """A BackendError with known secrets masked (a server may echo the key back); `cause` stays chained."""
    error = BackendError(PROCESS_REDACTOR.scrub_text(message), fix=fix)
    error.__cause__ = cause
    return error
