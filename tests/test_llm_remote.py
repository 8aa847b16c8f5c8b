"""The remote OpenAI-compatible backend against a real `python -m llama_cpp.server` on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import httpx
import pytest

from engine.errors import BackendError
from engine.llm import ChatMessage, Conversation, ConversationOptions, GenerateRequest, RenderOptions
from engine.llm.control import allowed_actions, decision_schema, parse_decision
from engine.llm.remote import RemoteBackend, RemoteOptions
from engine.models.registry import resolve
from engine.timeline import Timeline
from engine.timeline import events as ev

pytest.importorskip("uvicorn", reason="the llama.cpp server needs the dev extra (uvicorn, fastapi, ...)")
pytest.importorskip("fastapi", reason="the llama.cpp server needs the dev extra (uvicorn, fastapi, ...)")

MESSAGES = [
    ChatMessage("system", "You are a storyteller."),
    ChatMessage("user", "Tell me a long story about a lighthouse keeper."),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(resolve("smollm2-135m-instruct-q4_1", kind="llm")),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not come up: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_remote_streams_pieces(server):
    backend = RemoteBackend(RemoteOptions(base_url=server))
    try:
        stream = backend.generate(MESSAGES, GenerateRequest(temperature=0.0, max_tokens=24))
        pieces = list(stream)
        assert len(pieces) > 3
        assert "".join(pieces) == stream.finish.text
        assert stream.finish.reason in ("max_tokens", "complete")
    finally:
        backend.close()


def test_remote_cancel_stops_the_stream(server):
    backend = RemoteBackend(RemoteOptions(base_url=server))
    try:
        stream = backend.generate(MESSAGES, GenerateRequest(temperature=0.0, max_tokens=400))
        received = 0
        for _piece in stream:
            received += 1
            if received == 3:
                backend.cancel()
        assert stream.finish.reason == "cancelled"
        assert received <= 4  # at most the piece already in flight
    finally:
        backend.close()


def test_remote_decision_is_constrained_by_the_schema(server):
    backend = RemoteBackend(RemoteOptions(base_url=server))
    actions = allowed_actions((), can_resume=False)
    try:
        for prompt in ("Hi there!", "What is two plus two?", "(to my sister) pass the salt"):
            messages = [ChatMessage("system", "You are Venus."), ChatMessage("user", prompt)]
            request = GenerateRequest(temperature=0.0, max_tokens=32, json_schema=decision_schema((), actions))
            text = backend.generate(messages, request).text()
            decision = parse_decision(text, (), actions)
            assert decision.error == "", (prompt, text)
            assert json.loads(text)["action"] in {"respond", "silent"}
    finally:
        backend.close()


def test_remote_timeouts_and_unreachable_servers_are_clear_errors(server):
    port = _free_port()  # nothing listens here
    dead = RemoteBackend(RemoteOptions(base_url=f"http://127.0.0.1:{port}/v1", connect_timeout_s=1))
    with pytest.raises(BackendError, match=f"127.0.0.1:{port}"):
        dead.generate(MESSAGES, GenerateRequest(max_tokens=4)).text()
    dead.close()
    impatient = RemoteBackend(RemoteOptions(base_url=server, timeout_s=0.001))
    with pytest.raises(BackendError, match="did not answer within"):
        impatient.generate(MESSAGES, GenerateRequest(max_tokens=64)).text()
    impatient.close()
    with pytest.raises(ValueError, match="base_url"):
        RemoteOptions(base_url="127.0.0.1:8080")


def test_conversation_runs_a_turn_over_the_remote_backend(server):
    backend = RemoteBackend(RemoteOptions(base_url=server))
    timeline = Timeline()
    options = ConversationOptions(
        render=RenderOptions(system_prompt="You are Venus. Answer briefly."),
        answer=GenerateRequest(temperature=0.0, max_tokens=24), n_ctx=2048, decision_max_tokens=32,
    )
    conv = Conversation(timeline, backend, options)
    try:
        timeline.append(ev.UserText(text="What colour is the sky?"))
        turn = conv.respond()
        chunks = list(turn.chunks())
        end = turn.wait(120)
        assert end.reason in ("complete", "max_tokens", "stop"), end
        assert chunks and " ".join(chunks).split() == end.text.split()
        tokens = timeline.events(kinds=[ev.Kind.ASSISTANT_TOKEN])
        assert "".join(t.text for t in tokens) == end.text
        assert turn.decision is not None and not turn.decision.error
    finally:
        backend.close()
