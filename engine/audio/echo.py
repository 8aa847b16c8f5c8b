"""Echo control: WebRTC's acoustic echo canceller (through livekit) fed with the playback reference, and a
guard that judges speech onsets against the echo still expected while Venus speaks."""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.errors import ConfigError

log = logging.getLogger(__name__)

AEC_RATE = 16000
AEC_FRAME = AEC_RATE // 100  # WebRTC processes exactly 10 ms at a time


# The echo path, estimated from energies (EchoCanceller.echo_path). With no echo reaching the mic (headphones),
# AEC3 never converges and its suppressor removes the user's voice for as long as Venus plays (12-90 dB per
# 200 ms, docs/BENCHMARKS.md "Echo cancellation without an echo"), so she could not be interrupted. The mic's
# median energy while Venus plays is compared with its quiet floor while she does not: a speaker's echo raises it
# by tens of dB, headphones leave it at the floor (unless the user talks over most of her speech, when the
# canceller stays on, as before).
_REF_ACTIVE = 1e-6  # mean square of a reference frame that counts as playing (-60 dBFS)
_REF_MEMORY = 20  # frames: a mic frame is "while Venus plays" if she played within the last 200 ms (the delay)
_EVIDENCE = 150  # mic frames while Venus played (1.5 s) and ...
_FLOOR_EVIDENCE = 50  # ... while she did not (0.5 s), before the echo path is judged
_WINDOW = 600  # the latest 6 s of each kind are kept
_ECHO_RISE_DB = 10.0  # the mic's median while she plays this far above its floor: an echo path
_JUDGE_EVERY = 50  # frames between judgements (0.5 s)


