"""Sound-card streams through PortAudio (sounddevice), with a watchdog that reopens a lost device.

Callbacks only copy a block and note the time; a watchdog thread notices a stream that stopped, failed or
went silent, reports it, and reopens it on the system default device at the same rate.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import numpy as np

from engine.errors import AudioDeviceError

log = logging.getLogger(__name__)

Notice = Callable[[str, str], None]  # level, text
Consumer = Callable[[np.ndarray], None]
Renderer = Callable[[np.ndarray], None]


def _sounddevice():
    try:
        import sounddevice as sd
    except OSError as exc:  # libportaudio2 missing
        raise AudioDeviceError(f"PortAudio is not available ({exc})",
                               fix="install the PortAudio library (libportaudio2) or use --mic/--speaker files") from exc
    return sd


def find_device(spec: str | int | None, kind: str) -> int | None:
    """Index of the input/output device named (or numbered) `spec`; None means the system default."""
    if spec is None or spec == "":
        return None
    sd = _sounddevice()
    try:
        return int(sd.query_devices(spec, kind)["index"])
    except (ValueError, sd.PortAudioError) as exc:
        names = [d["name"] for d in sd.query_devices() if d[f"max_{kind}_channels"] > 0]
        raise AudioDeviceError(f"no {kind} device matches {spec!r} ({exc})",
                               fix=f"set audio.{kind}_device to one of {names}, or leave it empty for the default") from exc


def default_rate(device: int | None, kind: str) -> int:
    """The device's own sample rate, so PortAudio does not resample."""
    sd = _sounddevice()
    return int(sd.query_devices(device, kind)["default_samplerate"])


class _WatchedStream:
    """A PortAudio stream plus the watchdog that reopens it on the default device when it fails."""

    kind = "input"

    def __init__(self, device: str | int | None, *, blocksize_ms: int, on_notice: Notice | None,
                 stall_s: float, sample_rate: int | None) -> None:
        if blocksize_ms < 1 or stall_s <= 0:
            raise ValueError(f"blocksize_ms must be >= 1 and stall_s > 0, got {blocksize_ms}, {stall_s}")
        self._sd = _sounddevice()
        self.device = find_device(device, self.kind)
        self.sample_rate = sample_rate or default_rate(self.device, self.kind)
        self.blocksize = max(1, self.sample_rate * blocksize_ms // 1000)
        self._on_notice = on_notice or (lambda level, text: log.warning(text))
        self._stall_s = stall_s
        self._stream = None
        self._last_callback = 0.0
        self._stopping = threading.Event()
        self._watchdog: threading.Thread | None = None
        self.reopened = 0  # how many times the stream was reopened after a failure

    def _open(self, device: int | None) -> None:
        raise NotImplementedError

    def start(self) -> None:
        """Open the stream on the chosen device and start watching it."""
        try:
            self._open(self.device)
        except self._sd.PortAudioError as exc:
            raise AudioDeviceError(f"cannot open the {self.kind} device {self.device!r} ({exc})",
                                   fix=f"check audio.{self.kind}_device, or free the device from other apps") from exc
        self._watchdog = threading.Thread(target=self._watch, name=f"venus-{self.kind}-watchdog", daemon=True)
        self._watchdog.start()

    def _started(self, stream) -> None:
        self._last_callback = time.monotonic()
        self._stream = stream
        stream.start()

    def _watch(self) -> None:
        while not self._stopping.wait(0.2):
            stream = self._stream
            stalled = time.monotonic() - self._last_callback > self._stall_s
            if stream is not None and stream.active and not stalled:
                continue
            self._on_notice("warning", f"the audio {self.kind} device stopped working; reopening the default device")
            self._close_quietly(stream)
            while not self._stopping.is_set():
                try:
                    self.device = None
                    self._open(None)
                    self.reopened += 1
                    self._on_notice("info", f"the audio {self.kind} is back on the default device")
                    break
                except Exception as exc:  # PortAudio raises several types here; keep trying, never crash
                    log.warning("reopening the %s device failed: %s", self.kind, exc)
                    if self._stopping.wait(1.0):
                        return

    def _close_quietly(self, stream) -> None:
        # Closing a dead stream can block inside PortAudio; do it on a throwaway thread.
        if stream is None:
            return
        closer = threading.Thread(target=lambda: _abort_and_close(stream), daemon=True)
        closer.start()
        closer.join(timeout=1.0)

    def stop(self) -> None:
        """Stop the watchdog and close the stream."""
        self._stopping.set()
        if self._watchdog is not None:
            self._watchdog.join(timeout=2)
        self._close_quietly(self._stream)
        self._stream = None


def _abort_and_close(stream) -> None:
    try:
        stream.abort()
        stream.close()
    except Exception as exc:  # the device is already gone; nothing left to release
        log.debug("closing a failed stream: %s", exc)


class DeviceSource(_WatchedStream):
    """A microphone: mono blocks at the device's rate handed to a consumer."""

    kind = "input"

    def __init__(self, device: str | int | None = None, *, blocksize_ms: int = 10, on_notice: Notice | None = None,
                 stall_s: float = 1.0, sample_rate: int | None = None) -> None:
        super().__init__(device, blocksize_ms=blocksize_ms, on_notice=on_notice, stall_s=stall_s,
                         sample_rate=sample_rate)
        self._consumer: Consumer = lambda block: None

    def start(self, consumer: Consumer) -> None:  # type: ignore[override]
        """Deliver mic blocks to `consumer` (called on the PortAudio thread: it must only enqueue)."""
        self._consumer = consumer
        super().start()

    def _open(self, device: int | None) -> None:
        def callback(indata, frames, time_info, status) -> None:
            self._last_callback = time.monotonic()
            self._consumer(indata[:, 0].copy())

        self._started(self._sd.InputStream(device=device, samplerate=self.sample_rate, channels=1,
                                           dtype="float32", blocksize=self.blocksize, callback=callback))


class DeviceSink(_WatchedStream):
    """A speaker: the output callback asks a renderer (the player) for each block."""

    kind = "output"

    def __init__(self, device: str | int | None = None, *, blocksize_ms: int = 10, on_notice: Notice | None = None,
                 stall_s: float = 1.0, sample_rate: int | None = None) -> None:
        super().__init__(device, blocksize_ms=blocksize_ms, on_notice=on_notice, stall_s=stall_s,
                         sample_rate=sample_rate)
        self._render: Renderer = lambda out: out.fill(0.0)
        self.underflows = 0  # output underruns PortAudio reported (the echo canceller's reference slipped)

    def start(self, render: Renderer) -> None:  # type: ignore[override]
        """Start pulling blocks from `render` on the PortAudio thread."""
        self._render = render
        super().start()

    @property
    def latency_s(self) -> float:
        """The output latency PortAudio reports (from render to the speaker)."""
        stream = self._stream
        return float(stream.latency) if stream is not None else 0.0

    def _open(self, device: int | None) -> None:
        def callback(outdata, frames, time_info, status) -> None:
            self._last_callback = time.monotonic()
            if status.output_underflow:
                self.underflows += 1  # one writer (this callback); the perception thread only reads it
            self._render(outdata[:, 0])

        self._started(self._sd.OutputStream(device=device, samplerate=self.sample_rate, channels=1,
                                            dtype="float32", blocksize=self.blocksize, latency="low",
                                            callback=callback))
