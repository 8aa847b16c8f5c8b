"""What the window asks of the engine: a small controller Protocol, and a timeline-only implementation.

The runtime implements `Controller`; the window never calls anything else in the engine. `TimelineController`
needs no runtime: it records each user action as the matching timeline event, which is what the window
shows when no engine is attached (and what the tests and the demo use).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from engine.settings import Settings
from engine.timeline import Timeline
from engine.timeline.events import (
    AssistantTurnEnd,
    ConfirmationAnswered,
    DelegationCancelled,
    Interruption,
    RuntimeState,
    RuntimeStateName,
    SystemNotice,
    UserText,
)

if TYPE_CHECKING:
    from engine.timeline.store import ConversationStore


@runtime_checkable
class Controller(Protocol):
    """User actions from the window; each call may block, so the bridge calls them off the UI thread."""

    def send_text(self, text: str) -> None:
        """The user typed `text` instead of speaking it."""

    def stop_talking(self) -> None:
        """Stop Venus's current answer now, cut to what was heard."""

    def set_muted(self, muted: bool) -> None:
        """Stop (or resume) listening to the microphone."""

    def push_to_talk(self, pressed: bool) -> None:
        """The push-to-talk key went down (True) or up (False)."""

    def cancel_task(self, task_id: str) -> None:
        """Cancel a delegated background task."""

    def answer_confirmation(self, task_id: str, approved: bool) -> None:
        """Approve or deny an 'ask' tool call waiting on the user."""

    def set_camera(self, enabled: bool) -> None:
        """Turn the camera on or off."""

    def apply_settings(self, settings: Settings) -> None:
        """Apply changed settings without a restart where the part allows it."""

    def describe_tools(self) -> list[dict] | None:
        """The running harness's tools for Settings → Tools (`Harness.describe_tools()` rows); None without one."""

    def close(self) -> None:
        """Release devices and threads; called once when the window quits."""


@runtime_checkable
class ConversationSwitcher(Protocol):
    """Optional: a controller whose conversations are stored, so the window can list and switch them."""

    def conversation_store(self) -> ConversationStore | None:
        """The store of the conversation in use now (None: nothing is stored)."""

    def switch_conversation(self, conversation_id: str | None) -> Timeline:
        """Go on in a stored conversation (None: a new one); returns the timeline now in use."""


ControllerFactory = Callable[[Timeline | None, Settings], Controller]
"""Builds the controller for a window: given a timeline to use (or None to open its own) and the settings.
The controller's `timeline` attribute is the one the window shows. A controller may also offer
`attach_sinks(level_sink, frame_sink)`; the bridge then hands it where mic levels and camera frames go."""


class TimelineController:
    """A controller without a runtime: every action becomes the timeline event a runtime would append.

    With a `store`, the conversation is persisted and the window can list, switch, rename and delete them.
    """

    def __init__(self, timeline: Timeline | None = None, settings: Settings | None = None,
                 store: ConversationStore | None = None) -> None:
        if timeline is None:
            timeline = store.new_conversation() if store is not None else Timeline()
        self.timeline = timeline
        self.store = store
        self.settings = settings or Settings()
        self.muted = False
        self.push_to_talk_down = False
        self.camera_on = False
        self.call_threads: list[tuple[str, str]] = []  # (method, thread name), so tests can see where calls ran
        self._lock = threading.Lock()

    def _record(self, method: str) -> None:
        with self._lock:
            self.call_threads.append((method, threading.current_thread().name))

    def send_text(self, text: str) -> None:
        """Append the typed text as a UserText event."""
        self._record("send_text")
        self.timeline.append(UserText(text=text))

    def stop_talking(self) -> None:
        """Cut the open assistant turn, if any, as an interruption at what was generated so far."""
        self._record("stop_talking")
        turn_id, text = self._open_turn()
        if turn_id:
            self.timeline.append(Interruption(turn_id=turn_id, heard_text=text, reason="stop button"))
            self.timeline.append(
                AssistantTurnEnd(turn_id=turn_id, text=text, heard_text=text, interrupted=True, reason="stop")
            )
        self.timeline.append(RuntimeState(state=RuntimeStateName.LISTENING))

    def _open_turn(self) -> tuple[str, str]:
        # The last assistant turn that has tokens but no AssistantTurnEnd yet.
        texts: dict[str, str] = {}
        for event in self.timeline.events():
            if event.kind == "assistant_token":
                texts[event.turn_id] = texts.get(event.turn_id, "") + event.text
            elif event.kind == "assistant_turn_end":
                texts.pop(event.turn_id, None)
        if not texts:
            return "", ""
        turn_id = list(texts)[-1]
        return turn_id, texts[turn_id]

    def set_muted(self, muted: bool) -> None:
        """Record the mute state and tell the user on the timeline."""
        self._record("set_muted")
        self.muted = muted
        text = "Microphone muted" if muted else "Microphone on"
        self.timeline.append(SystemNotice(code="mic-muted" if muted else "mic-unmuted", text=text))

    def push_to_talk(self, pressed: bool) -> None:
        """Held down = user speaking; released = listening."""
        self._record("push_to_talk")
        self.push_to_talk_down = pressed
        state = RuntimeStateName.USER_SPEAKING if pressed else RuntimeStateName.LISTENING
        self.timeline.append(RuntimeState(state=state))

    def cancel_task(self, task_id: str) -> None:
        """Append the cancellation of `task_id`."""
        self._record("cancel_task")
        self.timeline.append(DelegationCancelled(task_id=task_id, reason="cancelled by the user"))

    def answer_confirmation(self, task_id: str, approved: bool) -> None:
        """Append the user's answer to a waiting confirmation."""
        self._record("answer_confirmation")
        self.timeline.append(ConfirmationAnswered(task_id=task_id, approved=approved, source="ui"))

    def set_camera(self, enabled: bool) -> None:
        """Record the camera switch and tell the user on the timeline."""
        self._record("set_camera")
        self.camera_on = enabled
        self.timeline.append(SystemNotice(code="camera", text="Camera on" if enabled else "Camera off"))

    def apply_settings(self, settings: Settings) -> None:
        """Keep the new settings (there is no running part to reconfigure)."""
        self._record("apply_settings")
        self.settings = settings

    def conversation_store(self) -> ConversationStore | None:
        """The store given at construction, if any."""
        return self.store

    def switch_conversation(self, conversation_id: str | None) -> Timeline:
        """Stop persisting the current conversation here and continue on another (None: a new one)."""
        self._record("switch_conversation")
        if self.store is None:
            raise RuntimeError("conversations are not stored here: start Venus with a conversation database")
        self.store.close_conversation(self.timeline.conversation_id)
        self.timeline = (self.store.open_conversation(conversation_id) if conversation_id
                         else self.store.new_conversation())
        return self.timeline

    def describe_tools(self) -> list[dict] | None:
        """No harness runs here: Settings lists the tools from a throwaway one."""
        return None

    def close(self) -> None:
        """Nothing to release (the store belongs to whoever opened it)."""
        self._record("close")
