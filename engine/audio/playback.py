"""The player: queued clips rendered into the output stream block by block, with an instant stop and ducking.

`render` runs inside the output callback (device or file), so it only slices, scales and copies numpy arrays;
reports of played clips go out through a lock-free queue that a normal thread turns into timeline events.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.tts import TimedWord

_SOUND_LEVEL = 0.01  # sample magnitude (-40 dBFS) above which a clip holds sound, not silence
_LEAD_IN_S = 0.05  # a resumed clip starts this long before its next sound


@dataclass(frozen=True)
class Clip:
    """One clause to play: audio at the player's rate and its words, in samples from the clip start."""

    turn_id: str
    text: str
    audio: np.ndarray
    words: tuple[TimedWord, ...] = ()


@dataclass(frozen=True)
class ClipReport:
    """How a clip played: output-stream samples [start, end) and whether it was cut short."""

    clip: Clip
    start_sample: int
    end_sample: int
    truncated: bool

    def heard_words(self) -> tuple[str, ...]:
        """Words played past their midpoint: what the user can be taken to have heard."""
        played = self.end_sample - self.start_sample
        return tuple(w.text for w in self.clip.words if (w.start_sample + w.end_sample) / 2 < played)


@dataclass(frozen=True)
class PlayerOptions:
    """How the player fades, ducks and scales."""

    sample_rate: int  # the output stream's rate
    fade_ms: float = 8.0  # stop() fades out over this long, so the cut does not click
    duck_gain: float = 0.3  # gain while ducked
    volume: float = 1.0  # master gain

    def __post_init__(self) -> None:
        if self.sample_rate < 8000:
            raise ValueError(f"sample_rate must be >= 8000, got {self.sample_rate}")
        if not 0.0 <= self.fade_ms <= 50.0:
            raise ValueError(f"fade_ms must be within 0..50 (stop must be silent within 50 ms), got {self.fade_ms}")
        if not 0.0 <= self.duck_gain <= 1.0 or not 0.0 <= self.volume <= 1.0:
            raise ValueError(f"duck_gain and volume must be within 0..1, got {self.duck_gain}, {self.volume}")


