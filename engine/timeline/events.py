"""The whole event vocabulary of Venus's shared causal timeline, in one module.

Every event is a small frozen dataclass. `t_ms` is the session clock (monotonic milliseconds since the
conversation started) and `seq` the position on the timeline; both are filled in by `Timeline.append`.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar


class Kind(StrEnum):
    """Every kind of event on the timeline."""

    # user input
    USER_SPEECH_START = "user_speech_start"
    USER_SPEECH_END = "user_speech_end"
    ASR_PARTIAL = "asr_partial"
    ASR_FINAL = "asr_final"
    USER_TEXT = "user_text"
    VIDEO_OBSERVATION = "video_observation"
    # model output
    CONTROL_DECISION = "control_decision"
    ASSISTANT_TOKEN = "assistant_token"
    ASSISTANT_TURN_END = "assistant_turn_end"
    SPEECH_SPAN = "speech_span"
    # turn-taking
    RUNTIME_STATE = "runtime_state"
    OVERLAP_DECISION = "overlap_decision"
    INTERRUPTION = "interruption"
    # background work
    DELEGATION_DISPATCHED = "delegation_dispatched"
    DELEGATION_PROGRESS = "delegation_progress"
    CONFIRMATION_REQUESTED = "confirmation_requested"
    CONFIRMATION_ANSWERED = "confirmation_answered"
    DELEGATION_RESULT = "delegation_result"
    DELEGATION_FAILED = "delegation_failed"
    DELEGATION_CANCELLED = "delegation_cancelled"
    REMINDER_FIRED = "reminder_fired"
    # everything else the user should know
    SYSTEM_NOTICE = "system_notice"
    SUMMARY = "summary"


@dataclass(frozen=True, kw_only=True)
class Word:
    """One recognised or spoken word with its time span (session-clock ms)."""

    text: str
    start_ms: int
    end_ms: int
    probability: float = 1.0


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of all events; subclasses set `kind`."""

    kind: ClassVar[Kind]
    t_ms: int = -1  # session clock, filled by Timeline.append when left at -1
    seq: int = -1  # timeline position, always filled by Timeline.append

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict including the kind."""
        data = dataclasses.asdict(self)
        data["kind"] = str(self.kind)
        return data


# ---- user input -------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class UserSpeechStart(Event):
    """VAD opened a speech segment (`start_ms` may precede `t_ms` by the VAD's look-back)."""

    kind: ClassVar[Kind] = Kind.USER_SPEECH_START
    start_ms: int = 0
    overlapping_assistant: bool = False  # True when Venus was speaking at the time


@dataclass(frozen=True, kw_only=True)
class UserSpeechEnd(Event):
    """VAD closed a speech segment."""

    kind: ClassVar[Kind] = Kind.USER_SPEECH_END
    start_ms: int = 0
    end_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class AsrPartial(Event):
    """A provisional transcript of the speech segment so far."""

    kind: ClassVar[Kind] = Kind.ASR_PARTIAL
    text: str = ""
    segment_start_ms: int = 0
    speaker_similarity: float | None = None  # to the enrolled user voice (speech over Venus, 1 s and longer)
    # decoded at a pause of the open segment: the segment's final words if the pause holds
    at_pause: bool = False


@dataclass(frozen=True, kw_only=True)
class AsrFinal(Event):
    """The final transcript of one speech segment, with word timings."""

    kind: ClassVar[Kind] = Kind.ASR_FINAL
    text: str = ""
    words: tuple[Word, ...] = ()
    segment_start_ms: int = 0
    segment_end_ms: int = 0
    language: str = "en"
    speaker_similarity: float | None = None  # to the enrolled user voice, when known
    alternatives: tuple[str, ...] = ()  # the recogniser's other readings of the segment, best first


@dataclass(frozen=True, kw_only=True)
class UserText(Event):
    """Text the user typed."""

    kind: ClassVar[Kind] = Kind.USER_TEXT
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class VideoObservation(Event):
    """Facts derived from a camera frame; the frame itself is kept only if the user opted in."""

    kind: ClassVar[Kind] = Kind.VIDEO_OBSERVATION
    person_present: bool | None = None
    facing_screen: bool | None = None
    text_seen: str = ""  # OCR
    description: str = ""  # from a multimodal model, when one is configured
    frame_ref: str = ""  # path of a stored frame (opt-in only) or an in-memory key for the context
    faces: int = 0  # how many faces were seen
    trigger: str = ""  # why this frame was looked at: speaking / quiet / scene_change / request


# ---- model output -----------------------------------------------------------------------------------------


class Action(StrEnum):
    """What the assistant decided to do at the start of its turn."""

    RESPOND = "respond"
    DELEGATE = "delegate"
    SILENT = "silent"
    RESUME = "resume"


@dataclass(frozen=True, kw_only=True)
class ControlDecision(Event):
    """The structured decision that opens each assistant turn."""

    kind: ClassVar[Kind] = Kind.CONTROL_DECISION
    turn_id: str = ""
    action: Action = Action.RESPOND
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str = ""  # set when the model's decision was malformed or its tool call invalid


@dataclass(frozen=True, kw_only=True)
class AssistantToken(Event):
    """One generated piece of text of an assistant turn."""

    kind: ClassVar[Kind] = Kind.ASSISTANT_TOKEN
    turn_id: str = ""
    text: str = ""
    index: int = 0


@dataclass(frozen=True, kw_only=True)
class AssistantTurnEnd(Event):
    """An assistant turn finished generating (or was cut)."""

    kind: ClassVar[Kind] = Kind.ASSISTANT_TURN_END
    turn_id: str = ""
    text: str = ""  # everything generated
    heard_text: str = ""  # what the user actually heard; equals `text` unless interrupted
    interrupted: bool = False
    reason: str = ""  # "complete", "stop", "interrupted", "max_tokens", "error: ..."


@dataclass(frozen=True, kw_only=True)
class SpeechSpan(Event):
    """A clause Venus spoke: what was planned, which samples played, which words the user heard."""

    kind: ClassVar[Kind] = Kind.SPEECH_SPAN
    turn_id: str = ""
    planned_text: str = ""
    start_sample: int = 0  # on the output stream, at `sample_rate`
    end_sample: int = 0  # last sample actually played (exclusive)
    sample_rate: int = 16000
    heard_words: tuple[str, ...] = ()
    truncated: bool = False


# ---- turn-taking --------------------------------------------------------------------------------------------


class RuntimeStateName(StrEnum):
    """States of the foreground loop."""

    LISTENING = "listening"
    USER_SPEAKING = "user_speaking"
    THINKING = "thinking"
    SPEAKING = "speaking"
    YIELDING = "yielding"


@dataclass(frozen=True, kw_only=True)
class RuntimeState(Event):
    """The foreground loop changed state."""

    kind: ClassVar[Kind] = Kind.RUNTIME_STATE
    state: RuntimeStateName = RuntimeStateName.LISTENING
    previous: RuntimeStateName | None = None


class OverlapKind(StrEnum):
    """What overlapping speech was judged to be."""

    INTERRUPTION = "interruption"
    BACKCHANNEL = "backchannel"
    OTHER_ADDRESSEE = "other_addressee"
    BACKGROUND = "background"
    ECHO = "echo"


@dataclass(frozen=True, kw_only=True)
class OverlapDecision(Event):
    """The overlap policy's verdict on speech heard while Venus spoke, with its reason."""

    kind: ClassVar[Kind] = Kind.OVERLAP_DECISION
    verdict: OverlapKind = OverlapKind.BACKGROUND
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    latency_ms: int = 0  # from speech onset to this decision
    segment_start_ms: int = -1  # the judged speech segment (UserSpeechStart.start_ms / AsrFinal.segment_start_ms)


@dataclass(frozen=True, kw_only=True)
class Interruption(Event):
    """Venus yielded: its turn is cut to what the user heard."""

    kind: ClassVar[Kind] = Kind.INTERRUPTION
    turn_id: str = ""
    heard_text: str = ""
    unheard_text: str = ""
    reason: str = ""


# ---- background work ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DelegationDispatched(Event):
    """A task was handed to the harness."""

    kind: ClassVar[Kind] = Kind.DELEGATION_DISPATCHED
    task_id: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    turn_id: str = ""


@dataclass(frozen=True, kw_only=True)
class DelegationProgress(Event):
    """A running task reported progress (0-100) and a status line."""

    kind: ClassVar[Kind] = Kind.DELEGATION_PROGRESS
    task_id: str = ""
    percent: float = 0.0
    status: str = ""
    state: str = "running"  # queued / running


@dataclass(frozen=True, kw_only=True)
class ConfirmationRequested(Event):
    """An 'ask' tool waits for the user's yes or no on these exact arguments."""

    kind: ClassVar[Kind] = Kind.CONFIRMATION_REQUESTED
    task_id: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""
    timeout_s: float = 60.0


@dataclass(frozen=True, kw_only=True)
class ConfirmationAnswered(Event):
    """The user (by voice or in the UI) or the timeout answered a confirmation."""

    kind: ClassVar[Kind] = Kind.CONFIRMATION_ANSWERED
    task_id: str = ""
    approved: bool = False
    source: str = "ui"  # ui / voice / timeout


@dataclass(frozen=True, kw_only=True)
class DelegationResult(Event):
    """A task succeeded. `result` is untrusted data: it never authorises another tool call."""

    kind: ClassVar[Kind] = Kind.DELEGATION_RESULT
    task_id: str = ""
    tool: str = ""
    summary: str = ""
    result: Any = None
    urgent: bool = False


@dataclass(frozen=True, kw_only=True)
class DelegationFailed(Event):
    """A task failed, timed out or was interrupted by a restart."""

    kind: ClassVar[Kind] = Kind.DELEGATION_FAILED
    task_id: str = ""
    tool: str = ""
    error: str = ""
    code: str = ""  # tool-failed / timeout / interrupted / invalid-arguments / tool-denied


@dataclass(frozen=True, kw_only=True)
class DelegationCancelled(Event):
    """A task was cancelled by the user or the runtime."""

    kind: ClassVar[Kind] = Kind.DELEGATION_CANCELLED
    task_id: str = ""
    tool: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class ReminderFired(Event):
    """A timer or reminder came due: urgent, takes the floor politely."""

    kind: ClassVar[Kind] = Kind.REMINDER_FIRED
    reminder_id: str = ""
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class SystemNotice(Event):
    """Something the user should know: a device lost, a model missing, a setting reset."""

    kind: ClassVar[Kind] = Kind.SYSTEM_NOTICE
    level: str = "info"  # info / warning / error
    code: str = ""
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class Summary(Event):
    """A running summary of turns that no longer fit the context window."""

    kind: ClassVar[Kind] = Kind.SUMMARY
    text: str = ""
    covers_until_seq: int = -1


EVENT_TYPES: dict[Kind, type[Event]] = {
    cls.kind: cls for cls in Event.__subclasses__()  # type: ignore[misc]
}


def _enum_fields(cls: type[Event]) -> dict[str, type[StrEnum]]:
    # StrEnum-typed fields (plain or Optional), so values read back from JSON become enums again
    hints = typing.get_type_hints(cls)
    found = {}
    for name, hint in hints.items():
        for candidate in (hint, *typing.get_args(hint)):
            if isinstance(candidate, type) and issubclass(candidate, StrEnum):
                found[name] = candidate
    return found


_ENUM_FIELDS = {kind: _enum_fields(cls) for kind, cls in EVENT_TYPES.items()}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from `Event.to_dict()` output (as read back from JSON or the database)."""
    data = dict(data)
    kind = Kind(data.pop("kind"))
    cls = EVENT_TYPES[kind]
    names = {f.name for f in dataclasses.fields(cls)}
    enums = _ENUM_FIELDS[kind]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in names:
            continue  # a field from a newer version; ignore rather than fail to open old conversations
        if key == "words":
            value = tuple(Word(**w) if isinstance(w, dict) else w for w in value)
        elif key in enums and value is not None:
            value = enums[key](value)
        elif isinstance(value, list) and key != "result":
            value = tuple(value)
        kwargs[key] = value
    return cls(**kwargs)
