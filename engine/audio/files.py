"""File-backed audio: a WAV played into the pipeline as if from a mic, and a WAV written as if to a speaker.

The same pipeline then runs without devices, for tests, `venus chat --mic/--speaker` and `venus duplex`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.errors import AudioDeviceError

Consumer = Callable[[np.ndarray], None]  # receives one block of mono float32 at the source's rate
Renderer = Callable[[np.ndarray], None]  # fills one block of mono float32 at the sink's rate

_AUDIO_FILE_FIX = "give a WAV, FLAC or OGG file (any rate and channel count), e.g. made with `sox` or `espeak-ng -w`"


class AudioFileError(AudioDeviceError):
    """An audio file standing in for the microphone or speaker cannot be read or written (no device is involved)."""

    code = "audio-file-unreadable"


def _unreadable_reason(path: Path) -> str | None:
    """Why `path` cannot be opened for reading, in words, or None when the file system allows it."""
    if not path.exists():
        return "no such file" if path.parent.is_dir() else f"the folder {path.parent} does not exist"
    if path.is_dir():
        return "it is a folder, not a file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    if path.stat().st_size == 0:
        return "the file is empty"
    return None


def audio_file_info(path: Path) -> sf._SoundFileInfo:
    """The header of an input audio file, or an AudioFileError saying "cannot read PATH: <reason>" and the fix."""
    path = Path(path)
    reason = _unreadable_reason(path)
    if reason is None:
        try:
            info = sf.info(str(path))
        except (RuntimeError, sf.LibsndfileError) as exc:
            # libsndfile says "Error opening '...': Format not recognised." (or "System error."): keep its last words
            reason = "not an audio file libsndfile can read (" + str(exc).rsplit(":", 1)[-1].strip().rstrip(".") + ")"
        else:
            if info.frames <= 0:
                reason = "the file holds no audio frames"
            else:
                return info
    raise AudioFileError(f"cannot read {path}: {reason}", fix=_AUDIO_FILE_FIX)


def check_output_file(path: Path) -> None:
    """Raise AudioFileError ("cannot write PATH: <reason>") unless a WAV can be created at `path`."""
    path = Path(path)
    if not path.parent.is_dir():
        raise AudioFileError(f"cannot write {path}: the folder {path.parent} does not exist", fix="create it first")
    if path.is_dir():
        raise AudioFileError(f"cannot write {path}: it is a folder", fix="give a file name such as out.wav")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise AudioFileError(f"cannot write {path}: permission denied", fix="choose a folder you can write to")


class FileSource:
    """Reads a WAV (any rate, mixed to mono) and delivers it in blocks at real-time pace or as fast as possible.

    After the file it delivers `tail_s` of silence, so a final word is followed by the pause that closes it.
    """

    def __init__(self, path: Path, *, realtime: bool = True, block_ms: int = 10, tail_s: float = 1.0) -> None:
        if block_ms < 1 or tail_s < 0:
            raise ValueError(f"block_ms must be >= 1 and tail_s >= 0, got {block_ms}, {tail_s}")
        path = Path(path)
        info = audio_file_info(path)
        self.path = path
        self.sample_rate = int(info.samplerate)
        self.realtime = realtime
        self._block = max(1, self.sample_rate * block_ms // 1000)
        self._tail = int(tail_s * self.sample_rate)
        self.finished = threading.Event()  # set after the last block (file and tail) was delivered
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, consumer: Consumer) -> None:
        """Begin delivering blocks to `consumer` on a reader thread."""
        audio, _ = sf.read(str(self.path), dtype="float32", always_2d=True)
        audio = np.concatenate([audio.mean(axis=1), np.zeros(self._tail, np.float32)]).astype(np.float32)
        self._thread = threading.Thread(target=self._run, args=(audio, consumer), name="venus-file-source",
                                        daemon=True)
        self._thread.start()

    def _run(self, audio: np.ndarray, consumer: Consumer) -> None:
        began = time.monotonic()
        for i in range(0, len(audio), self._block):
            if self._stopping.is_set():
                break
            if self.realtime:
                delay = began + i / self.sample_rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            consumer(audio[i:i + self._block])
        self.finished.set()

    def stop(self) -> None:
        """Stop delivering."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=2)


class FileSink:
    """Pulls blocks from the player at real-time pace and writes them to a WAV placed on the session clock.

    Sample i of the file is what would have been heard at session time `start_ms + i / rate`; the file begins
    with silence for the session time that passed before the sink started, so sample 0 is session time 0.
    """

    def __init__(self, path: Path, *, sample_rate: int = 22050, blocksize_ms: int = 10,
                 session_ms: Callable[[], int] | None = None) -> None:
        if sample_rate < 8000 or blocksize_ms < 1:
            raise ValueError(f"sample_rate must be >= 8000 and blocksize_ms >= 1, got {sample_rate}, {blocksize_ms}")
        self.path = Path(path)
        check_output_file(self.path)
        self.sample_rate = sample_rate
        self.blocksize = max(1, sample_rate * blocksize_ms // 1000)
        self._session_ms = session_ms
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.lead_samples = 0  # silence written for session time before the sink started

    def start(self, render: Renderer) -> None:
        """Open the file and begin pulling audio on a writer thread."""
        self._file = sf.SoundFile(str(self.path), "w", samplerate=self.sample_rate, channels=1, subtype="PCM_16")
        if self._session_ms is not None:
            self.lead_samples = self._session_ms() * self.sample_rate // 1000
            self._file.write(np.zeros(self.lead_samples, np.float32))
        self._thread = threading.Thread(target=self._run, args=(render,), name="venus-file-sink", daemon=True)
        self._thread.start()

    def _run(self, render: Renderer) -> None:
        # Blocks are rendered straight into a buffer of about half a second that goes to the file when full:
        # one write per 50 blocks instead of one per block.
        pending = np.zeros(self.blocksize * 50, np.float32)
        filled = 0
        began = time.monotonic()
        written = 0
        while not self._stopping.is_set():
            delay = began + written / self.sample_rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            render(pending[filled:filled + self.blocksize])
            filled += self.blocksize
            written += self.blocksize
            if filled == len(pending):
                self._file.write(pending)
                filled = 0
        self._file.write(pending[:filled])

    def stop(self) -> None:
        """Stop pulling and close the file."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if getattr(self, "_file", None) is not None:
            self._file.close()
            self._file = None
