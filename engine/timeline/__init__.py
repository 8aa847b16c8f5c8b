"""The shared causal timeline: the event vocabulary, the in-memory timeline and its persistence."""

from engine.timeline.events import *  # noqa: F403 - the vocabulary is the public surface
from engine.timeline.events import EVENT_TYPES, Event, Kind, event_from_dict
from engine.timeline.store import (
    ConversationInfo,
    ConversationStore,
    StoreOptions,
    database_schema_version,
    open_store,
)
from engine.timeline.timeline import SessionClock, Subscriber, Timeline
from engine.timeline.writer import TimelineWriter, WriterOptions

__all__ = [
    "EVENT_TYPES",
    "ConversationInfo",
    "ConversationStore",
    "Event",
    "Kind",
    "SessionClock",
    "StoreOptions",
    "Subscriber",
    "Timeline",
    "TimelineWriter",
    "WriterOptions",
    "database_schema_version",
    "event_from_dict",
    "open_store",
]
