"""The real engine behind the window: an engine.runtime Session, reached only through its runtime.

`session_controller_factory(...)` gives `run_app` a factory; the keyword arguments are those of
`engine.runtime.session.open_session` (sound cards, or a WAV file as the microphone, camera or video file).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from app.controller import ControllerFactory
from engine.settings import Settings
from engine.timeline import Timeline
from engine.timeline.events import SystemNotice

log = logging.getLogger(__name__)


class SessionController:
    """Forwards the window's actions to a running Session; mic levels and camera frames flow back."""

    def __init__(self, timeline: Timeline | None, settings: Settings, **open_kwargs: Any) -> None:
        from engine.runtime.session import open_session

        self._sinks_lock = threading.Lock()
        self._level_sink: Callable[[float], None] | None = None
        self._frame_sink: Callable[[np.ndarray], None] | None = None
        self.settings = settings
        self._open_kwargs = open_kwargs  # reused when the user switches conversations
        self.session = open_session(settings, timeline=timeline, on_level=self._on_level, **open_kwargs)
        self.timeline = self.session.timeline
        self.runtime = self.session.runtime
        if self.session.vision is not None:
            self.session.vision.add_frame_sink(self._on_frame)

    # ---- engine -> window -------------------------------------------------------------------------------------

    def attach_sinks(self, level_sink: Callable[[float], None], frame_sink: Callable[[np.ndarray], None]) -> None:
        """Called by the bridge: where mic levels (dBFS) and camera frames (BGR arrays) go from now on."""
        with self._sinks_lock:
            self._level_sink, self._frame_sink = level_sink, frame_sink

    def _on_level(self, dbfs: float) -> None:
        sink = self._level_sink
        if sink is not None:
            sink(dbfs)

    def _on_frame(self, frame: np.ndarray) -> None:
        sink = self._frame_sink
        if sink is not None:
            sink(frame)

    # ---- window -> engine (called on the bridge's action thread) ------------------------------------------------

    def send_text(self, text: str) -> None:
        """Typed text becomes the user's turn."""
        self.runtime.send_text(text)

    def stop_talking(self) -> None:
        """Silence Venus now."""
        self.runtime.stop_talking()

    def set_muted(self, muted: bool) -> None:
        """Ignore (or again hear) the microphone."""
        self.runtime.set_muted(muted)

    def push_to_talk(self, pressed: bool) -> None:
        """Push-to-talk key down or up."""
        self.runtime.push_to_talk(pressed)

    def cancel_task(self, task_id: str) -> None:
        """Cancel a background task."""
        self.runtime.cancel_task(task_id)

    def answer_confirmation(self, task_id: str, approved: bool) -> None:
        """Approve or deny an 'ask' tool call."""
        self.runtime.answer_confirmation(task_id, approved)

    def set_camera(self, enabled: bool) -> None:
        """Turn the camera on or off (only when the session opened one)."""
        if self.session.vision is None and enabled:
            self.timeline.append(SystemNotice(level="warning", code="camera-off",
                                              text="The camera is disabled: enable it in Settings → Camera and restart"))
            return
        self.runtime.set_camera(enabled)

    def describe_tools(self) -> list[dict[str, Any]] | None:
        """The running harness's tools with level, default, source and availability (Settings → Tools)."""
        harness = self.session.harness
        return None if harness is None else harness.describe_tools()

    def apply_settings(self, settings: Settings) -> None:
        """Apply saved settings now. Tool permissions and the voice go to the running session; a change it cannot
        take (the model, speech recognition, devices, camera, MCP servers) reopens the engine on the same
        conversation, as a restart would, without closing the window."""
        from app.settings_fields import needs_restart

        before, self.settings = self.settings, settings
        later = needs_restart(before, settings)
        if before.conversation.assistant_name != settings.conversation.assistant_name:
            later.append("her name")  # the window shows it at once; the runtime primes speech recognition with it
        if later:
            seconds = self.reload(settings, before)
            if seconds is not None:
                self.timeline.append(SystemNotice(code="settings-saved", text=(
                    f"Settings saved; Venus reloaded {', '.join(later)} in {seconds:.1f} s")))
            return
        applied = []
        harness = self.session.harness
        if harness is not None:
            from engine.llm.control import as_tool_specs

            harness.set_permissions(dict(settings.harness.permissions))
            self.session.conversation.tools = as_tool_specs(harness.tool_specs())  # a tool turned off is not offered
            applied.append("tool permissions")
        if settings.tts != before.tts and self.session.speech is not None:
            applied.extend(self._swap_voice(settings))
        text = "Settings saved" + (f"; {' and '.join(applied)} apply now" if applied else "")
        self.timeline.append(SystemNotice(code="settings-saved", text=text))

    def reload(self, settings: Settings, fallback: Settings | None = None) -> float | None:
        """Close the session and open it again with `settings` on the same timeline and conversation database, so
        the window and the conversation go on; models are loaded afresh. If the new settings cannot open (a model
        missing, a device gone), the session reopens on `fallback` and says why. Returns the seconds it took,
        or None when it fell back."""
        from engine.runtime.session import open_session

        started = time.monotonic()
        old = self.session
        store, old.store = old.store, None  # the conversation's database stays open for the new session
        if not old.owns_shared:  # models lent by the caller (tests, `venus duplex`) are not ours to reload
            self._open_kwargs.setdefault("shared", old.shared)
        old.close()
        opened, problem = settings, ""
        try:
            session = open_session(settings, timeline=self.timeline, on_level=self._on_level, **self._open_kwargs)
        except Exception as exc:  # say why and go on with what worked before
            if fallback is None:
                raise
            log.exception("reopening the session with new settings failed")
            opened, problem = fallback, str(exc)
            session = open_session(fallback, timeline=self.timeline, on_level=self._on_level, **self._open_kwargs)
        session.store = store
        self.session, self.runtime, self.settings = session, session.runtime, opened
        if session.vision is not None:
            session.vision.add_frame_sink(self._on_frame)
        if problem:
            self.timeline.append(SystemNotice(level="error", code="settings-not-applied", text=(
                f"The new settings could not be used ({problem}); Venus went back to the previous ones. "
                "Fix it in Settings and save again")))
            return None
        return time.monotonic() - started

    def _swap_voice(self, settings: Settings) -> list[str]:
        """Load the new voice and hand it to the speech pipeline: the next clause is spoken with it."""
        from engine.audio.pipeline import make_synthesizer
        from engine.errors import VenusError

        try:
            from engine.runtime.language import plan_language

            # the voice the conversation's language asks for (a Spanish one for Spanish), as a reopened session
            # would choose it
            voice = make_synthesizer(plan_language(settings, speech=True).settings)
        except (VenusError, ValueError, OSError) as exc:
            self.timeline.append(SystemNotice(level="warning", code="voice-not-changed",
                                              text=f"The new voice could not load ({exc}); Venus keeps her old voice"))
            return []
        self.session.speech.synthesizer = voice  # read once per clause by the speaking thread
        self.session.shared.synthesizer = voice
        return ["the voice"]

    def microphone_available(self) -> bool:
        """Whether this session hears a microphone (False: no sound card was found, so Venus is typed only)."""
        return self.session.speech is not None

    # ---- stored conversations (called on the bridge's action thread) ---------------------------------------------

    def conversation_store(self) -> Any:
        """The running session's conversation database (None when it keeps nothing, e.g. persist=False)."""
        return self.session.store

    def switch_conversation(self, conversation_id: str | None) -> Timeline:
        """Go on in another stored conversation (None: a new one). The session reopens on that timeline, so the
        model's context is that conversation; the loaded models are kept."""
        from engine.runtime.session import open_session

        if self.session.store is None:
            raise RuntimeError("this session keeps no conversations (it was opened without a conversation database)")
        old = self.session
        owns_shared, old.owns_shared = old.owns_shared, False  # the new session reuses the loaded models
        old.close()
        session = open_session(self.settings, conversation_id=conversation_id, shared=old.shared,
                               on_level=self._on_level, **self._open_kwargs)
        session.owns_shared = owns_shared
        self.session, self.timeline, self.runtime = session, session.timeline, session.runtime
        if session.vision is not None:
            session.vision.add_frame_sink(self._on_frame)
        return session.timeline

    def close(self) -> None:
        """Shut the session down (loop, voice, harness, camera, timeline store)."""
        self.session.close()


def session_controller_factory(**open_kwargs: Any) -> ControllerFactory:
    """A factory for `run_app` that opens a real session with these `open_session` arguments."""

    def build(timeline: Timeline | None, settings: Settings) -> SessionController:
        return SessionController(timeline, settings, **open_kwargs)

    return build


def wav_microphone_factory(mic: Path, speaker: Path, **open_kwargs: Any) -> ControllerFactory:
    """A factory whose microphone is a WAV file and whose speaker is a WAV file being written."""
    return session_controller_factory(mic=Path(mic), speaker=Path(speaker), **open_kwargs)