class EchoCanceller:
    """WebRTC audio processing (AEC3 + noise suppression + high-pass) on 16 kHz mono 10 ms frames.

    Feed every played 10 ms frame to `add_reference` and every captured frame to `process`, in step; the
    canceller estimates the acoustic delay itself. Where no echo reaches the microphone (`echo_path` False,
    judged from the energies), the mic frame passes unchanged: there is nothing to cancel, and the canceller would
    only remove the user's voice.
    """

    def __init__(self, *, noise_suppression: bool = True, delay_hint_ms: int = 0) -> None:
        try:
            from livekit import rtc
        except ImportError as exc:
            raise ConfigError("echo cancellation needs the livekit package",
                              fix="pip install livekit, or set audio.echo_cancellation to false") from exc
        self._apm = rtc.AudioProcessingModule(echo_cancellation=True, noise_suppression=noise_suppression,
                                              high_pass_filter=True)
        self._delay_hint_ms = delay_hint_ms  # 0: AEC3 estimates the delay itself and needs no hint
        # One reusable 10 ms frame each way: numpy views write straight into the buffers WebRTC processes.
        ref_buf, mic_buf = bytearray(AEC_FRAME * 2), bytearray(AEC_FRAME * 2)
        self._ref_frame = rtc.AudioFrame(ref_buf, AEC_RATE, 1, AEC_FRAME)
        self._mic_frame = rtc.AudioFrame(mic_buf, AEC_RATE, 1, AEC_FRAME)
        self._ref_pcm = np.frombuffer(ref_buf, np.int16)
        self._mic_pcm = np.frombuffer(mic_buf, np.int16)
        self._scratch = np.empty(AEC_FRAME, np.float32)
        self.echo_path: bool | None = None  # None until judged: cancel, as if there were one
        self._since_ref = _REF_MEMORY  # reference frames since one was playing (capped)
        self._mic_playing: deque[float] = deque(maxlen=_WINDOW)  # mic energies while Venus played
        self._mic_quiet: deque[float] = deque(maxlen=_WINDOW)  # ... while she did not
        self._until_judged = _JUDGE_EVERY

    def add_reference(self, frame: np.ndarray) -> None:
        """One 10 ms frame of what the speaker played (float32, 16 kHz)."""
        self._to_pcm(frame, self._ref_pcm)
        self._apm.process_reverse_stream(self._ref_frame)
        playing = float(np.mean(frame.astype(np.float64) ** 2)) > _REF_ACTIVE
        self._since_ref = 0 if playing else min(self._since_ref + 1, _REF_MEMORY)

    def observe_quiet(self, audio: np.ndarray) -> None:
        """Mic audio heard while the canceller is idle (nothing played within its hold time): evidence of the
        room's quiet floor, so the echo path can be judged early in Venus's first answer of a session. Without
        it the floor came only from her pauses and the second after she stopped: with headphones her whole first
        answer was unjudged, the canceller suppressed the user, and "Okay, stop." went unheard."""
        whole = len(audio) // AEC_FRAME
        if whole:
            frames = np.asarray(audio[-whole * AEC_FRAME:], np.float64).reshape(whole, AEC_FRAME)
            energies = np.mean(frames * frames, axis=1)
            self._mic_quiet.extend(energies[np.isfinite(energies)].tolist())

    def process(self, frame: np.ndarray) -> np.ndarray:
        """One 10 ms microphone frame in, the same frame with the echo removed out (unchanged where no echo path
        was found)."""
        self._to_pcm(frame, self._mic_pcm)
        energy = float(np.mean(frame.astype(np.float64) ** 2))
        if np.isfinite(energy):  # a broken frame (NaN from a failing device) is no evidence either way
            (self._mic_playing if self._since_ref < _REF_MEMORY else self._mic_quiet).append(energy)
        self._until_judged -= 1
        if self._until_judged <= 0:
            self._until_judged = _JUDGE_EVERY
            self._judge_echo_path()
        if self._delay_hint_ms:
            self._apm.set_stream_delay_ms(self._delay_hint_ms)
        self._apm.process_stream(self._mic_frame)  # always: the canceller stays adapted if an echo path appears
        if self.echo_path is False:
            return np.clip(frame, -1.0, 1.0).astype(np.float32)
        return self._mic_pcm * np.float32(1 / 32768)

    def _judge_echo_path(self) -> None:
        if len(self._mic_playing) < _EVIDENCE or len(self._mic_quiet) < _FLOOR_EVIDENCE:
            return
        floor = float(np.percentile(self._mic_quiet, 20)) + 1e-10
        playing = float(np.median(self._mic_playing)) + 1e-10
        found = 10 * np.log10(playing / floor) >= _ECHO_RISE_DB
        if found != self.echo_path:
            log.info("echo path %s: the mic's median while Venus plays is %.0f dB over its quiet floor",
                     "found" if found else "not found (headphones?): the canceller is bypassed",
                     10 * np.log10(playing / floor))
        self.echo_path = bool(found)

    def _to_pcm(self, frame: np.ndarray, pcm: np.ndarray) -> None:
        if frame.shape != (AEC_FRAME,):
            raise ValueError(f"echo canceller frames are {AEC_FRAME} samples, got {frame.shape}")
        np.clip(frame, -1.0, 1.0, out=self._scratch)
        self._scratch *= 32767.0
        pcm[:] = self._scratch  # float to int16, truncating toward zero like astype


@dataclass(frozen=True)
class EchoGuardOptions:
    """When a speech onset heard while Venus speaks counts as the user and not as Venus's own echo."""

    threshold: float = 0.85  # VAD probability needed while Venus speaks (instead of the normal threshold)
    margin_db: float = 6.0  # cleaned mic energy must exceed the expected echo residual by this much
    residual_db: float = -30.0  # expected echo left after cancellation, relative to the reference level
    tail_ms: int = 400  # the guard stays on this long after playback ends (room reverb, output latency)
    kept_db: float = -12.0  # a frame the canceller cut by more than this (cleaned vs raw) was mostly echo
    # After the speaker's stream ran dry (an output underrun), what plays is late against the reference the
    # canceller aligned to, so the echo passes it nearly whole until Venus stops. From the underrun until
    # underrun_hold_ms after her voice last played, the guard stays on and expects echo as loud as the
    # reference itself (underrun_residual_db), not a residual.
    underrun_hold_ms: int = 1500
    underrun_residual_db: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"echo guard threshold must be within (0, 1), got {self.threshold}")
        if self.tail_ms < 0:
            raise ValueError(f"tail_ms must be >= 0, got {self.tail_ms}")


