"""The shared causal timeline: the event vocabulary, the in-memory timeline and its persistence."""

from engine.timeline.events import *  # noqa: F403 - the vocabulary is the public surface
from engine.timeline.events import EVENT_TYPES, Event, Kind, event_from_dict
from engine.timeline.timeline import SessionClock, Subscriber, Timeline

__all__ = ["EVENT_TYPES", "Event", "Kind", "SessionClock", "Subscriber", "Timeline", "event_from_dict"]
