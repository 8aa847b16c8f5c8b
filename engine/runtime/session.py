"""Building one running Venus from settings: timeline, LLM, voice, harness, camera and the foreground loop.

The desktop app, `venus chat` and `venus duplex` all build their session here; only the devices differ.
CPU sharing on small machines is decided here too: the LLM, whisper and the voice each get one thread on a
2-core machine (two models at two threads each on two cores cut generation from 36 to 6 tokens/s), and the
LLM gets more only where cores are plentiful (`choose_threads`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.runtime.language import plan_language
from engine.runtime.mouth import Mouth, TextMouth
from engine.runtime.runtime import Runtime, RuntimeOptions
from engine.settings import Settings
from engine.timeline import events as ev
from engine.timeline.timeline import Timeline

log = logging.getLogger(__name__)

API_KEY_NAME = "api-key:remote-llm"  # keyring entry of the remote LLM's API key (set in the app's settings)


@dataclass
class Shared:
    """Models loaded once and reused across sessions (e.g. every case of `venus duplex --input-dir`)."""

    backend: Any = None
    transcriber: Any = None
    synthesizer: Any = None

    def close(self) -> None:
        """Release the LLM."""
        if self.backend is not None:
            self.backend.close()
            self.backend = None


@dataclass
class Session:
    """Everything one conversation runs on; `close()` shuts it down in the right order."""

    settings: Settings
    timeline: Timeline
    runtime: Runtime
    conversation: Any
    mouth: Mouth
    speech: Any = None  # engine.audio.SpeechPipeline when there is a voice
    harness: Any = None
    store: Any = None
    vision: Any = None
    shared: Shared = field(default_factory=Shared)
    owns_shared: bool = True
    # the session's own timeline subscribers (besides the runtime's): dropped at close, since a reload in place
    # reopens a session on the same timeline
    unsubscribes: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        """Stop the loop, the voice, the harness and the camera; flush the timeline to disk."""
        for unsubscribe in self.unsubscribes:
            unsubscribe()
        self.runtime.close()
        if self.speech is not None:
            self.speech.close()
        if self.vision is not None:
            self.vision.close()
        if self.harness is not None:
            self.harness.shutdown()
        self.conversation.close()
        if self.owns_shared:
            self.shared.close()
        if self.store is not None:
            self.store.close()


def remote_api_key() -> str:
    """The remote backend's API key from the OS keyring ('' when none or no keyring)."""
    try:
        import keyring

        return keyring.get_password("venus", API_KEY_NAME) or ""
    except Exception:  # no keyring backend: a local server needs no key anyway
        return ""


def load_shared(settings: Settings, *, speech: bool) -> Shared:
    """Load the LLM (and, for voice sessions, ASR and TTS, as the conversation language needs them) once."""
    from engine.llm import open_backend

    settings = plan_language(settings, speech=speech).settings

    shared = Shared(backend=open_backend(settings.llm, api_key=remote_api_key() if settings.llm.backend == "remote" else ""))
    if speech:
        from engine.audio import make_synthesizer, make_transcriber

        shared.transcriber = make_transcriber(settings)
        shared.synthesizer = make_synthesizer(settings)
    return shared


def open_session(
    settings: Settings,
    *,
    mic: Path | None = None,
    speaker: Path | None = None,
    devices: bool = False,
    persist: bool = True,
    conversation_id: str | None = None,
    harness: bool = True,
    video: str | None = None,
    shared: Shared | None = None,
    realtime: bool = True,
    output_rate: int = 22050,
    on_clause: Any = None,
    on_level: Any = None,
    runtime_options: RuntimeOptions | None = None,
    timeline: Timeline | None = None,
    observer: Callable[[ev.Event], None] | None = None,
) -> Session:
    """Open a conversation: files (`mic`/`speaker`), the sound cards (`devices`) or text only.

    `observer` is subscribed to the timeline before anything starts, so it also sees the notices the session's
    own start-up posts (a missing folder, the language's voice, an MCP server failing)."""
    from engine.llm import Conversation, ConversationOptions

    voice = devices or mic is not None
    language = plan_language(settings, speech=voice)  # runs on language.settings; `settings` stays the user's
    owns_shared = shared is None
    shared = shared or load_shared(settings, speech=voice)
    store = None
    if timeline is None:
        if persist:
            from engine.timeline import open_store

            store = open_store()
            timeline = store.open_conversation(conversation_id) if conversation_id else store.new_or_unused()
        else:
            timeline = Timeline()
    unsubscribes: list[Callable[[], None]] = []
    if observer is not None:
        unsubscribes.append(timeline.subscribe(observer))
    the_harness = None
    if harness:
        from harness import Harness

        the_harness = Harness(settings.harness, timeline.append)
    tools = the_harness.tool_specs() if the_harness is not None else ()
    options = language.conversation_options(ConversationOptions.from_settings(language.settings.llm))
    conversation = Conversation(timeline, shared.backend, options, tools=tools)
    if the_harness is not None:
        unsubscribes.append(timeline.subscribe(_tool_list_follower(the_harness, conversation)))
    speech = None
    runtime_ref: list[Runtime] = []

    def level(db: float) -> None:
        if runtime_ref:
            runtime_ref[0].on_level(db)
        if on_level is not None:
            on_level(db)

    if voice:
        from engine.audio import SpeechPipeline

        kwargs = dict(transcriber=shared.transcriber, synthesizer=shared.synthesizer, on_level=level)
        if devices:
            speech = SpeechPipeline.for_devices(timeline, language.settings, **kwargs)
        else:
            from engine.audio import FileSink, FileSource

            if speaker is None:
                raise ValueError("speech from a file (--mic) needs a file to speak into (--speaker)")
            source = FileSource(Path(mic), realtime=realtime)
            sink = FileSink(Path(speaker), sample_rate=output_rate, session_ms=timeline.now_ms)
            speech = SpeechPipeline(timeline, source, sink, language.settings, **kwargs)
        mouth: Mouth = speech
    else:
        mouth = TextMouth(on_clause)
    vision = None
    if video is not None or settings.camera.enabled:
        from engine.vision import VisionService

        camera = settings.camera.model_copy(update={"device": video}) if video is not None else settings.camera
        vision = VisionService(camera, timeline)
    for text in language.notices:
        timeline.append(ev.SystemNotice(level="info", code="conversation-language", text=text))
    runtime = Runtime(timeline, conversation, mouth, harness=the_harness, settings=language.settings, vision=vision,
                      options=language.runtime_options(runtime_options), end_of_turn=language.end_of_turn(),
                      overlap=language.overlap())
    runtime_ref.append(runtime)
    if speech is not None:
        speech.wants_voice_score = lambda: runtime.awaiting_answer
    runtime.start()
    if speech is not None:
        speech.start()
    if vision is not None:
        vision.start()
    return Session(settings=settings, timeline=timeline, runtime=runtime, conversation=conversation, mouth=mouth,
                   speech=speech, harness=the_harness, store=store, vision=vision, shared=shared,
                   owns_shared=owns_shared, unsubscribes=unsubscribes)


def _tool_list_follower(the_harness: Any, conversation: Any) -> Callable[[Any], None]:
    """A timeline subscriber: MCP servers start in the background and may crash and come back, so the tools
    offered to the model follow their notices (a server's tools are offered once it listed them)."""
    from engine.llm.control import as_tool_specs

    def follow(event: Any) -> None:
        if isinstance(event, ev.SystemNotice) and event.code.startswith("mcp-server-"):
            conversation.tools = as_tool_specs(the_harness.tool_specs())

    return follow