class EchoGuard:
    """Tracks the recent reference level and decides whether a VAD frame may count as user speech."""

    def __init__(self, options: EchoGuardOptions = EchoGuardOptions()) -> None:
        self.options = options
        self._ref_energy: deque[float] = deque(maxlen=max(1, (options.tail_ms + 200) // 10))
        self._tail = options.tail_ms * AEC_RATE // 1000
        self._quiet = self._tail  # mic samples since the reference was last loud (capped at the tail)
        self._distrust = 0  # mic samples left during which the canceller is not trusted (after an underrun)
        self._slip_level = 0.0  # the loudest reference since the underrun: the late echo may still be that loud

    def add_reference(self, frame: np.ndarray) -> None:
        """The level of one 10 ms reference frame."""
        energy = float(np.mean(frame * frame))
        self._ref_energy.append(energy)
        if energy > 1e-7:
            self._quiet = 0
            if self._distrust > 0:  # still talking after an underrun: the echo stays out of step until she stops
                self._distrust = self.options.underrun_hold_ms * AEC_RATE // 1000
                self._slip_level = max(self._slip_level, energy)

    def forget_reference(self) -> None:
        """Drop the levels of past playback (called once the tail is over, so a new turn starts clean)."""
        if self._ref_energy:
            self._ref_energy.clear()

    def advance(self, samples: int) -> None:
        """Mic time passed, in 16 kHz samples (the guard's tail counts mic time, not reference arrivals)."""
        self._quiet = min(self._quiet + samples, self._tail)
        self._distrust = max(0, self._distrust - samples)
        if self._distrust == 0:
            self._slip_level = 0.0

    def distrust(self) -> None:
        """The output stream underran while Venus spoke: her echo is out of step with the reference until she
        stops, and for underrun_hold_ms after."""
        self._distrust = self.options.underrun_hold_ms * AEC_RATE // 1000
        self._slip_level = max(self._ref_energy, default=0.0)

    @property
    def active(self) -> bool:
        """True while Venus is speaking or its echo may still be in the room (longer after an underrun)."""
        return self._quiet < self._tail or self._distrust > 0

    def threshold(self, normal: float) -> float:
        """The VAD threshold in force now."""
        return max(normal, self.options.threshold) if self.active else normal

    def allows(self, cleaned: np.ndarray, raw: np.ndarray | None = None, *, echo_measured: bool = False) -> bool:
        """Whether a frame of cleaned mic audio is loud enough above the echo residual to be the user.

        With the raw frame too, the frame must also have kept enough of its energy through the canceller:
        the user's voice passes it, Venus's own voice is mostly removed. `echo_measured`: the canceller has
        measured an echo path (EchoCanceller.echo_path), so it has heard her voice come back for a while and what
        it keeps of a frame is the test; the level test against her reference is then dropped (not after an
        underrun). That test assumed a residual of -30 dB under her level whatever the room, and in double talk
        as loud as the echo it held back most users (heard 23 -> 31 of 36 rooms without it, none of 48 echo-only
        rooms taken for the user either way: docs/BENCHMARKS.md).
        """
        energy = float(np.mean(cleaned * cleaned))
        if self._distrust > 0:
            expected = max([self._slip_level, *self._ref_energy]) * 10 ** (self.options.underrun_residual_db / 10)
        elif not self.active or not self._ref_energy:
            return True
        elif echo_measured and raw is not None:
            expected = 0.0
        else:
            expected = max(self._ref_energy) * 10 ** (self.options.residual_db / 10)
        if energy <= expected * 10 ** (self.options.margin_db / 10):
            return False
        if raw is None:
            return True
        return energy > float(np.mean(raw * raw)) * 10 ** (self.options.kept_db / 10)
