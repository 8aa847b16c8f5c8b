"""`venus chat` as a user runs it: typed in a terminal, and speech from a WAV file to a WAV file."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import soundfile as sf


def _venus(*args: str, stdin: str = "", timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy())


def test_typed_chat_answers_and_persists_the_conversation() -> None:
    proc = _venus("chat", stdin="What is the capital of France?\n/quit\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = next(line for line in proc.stdout.splitlines() if "venus: " in line)
    assert answer.split("venus: ", 1)[1].strip(), proc.stdout
    from engine.timeline import open_store

    store = open_store()
    try:
        [conversation] = store.list_conversations()
        assert conversation.event_count > 3
        events = store.open_conversation(conversation.id).events()
        assert any(e.kind == "user_text" and "France" in e.text for e in events)
        assert any(e.kind == "assistant_turn_end" and e.text.strip() for e in events)
    finally:
        store.close()


def test_spoken_chat_from_a_wav_file_to_a_wav_file(tmp_path, speech) -> None:
    question, audio = speech("What is the capital of France?", speed=150)
    padded = np.concatenate([np.zeros(8000, np.float32), audio, np.zeros(16000 * 3, np.float32)])
    sf.write(question, padded, 16000)
    reply = tmp_path / "reply.wav"
    proc = _venus("chat", "--mic", str(question), "--speaker", str(reply))
    assert proc.returncode == 0, proc.stderr[-2000:]
    heard = next(line for line in proc.stdout.splitlines() if line.startswith("you (said):"))
    assert "capital" in heard.lower() and "france" in heard.lower()
    assert any(line.startswith("venus: ") for line in proc.stdout.splitlines()), proc.stdout
    voice, rate = sf.read(reply, dtype="float32")
    assert rate == 22050
    assert np.sqrt(np.mean(voice**2)) > 0.005, "Venus's answer is audible in the speaker file"
