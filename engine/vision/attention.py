"""Presence and attention: is someone there, and are they facing the screen?

Per frame, the faces decide; over time, `AttentionTracker` keeps presence for `away_after_s` after the last
face (people turn their heads fully away for a moment without leaving), so the timeline sees stable changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.timeline.events import Event, VideoObservation
from engine.vision.faces import Face


@dataclass(frozen=True)
class AttentionOptions:
    """When a face counts as facing the screen, and how long an empty view means the user is away."""

    facing_max_yaw_deg: float = 30.0  # head turned further left/right than this = not facing
    facing_max_roll_deg: float = 40.0  # head tilted further than this (or upside down) = not facing
    away_after_s: float = 4.0  # no face for this long = nobody there

    def __post_init__(self) -> None:
        if not 0.0 < self.facing_max_yaw_deg <= 90.0:
            raise ValueError(f"facing_max_yaw_deg must be in (0, 90], got {self.facing_max_yaw_deg}")
        if not 0.0 < self.facing_max_roll_deg <= 180.0:
            raise ValueError(f"facing_max_roll_deg must be in (0, 180], got {self.facing_max_roll_deg}")
        if self.away_after_s < 0.0:
            raise ValueError(f"away_after_s must not be negative, got {self.away_after_s}")


@dataclass(frozen=True)
class FrameAttention:
    """What one frame shows: how many faces, and whether any of them faces the screen."""

    faces: int
    person_present: bool
    facing_screen: bool
    yaw_deg: float | None = None  # of the largest face


def is_facing(face: Face, options: AttentionOptions) -> bool:
    """True when the face is upright and turned no further than the limits."""
    return (
        abs(face.yaw_degrees()) <= options.facing_max_yaw_deg
        and abs(face.roll_degrees()) <= options.facing_max_roll_deg
    )


def assess_faces(faces: Sequence[Face], options: AttentionOptions) -> FrameAttention:
    """The per-frame verdict from detected faces (largest first)."""
    if not faces:
        return FrameAttention(faces=0, person_present=False, facing_screen=False)
    return FrameAttention(
        faces=len(faces),
        person_present=True,
        facing_screen=any(is_facing(face, options) for face in faces),
        yaw_deg=faces[0].yaw_degrees(),
    )


@dataclass(frozen=True)
class AttentionState:
    """The stable presence/attention state after smoothing over time."""

    person_present: bool
    facing_screen: bool


class AttentionTracker:
    """Smooths per-frame verdicts: presence starts at once and ends only after `away_after_s` without a face."""

    def __init__(self, options: AttentionOptions | None = None) -> None:
        self.options = options or AttentionOptions()
        self.state: AttentionState | None = None  # None until the first frame
        self._last_face_s: float | None = None

    def update(self, frame: FrameAttention, now_s: float) -> bool:
        """Feed one frame's verdict; returns True when the stable state changed."""
        if frame.person_present:
            self._last_face_s = now_s
            present = True
        else:
            recently = self._last_face_s is not None and now_s - self._last_face_s < self.options.away_after_s
            present = recently
        new = AttentionState(person_present=present, facing_screen=present and frame.facing_screen)
        changed = new != self.state
        self.state = new
        return changed


@dataclass(frozen=True)
class AttentionCue:
    """The latest attention facts on a timeline, for the overlap policy and proactive delivery."""

    person_present: bool | None  # None = the camera is off or has not looked yet
    facing_screen: bool | None
    at_ms: int = -1  # session time of the observation these come from


def latest_attention(events: Iterable[Event]) -> AttentionCue:
    """The most recent presence/facing facts among `events` (for example `timeline.events()`)."""
    latest: VideoObservation | None = None
    for event in events:
        if isinstance(event, VideoObservation) and event.person_present is not None:
            latest = event
    if latest is None:
        return AttentionCue(person_present=None, facing_screen=None)
    return AttentionCue(
        person_present=latest.person_present, facing_screen=latest.facing_screen, at_ms=latest.t_ms
    )


def should_hold_proactive(cue: AttentionCue) -> bool:
    """True when proactive speech should wait: the camera says nobody is there (unknown never holds)."""
    return cue.person_present is False


def addressee_cue(cue: AttentionCue) -> float | None:
    """Evidence that overlapping speech is addressed to Venus: 1.0 facing, 0.0 turned away or absent, None unknown."""
    if cue.person_present is None:
        return None
    return 1.0 if cue.facing_screen else 0.0