class Player:
    """Plays clips back to back; knows the exact output sample being played."""

    def __init__(self, options: PlayerOptions) -> None:
        self.options = options
        self.sample_rate = options.sample_rate
        self._clips: deque[Clip] = deque()
        self._current: Clip | None = None
        self._offset = 0  # next sample of the current clip
        self._clip_start = 0  # output sample where the current clip began
        self._position = 0  # output samples rendered so far
        self._fade = np.linspace(1.0, 0.0, max(1, int(options.fade_ms * options.sample_rate / 1000)),
                                 dtype=np.float32)
        self._stop_requested = False
        self._gain = options.volume
        self._target_gain = options.volume
        self._pause_requested = False
        self._paused = False
        self._skip_silence = False  # resume() goes on from the next sound, not through the pause's silence
        self._paused_in_clip = 0  # output samples of silence inserted into the current clip by pauses
        self.reports: queue.SimpleQueue[ClipReport] = queue.SimpleQueue()
        # What was played, for the AEC: a copy of each block, or just its length when it was silent.
        self.reference: queue.SimpleQueue[np.ndarray | int] = queue.SimpleQueue()
        self._idle = threading.Event()
        self._idle.set()

    # ---- control (any thread) ----------------------------------------------------------------------------

    def enqueue(self, clip: Clip) -> None:
        """Queue a clip after the ones already waiting."""
        self._idle.clear()
        self._clips.append(clip)

    def stop(self) -> None:
        """Fade out and drop everything queued; takes effect at the next output block."""
        if self._current is not None or self._clips:
            self._stop_requested = True

    def pause(self) -> None:
        """Fade to silence within one block and hold the place (a provisional yield); `resume` goes on."""
        if self._current is not None or self._clips:
            self._pause_requested = True

    def resume(self) -> None:
        """Continue from where `pause` held, fading back in."""
        self._pause_requested = False
        if self._paused:
            self._paused = False
            self._skip_silence = True
            self._gain = 0.0  # ramps up to the target over the next block

    @property
    def paused(self) -> bool:
        """True while holding silent in the middle of speech."""
        return self._paused or self._pause_requested

    def duck(self) -> None:
        """Lower the volume without stopping (an overlap is being judged)."""
        self._target_gain = self.options.volume * self.options.duck_gain

    def unduck(self) -> None:
        """Back to full volume."""
        self._target_gain = self.options.volume

    @property
    def position(self) -> int:
        """Output samples rendered so far (the sample being played, less the device latency)."""
        return self._position

    @property
    def speaking(self) -> bool:
        """True while a clip is playing or queued."""
        return self._current is not None or bool(self._clips)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is playing or queued; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._idle.wait(left):
                return False
            if not self.speaking:
                return True
            self._idle.clear()  # a clip was queued just as the callback found nothing to play; it sets it again

    # ---- output callback ---------------------------------------------------------------------------------

    def render(self, out: np.ndarray) -> None:
        """Fill `out` (1-D float32) with the next samples; called from the audio callback."""
        n = len(out)
        out.fill(0.0)
        if self._current is None and not self._clips:  # nothing to play: no copies, no report
            self._stop_requested = False
            self._gain = self._target_gain
            self._position += n
            self.reference.put(n)
            self._idle.set()
            return
        filled = 0
        if self._stop_requested:
            self._pause_requested = self._paused = False
            filled = self._render_stop(out)
        elif self._paused:  # hold: silence, the clip does not advance, the words are not heard
            if self._current is not None:
                self._paused_in_clip += n
            self._position += n
            self.reference.put(n)
            return
        if self._skip_silence:
            self._skip_silence = False
            self._skip_to_sound()
        pausing = self._pause_requested
        if pausing:
            self._pause_requested, self._paused = False, True
            saved_target, self._target_gain = self._target_gain, 0.0  # this block fades out
        while filled < n:
            if self._current is None:
                if not self._clips:
                    break
                self._current = self._clips.popleft()
                self._offset = 0
                self._paused_in_clip = 0
                self._clip_start = self._position + filled
            take = min(n - filled, len(self._current.audio) - self._offset)
            out[filled:filled + take] = self._current.audio[self._offset:self._offset + take]
            self._offset += take
            filled += take
            if self._offset >= len(self._current.audio):
                self.reports.put(ClipReport(self._current, self._clip_start + self._paused_in_clip,
                                            self._position + filled, False))
                self._current = None
            if pausing:
                break  # only this one fading block of speech; the rest waits for resume()
        self._apply_gain(out)
        if pausing:
            self._target_gain = saved_target
        self._position += n
        self.reference.put(out.copy())
        if self._current is None and not self._clips:
            self._idle.set()

    def _render_stop(self, out: np.ndarray) -> int:
        self._stop_requested = False
        written = 0
        if self._current is not None:
            take = min(len(self._fade), len(out), len(self._current.audio) - self._offset)
            out[:take] = self._current.audio[self._offset:self._offset + take] * self._fade[:take]
            written = take
            self.reports.put(ClipReport(self._current, self._clip_start + self._paused_in_clip,
                                        self._position + take, True))
            self._current = None
        at = self._position + written
        while self._clips:
            self.reports.put(ClipReport(self._clips.popleft(), at, at, True))
        return len(out)  # the rest of this block stays silent

    def _skip_to_sound(self) -> None:
        # A pause often lands in the silence between words or after a clause's last word (Piper renders ":" and
        # a paragraph break as half a second of it): resuming through that silence would make the pause seem a
        # second longer than it was. Go on from just before the next sound of the clip instead.
        clip = self._current
        if clip is None:
            return
        rest = np.abs(clip.audio[self._offset:])
        voiced = np.flatnonzero(rest > _SOUND_LEVEL)
        lead = int(_LEAD_IN_S * self.sample_rate)
        skip = (int(voiced[0]) - lead) if voiced.size else len(rest)
        if skip > 0:
            self._offset += skip
            self._paused_in_clip -= skip  # the clip advanced without the output: its words keep their times

    def _apply_gain(self, out: np.ndarray) -> None:
        if self._gain == self._target_gain:
            if self._gain != 1.0:
                out *= self._gain
            return
        ramp = np.linspace(self._gain, self._target_gain, len(out), dtype=np.float32)  # one block, no click
        out *= ramp
        self._gain = self._target_gain
