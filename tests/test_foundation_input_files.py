"""A missing or unreadable input file names itself and the reason ("cannot read X: ..."), never a lost device."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.files import AudioFileError, FileSink, FileSource, audio_file_info


def _written(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda d: d / "missing.wav", "no such file"),
        (lambda d: d / "no-folder" / "in.wav", "the folder"),
        (lambda d: d, "it is a folder, not a file"),
        (lambda d: _written(d / "empty.wav", b""), "the file is empty"),
        (lambda d: _written(d / "notes.wav", b"not audio"), "not an audio file libsndfile can read"),
    ],
)
def test_file_source_says_cannot_read_and_why(tmp_path: Path, make, reason: str) -> None:
    path = make(tmp_path)
    with pytest.raises(AudioFileError) as caught:
        FileSource(path)
    message = str(caught.value)
    assert message.startswith(f"cannot read {path}: {reason}"), message
    assert "System error" not in message and caught.value.code == "audio-file-unreadable"


def test_a_readable_file_gives_its_header_and_a_sink_needs_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "in.wav"
    sf.write(str(path), np.zeros(1600, np.float32), 16000)
    assert audio_file_info(path).samplerate == 16000
    with pytest.raises(AudioFileError, match=r"cannot write .*out\.wav: the folder .* does not exist"):
        FileSink(tmp_path / "nowhere" / "out.wav")


def _venus(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [["duplex", "--input", "{x}", "--output", "{out}"],
                                     ["chat", "--mic", "{x}", "--speaker", "{out}"]])
def test_commands_name_a_missing_input_file_at_once(tmp_path: Path, command: list[str]) -> None:
    """Before any model loads, one line: the file, the reason and the fix; no device error, no traceback."""
    missing = tmp_path / "typo.wav"
    proc = _venus(*(a.format(x=missing, out=tmp_path / "out.wav") for a in command))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [lines[-1]] and lines[-1].startswith(f"venus: cannot read {missing}: no such file — give a WAV")
    assert lines[-1].endswith("[audio-file-unreadable]")
    assert "audio-device-lost" not in proc.stderr and "System error" not in proc.stderr


def test_duplex_names_a_missing_input_folder(tmp_path: Path) -> None:
    proc = _venus("duplex", "--input-dir", str(tmp_path / "cases"))
    assert proc.returncode == 2 and proc.stderr == f"venus duplex: cannot read {tmp_path / 'cases'}: no such folder\n"
    (tmp_path / "cases").mkdir()
    proc = _venus("duplex", "--input-dir", str(tmp_path / "cases"))
    assert proc.returncode == 2 and "no */input.wav under" in proc.stderr
