"""The one object through which the engine reaches Qt, and Qt reaches the engine.

Inbound: timeline events, mic levels and camera frames arrive on any engine thread and are re-emitted as
signals on the GUI thread (always queued, so order is kept and no engine thread ever runs widget code).
Outbound: user actions go to the `Controller` on one worker thread, in order, never on the GUI thread.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QImage

from app.controller import Controller
from engine.timeline import Event, Timeline
from engine.timeline.events import Kind

log = logging.getLogger(__name__)

FrameSink = Callable[[np.ndarray], None]
"""Where a camera hands its frames: an HxWx3 uint8 BGR array (OpenCV's layout), from any thread."""

LevelSink = Callable[[float], None]
"""Where the microphone hands its level: RMS in dBFS (-inf..0], from any thread."""


def frame_to_image(frame: np.ndarray) -> QImage:
    """Convert an HxWx3 BGR (or HxW grey) uint8 array into a QImage that owns its pixels."""
    if frame.dtype != np.uint8 or frame.ndim not in (2, 3) or (frame.ndim == 3 and frame.shape[2] != 3):
        raise ValueError(f"a camera frame must be HxWx3 BGR or HxW grey uint8, got {frame.dtype} {frame.shape}")
    frame = np.ascontiguousarray(frame)
    height, width = frame.shape[:2]
    if frame.ndim == 2:
        return QImage(frame.data, width, height, width, QImage.Format.Format_Grayscale8).copy()
    image = QImage(frame.data, width, height, width * 3, QImage.Format.Format_BGR888)
    return image.copy()


@dataclass(frozen=True)
class _Switched:
    # Travels through the event queue, so events of the old timeline are all delivered before it.
    timeline: Timeline


def conversation_json(events: list[Event]) -> str:
    """A conversation's events as a JSON array (every field, in timeline order)."""
    return json.dumps([e.to_dict() for e in events], ensure_ascii=False, indent=1, default=str)


_SAID = {Kind.USER_TEXT, Kind.ASR_FINAL, Kind.ASSISTANT_TURN_END, Kind.DELEGATION_RESULT, Kind.REMINDER_FIRED}


class Bridge(QObject):
    """Re-emits timeline events, mic levels and frames as GUI-thread signals; runs user actions off it."""

    event_received = Signal(object)  # an engine.timeline Event, on the GUI thread, in timeline order
    mic_level = Signal(float)  # dBFS, the latest level (intermediate ones are dropped when the UI lags)
    frame_ready = Signal(QImage)  # the latest camera frame (older ones are dropped when the UI lags)
    action_failed = Signal(str, str)  # (action name, error message) when a controller call raised
    conversation_switched = Signal(object)  # the Timeline now in use, after every event of the old one
    conversations_listed = Signal(list, str)  # [ConversationInfo], most recent first; the id in use
    exported = Signal(str)  # the path a conversation was exported to
    search_found = Signal(str, list)  # (query, ids of conversations whose words contain every word of it)

    _event_posted = Signal(object)
    _level_posted = Signal()
    _frame_posted = Signal()

    def __init__(self, timeline: Timeline, controller: Controller, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.controller = controller
        self._actions = ThreadPoolExecutor(max_workers=1, thread_name_prefix="venus-ui-actions")
        self._latest_lock = threading.Lock()
        self._latest_level: float | None = None
        self._latest_frame: QImage | None = None
        self._event_posted.connect(self._deliver_event, Qt.ConnectionType.QueuedConnection)
        self._level_posted.connect(self._deliver_level, Qt.ConnectionType.QueuedConnection)
        self._frame_posted.connect(self._deliver_frame, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe: Callable[[], None] | None = timeline.subscribe(self._event_posted.emit)
        attach = getattr(controller, "attach_sinks", None)
        if attach is not None:  # a real engine: its mic levels and camera frames come here
            attach(self.post_mic_level, self.post_frame)

    # ---- inbound: any thread -> GUI thread ------------------------------------------------------------------

    @Slot(object)
    def _deliver_event(self, event: Event | _Switched) -> None:
        if isinstance(event, _Switched):
            self.conversation_switched.emit(event.timeline)
        else:
            self.event_received.emit(event)

    def post_mic_level(self, dbfs: float) -> None:
        """A `LevelSink`: thread-safe; only the newest level waiting for the GUI is kept."""
        with self._latest_lock:
            pending = self._latest_level is not None
            self._latest_level = float(dbfs)
        if not pending:
            self._level_posted.emit()

    @Slot()
    def _deliver_level(self) -> None:
        with self._latest_lock:
            level, self._latest_level = self._latest_level, None
        if level is not None:
            self.mic_level.emit(level)

    def post_frame(self, frame: np.ndarray) -> None:
        """A `FrameSink`: converts on the calling thread; only the newest frame waiting for the GUI is kept."""
        image = frame_to_image(frame)
        with self._latest_lock:
            pending = self._latest_frame is not None
            self._latest_frame = image
        if not pending:
            self._frame_posted.emit()

    @Slot()
    def _deliver_frame(self) -> None:
        with self._latest_lock:
            image, self._latest_frame = self._latest_frame, None
        if image is not None:
            self.frame_ready.emit(image)

    # ---- outbound: GUI thread -> controller worker ----------------------------------------------------------

    def _submit(self, name: str, *args: Any) -> Future:
        method = getattr(self.controller, name, None)
        if method is None:  # an engine without this action: say so instead of failing in the UI
            def method(*_args: Any) -> None:
                raise NotImplementedError(f"{type(self.controller).__name__} does not support {name}")

        def run() -> None:
            try:
                method(*args)
            except Exception as exc:  # shown in the window; the conversation goes on
                log.exception("controller %s failed", name)
                self.action_failed.emit(name, str(exc))

        return self._actions.submit(run)

    def send_text(self, text: str) -> Future:
        """Send typed text (blank text is ignored by the caller, not here)."""
        return self._submit("send_text", text)

    def stop_talking(self) -> Future:
        """Ask Venus to stop speaking now."""
        return self._submit("stop_talking")

    def set_muted(self, muted: bool) -> Future:
        """Mute or unmute the microphone."""
        return self._submit("set_muted", muted)

    def push_to_talk(self, pressed: bool) -> Future:
        """Push-to-talk key down or up."""
        return self._submit("push_to_talk", pressed)

    def cancel_task(self, task_id: str) -> Future:
        """Cancel a background task."""
        return self._submit("cancel_task", task_id)

    def answer_confirmation(self, task_id: str, approved: bool) -> Future:
        """Approve or deny a waiting tool call."""
        return self._submit("answer_confirmation", task_id, approved)

    def set_camera(self, enabled: bool) -> Future:
        """Turn the camera on or off."""
        return self._submit("set_camera", enabled)

    def apply_settings(self, settings: Any) -> Future:
        """Hand saved settings to the engine."""
        return self._submit("apply_settings", settings)

    def microphone_available(self) -> bool | None:
        """Whether the engine hears a microphone; None when the controller does not say (a cheap attribute read)."""
        probe = getattr(self.controller, "microphone_available", None)
        return None if probe is None else bool(probe())

    def describe_tools(self) -> list[dict] | None:
        """The running harness's tools for the settings' Tools page (a registry read; None without a harness)."""
        describe = getattr(self.controller, "describe_tools", None)
        return None if describe is None else describe()

    # ---- stored conversations (on the controller worker too: they touch the database) ---------------------------

    def _run(self, name: str, work: Callable[[], None]) -> Future:
        def run() -> None:
            try:
                work()
            except Exception as exc:  # shown in the window; the conversation goes on
                log.exception("%s failed", name)
                self.action_failed.emit(name, str(exc))

        return self._actions.submit(run)

    def _store(self) -> Any:
        getter = getattr(self.controller, "conversation_store", None)
        store = getter() if getter is not None else None
        if store is None:
            raise RuntimeError("conversations are not being saved in this session (no conversation database)")
        return store

    def _list_now(self) -> None:
        getter = getattr(self.controller, "conversation_store", None)
        store = getter() if getter is not None else None
        listed = store.list_conversations() if store is not None else []
        self.conversations_listed.emit(listed, self.timeline.conversation_id)

    def _switch_now(self, conversation_id: str | None) -> None:
        switch = getattr(self.controller, "switch_conversation", None)
        if switch is None:
            raise NotImplementedError(f"{type(self.controller).__name__} keeps one conversation: it cannot switch")
        timeline = switch(conversation_id)
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.timeline = timeline
        self._event_posted.emit(_Switched(timeline))
        self._unsubscribe = timeline.subscribe(self._event_posted.emit)

    def list_conversations(self) -> Future:
        """Emit `conversations_listed` with the stored conversations (an empty list when none are stored)."""
        return self._run("list_conversations", self._list_now)

    def switch_conversation(self, conversation_id: str | None) -> Future:
        """Go on in another stored conversation (None: start a new one), then list them again."""
        def work() -> None:
            if conversation_id != self.timeline.conversation_id:
                self._switch_now(conversation_id)
            self._list_now()

        return self._run("switch_conversation", work)

    def rename_conversation(self, conversation_id: str, title: str) -> Future:
        """Give a stored conversation a new title."""
        return self._run("rename_conversation", lambda: (self._store().set_title(conversation_id, title),
                                                         self._list_now()))

    def delete_conversation(self, conversation_id: str) -> Future:
        """Delete a stored conversation; deleting the one in use starts a new one first."""
        def work() -> None:
            if conversation_id == self.timeline.conversation_id:
                self._switch_now(None)
            self._store().delete_conversation(conversation_id)
            self._list_now()

        return self._run("delete_conversation", work)

    def search_conversations(self, query: str) -> Future:
        """Look for `query`'s words in what was said in every stored conversation; emits `search_found`."""
        def work() -> None:
            words = query.lower().split()
            found: list[str] = []
            getter = getattr(self.controller, "conversation_store", None)
            store = getter() if getter is not None else None
            for info in store.list_conversations() if store is not None and words else []:
                if info.id == self.timeline.conversation_id:
                    events = self.timeline.events()
                else:
                    events = store.open_conversation(info.id).events()
                    store.close_conversation(info.id)
                said = " ".join(getattr(e, "text", "") for e in events if e.kind in _SAID).lower()
                if all(w in said for w in words):
                    found.append(info.id)
            self.search_found.emit(query, found)

        return self._run("search_conversations", work)

    def export_conversation(self, conversation_id: str, path: Path, markdown: Callable[[list[Event]], str]) -> Future:
        """Write a conversation to `path`: JSON for a .json name, else Markdown made by `markdown(events)`."""
        def work() -> None:
            if conversation_id == self.timeline.conversation_id:
                events = self.timeline.events()
            else:
                store = self._store()
                events = store.open_conversation(conversation_id).events()
                store.close_conversation(conversation_id)
            text = conversation_json(events) if Path(path).suffix.lower() == ".json" else markdown(events)
            Path(path).write_text(text, encoding="utf-8")
            self.exported.emit(str(path))

        return self._run("export_conversation", work)

    def close(self, timeout_s: float = 5.0) -> None:
        """Stop listening to the timeline, close the controller and wait for queued actions to finish."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        closing = self._submit("close")
        try:
            closing.result(timeout=timeout_s)
        finally:
            self._actions.shutdown(wait=False, cancel_futures=True)
