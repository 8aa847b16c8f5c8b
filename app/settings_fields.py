"""Every settings field as people read it: which page and group it sits in, its label, unit and help.

The dialog is built from `PAGES`; a field of engine.settings that is neither here nor in `CUSTOM` is a
mistake (tests/test_app_settings.py checks that none is left out, so Settings never becomes a dump again).
"""

from __future__ import annotations

from app.settings_form import FieldSpec as F

LANGUAGES = (  # whisper's most used languages; the code is what whisper and espeak-ng take
    ("English", "en"), ("German", "de"), ("French", "fr"), ("Spanish", "es"), ("Italian", "it"),
    ("Portuguese", "pt"), ("Dutch", "nl"), ("Polish", "pl"), ("Swedish", "sv"), ("Danish", "da"),
    ("Norwegian", "no"), ("Finnish", "fi"), ("Czech", "cs"), ("Greek", "el"), ("Turkish", "tr"),
    ("Russian", "ru"), ("Ukrainian", "uk"), ("Arabic", "ar"), ("Hebrew", "he"), ("Hindi", "hi"),
    ("Chinese", "zh"), ("Japanese", "ja"), ("Korean", "ko"), ("Indonesian", "id"), ("Vietnamese", "vi"),
)
LANGUAGE_CHOICES = tuple((f"{name} ({code})", code) for name, code in LANGUAGES)

# Fields shown by pages of their own (tools, folders, MCP servers) or derived from another choice.
CUSTOM = {
    "harness.permissions": "Tools page: one dropdown per tool",
    "harness.allowed_folders": "Tools page: the folder list",
    "harness.mcp_servers": "MCP servers page",
    "tts.engine": "follows the chosen voice (a Piper voice or an espeak-ng voice)",
    "ui.first_run_done": "set by the first-run wizard, not a preference",
}

GENERAL = [
    ("You and Venus", [
        F("conversation.assistant_name", "Assistant's name", "What she is called; she also listens for it while she talks."),
        F("conversation.user_name", "Your name", "Used when she addresses you. Leave empty to stay anonymous."),
        F("conversation.household_names", "People around you",
          "Comma-separated names. Speech over Venus that calls one of them is taken as meant for them."),
    ]),
    ("Language", [
        F("asr.language", "Language you speak", "What speech recognition listens for. The default speech model knows English only.",
          choices=LANGUAGE_CHOICES),
        F("conversation.language", "Language Venus answers in", "The language of her replies.", choices=LANGUAGE_CHOICES),
    ]),
    ("Appearance", [
        F("ui.theme", "Theme", "Follow the system, or always light or dark.",
          choices=(("Follow the system", "system"), ("Light", "light"), ("Dark", "dark"))),
    ]),
]

VOICE = [
    ("Voice", [
        F("tts.voice", "Voice", "Piper voices sound natural; espeak-ng voices are robotic but instant and speak many languages.",
          chooser=True),
        F("tts.rate", "Speaking speed", "1.0 is the voice's natural pace; 1.5 is half again as fast.", unit="×"),
        F("tts.volume", "Volume", "Loudness of her voice, before your system volume.", unit="%", scale=100),
        F("tts.espeak_voice", "Fallback voice", "The espeak-ng voice used if the Piper voice cannot load.", chooser=True),
    ]),
]

AUDIO = [
    ("Microphone", [
        F("audio.input_device", "Microphone", "The device Venus listens on. The bar shows what it hears right now.", chooser=True),
        F("audio.noise_suppression", "Reduce background noise", "Filters steady noise such as fans from the microphone."),
        F("audio.echo_cancellation", "Cancel Venus's own voice",
          "Removes her voice from the microphone, so she does not hear herself on loudspeakers."),
    ]),
    ("Speaker", [
        F("audio.output_device", "Speaker", "The device Venus speaks on.", chooser=True),
        F("audio.duck_gain", "Her volume while you talk over her",
          "She turns down to this much the moment you start speaking, until she knows whether to stop.", unit="%", scale=100),
    ]),
]

CONVERSATION = [
    ("Taking turns", [
        F("conversation.end_of_turn_silence_ms", "Pause that ends your turn",
          "How long you can pause before she answers. Longer suits slow speakers.", unit="ms"),
        F("conversation.end_of_turn_model", "How she knows you are done",
          "Her language model reads whether your words are finished, so she waits through a pause after \"the train "
          "times to\" and answers a whole question at once. It is tuned for the default model; with another model, "
          "or one on a server, she uses the word rules.",
          choices=(("The language model", "llm"), ("Word rules", "lexical"))),
        F("conversation.duplex_sensitivity", "How quickly she yields",
          "Higher stops her sooner when someone talks over her; lower lets her finish through noise.", unit="%", scale=100),
        F("llm.max_spoken_sentences", "Sentences before she asks to go on",
          "She stops after this many and asks \"Want me to go on?\"", unit="sentences", special="No limit"),
        F("conversation.voice_matching", "Learn my voice",
          "Learns your voice from your first sentences, so others talking over her are not taken as you."),
    ]),
]

MODEL = [
    ("Language model", [
        F("llm.model", "Model", "The installed models, with their size and whether they fit in this computer's memory.",
          chooser=True),
        F("llm.backend", "Where it runs", "On this computer, or on a server that speaks the OpenAI API.",
          choices=(("On this computer (llama.cpp)", "llama_cpp"), ("On this computer with PyTorch", "torch"),
                   ("On a server (OpenAI-compatible)", "remote"))),
        F("llm.device", "PyTorch device", "Used when the model runs with PyTorch: Automatic takes the GPU when there is one.",
          choices=(("Automatic", "auto"), ("GPU (CUDA)", "cuda"), ("CPU", "cpu"))),
        F("llm.n_ctx", "Context length", "How much of the conversation the model can see at once.", unit="tokens"),
        F("llm.n_gpu_layers", "Layers on the GPU", "0 runs on the CPU; more layers on the GPU need a CUDA build.",
          unit="layers", special="All layers"),
        F("llm.temperature", "Creativity", "Temperature: 0 always picks the likeliest word; higher varies more."),
        F("llm.max_tokens", "Longest answer", "A hard stop for one answer; spoken answers should be short.", unit="tokens"),
        F("llm.tool_calls", "Tool calls by the model",
          "Automatic follows what was measured for the model: off for the tiny defaults, which recite the format instead.",
          choices=(("Automatic", "auto"), ("On", "on"), ("Off", "off"))),
    ]),
    ("Server", [
        F("llm.remote_url", "Server address", "Used when the model runs on a server, e.g. http://127.0.0.1:8080/v1."),
        F("llm.remote_model", "Model name on the server", "Empty uses the server's default model."),
        F("llm.remote_timeout_s", "Server timeout", "How long to wait for the server before giving up.", unit="s"),
    ]),
    ("Speech recognition", [
        F("asr.model", "Speech model", "The whisper model that turns your speech into words.", chooser=True),
    ]),
]

CAMERA = [
    ("Camera", [
        F("camera.enabled", "Use the camera", "Off by default. Venus sees whether you are there and facing her."),
        F("camera.device", "Camera", "A camera number (0 is the first), or a video file or stream address.",
          chooser=True, editable=True),
        F("camera.ocr_enabled", "Read text held up to the camera", "Recognises printed text in view (OCR)."),
        F("camera.store_frames", "Keep pictures", "Off: pictures are analysed and dropped, never written to disk."),
    ]),
    ("Seeing with a multimodal model", [
        F("camera.multimodal_model", "Vision model", "A multimodal GGUF (model id or path) that answers questions about what it sees."),
        F("camera.multimodal_projector", "Its projector", "The mmproj GGUF that comes with the vision model."),
        F("camera.multimodal_chat_format", "Chat format", "Automatic guesses it from the model's file name.",
          choices=(("Automatic", "auto"), *((name, name) for name in (
              "qwen2.5-vl", "moondream", "minicpm-v-2.6", "llava-1.5", "llava-1.6", "nanollava", "gemma4", "mtmd")))),
    ]),
    ("How often it looks", [
        F("camera.sample_fps_speaking", "Looks while you speak", "Pictures analysed per second while you talk.", unit="per s"),
        F("camera.sample_fps_quiet", "Looks otherwise", "Pictures analysed per second the rest of the time.", unit="per s"),
        F("camera.scene_change_threshold", "Scene change", "Mean grey-level change that makes her look at once.", unit="levels"),
        F("camera.facing_max_yaw_deg", "Facing the screen", "A head turned further than this counts as looking away.", unit="°"),
        F("camera.away_after_s", "Away after", "No face for this long means you have left.", unit="s"),
        F("camera.face_model", "Face model", "Finds faces and which way they point.", chooser=True),
        F("camera.retry_interval_s", "Retry a lost camera every", "Wait between attempts to reopen a camera that stopped.", unit="s"),
    ]),
]

ADVANCED = [
    ("Background tasks", [
        F("harness.confirm_timeout_s", "Time to answer a question", "A tool waiting for your yes is cancelled after this long.",
          unit="s"),
        F("harness.task_timeout_s", "Longest a task may run", "A task still running after this is stopped.", unit="s"),
        F("harness.workers", "Tasks at once", "How many background tasks run side by side.", unit="tasks"),
        F("harness.max_tool_output_bytes", "Largest tool result", "An MCP tool's result is cut here and marked truncated.",
          unit="bytes"),
    ]),
    ("Language model", [
        F("llm.n_threads", "CPU threads", "Automatic chooses from the CPU count and what else is running.",
          unit="threads", special="Automatic"),
        F("llm.n_batch", "Prompt batch", "Prompt tokens evaluated per step.", unit="tokens"),
        F("llm.top_p", "Top-p", "Only the likeliest words adding up to this share are sampled."),
        F("llm.working_window", "Working window",
          "Tokens kept before old turns fold into a summary; 0 sizes it from the model.", unit="tokens",
          special="Off: fold only when full"),
        F("llm.system_prompt", "Instructions", "What the model is told about itself before every conversation.", multiline=True),
    ]),
    ("Speech recognition", [
        F("asr.partial_interval_ms", "Words shown every", "How often words appear while you speak.", unit="ms"),
        F("asr.overlap_partial_interval_ms", "…while she talks", "How often speech over her voice is decoded.", unit="ms"),
        F("asr.overlap_first_partial_ms", "First words over her voice after", "Speech needed before it is first decoded.", unit="ms"),
        F("asr.beam_size", "Beam while you speak", "1 is fastest; larger is more careful.", unit="beams"),
        F("asr.turn_beam_size", "Beam for your final words", "4 hears cut-off speech as cut off, for about 10% more time.",
          unit="beams"),
        F("asr.window_s", "Listening window", "Speech decoded at once; longer speech gets a longer one.", unit="s"),
        F("asr.n_threads", "CPU threads", "Threads for speech recognition.", unit="threads"),
        F("asr.request_hint", "Expect requests", "Primes recognition with request words, so \"timer\" is not heard as \"tiger\"."),
    ]),
    ("Detecting speech", [
        F("vad.threshold", "Speech starts at", "Speech probability that opens a segment."),
        F("vad.neg_threshold", "Silence below", "Probability under which sound counts as silence."),
        F("vad.min_speech_ms", "Shortest speech", "Sounds shorter than this are ignored.", unit="ms"),
        F("vad.min_silence_ms", "Silence that closes a segment", "Your turn may still go on after it.", unit="ms"),
        F("vad.speech_pad_ms", "Padding around speech", "Audio kept before and after each segment.", unit="ms"),
    ]),
    ("Audio", [
        F("audio.blocksize_ms", "Output block", "Small blocks let her stop faster.", unit="ms"),
        F("audio.stop_fade_ms", "Fade when stopped", "A short fade instead of a click.", unit="ms"),
        F("audio.echo_hold_ms", "Echo canceller hold", "It runs while she speaks and this long after.", unit="ms"),
        F("audio.echo_guard", "Guard against her own echo", "Judges speech onsets against the echo expected while she talks."),
        F("audio.echo_guard_threshold", "Speech probability needed while she talks",
          "Higher ignores more of her own echo."),
        F("audio.echo_guard_margin_db", "Echo guard margin", "The microphone must be this much louder than her echo.", unit="dB"),
        F("audio.test_tone_hz", "Test sound pitch", "The tone played by \"Play test sound\".", unit="Hz"),
        F("tts.n_threads", "Voice CPU threads", "Threads for the Piper voice.", unit="threads"),
    ]),
]

PAGES: list[tuple[str, list[tuple[str, list[F]]]]] = [  # (page title, [(group title, fields)])
    ("General", GENERAL), ("Voice", VOICE), ("Audio devices", AUDIO), ("Conversation", CONVERSATION),
    ("Models", MODEL), ("Camera", CAMERA), ("Tools", []), ("MCP servers", []), ("API keys", []),
    ("Advanced", ADVANCED),
]

# What a running Venus takes without a restart (SessionController.apply_settings and the window).
LIVE_SECTIONS = {"tts", "ui"}
LIVE_FIELDS = {"harness.permissions", "conversation.assistant_name"}
RESTART_REASON = {"llm": "the language model", "asr": "speech recognition", "audio": "the audio devices",
                  "vad": "speech detection", "camera": "the camera", "harness": "tools and MCP servers",
                  "conversation": "the conversation settings"}


def all_specs() -> list[F]:
    """Every shown field, in page order."""
    return [spec for _, groups in PAGES for _, specs in groups for spec in specs]


def page_of(key: str) -> str:
    """The page title showing `key` ("llm.top_p" -> "Advanced"); a custom field's page from CUSTOM."""
    for title, groups in PAGES:
        if any(spec.key == key for _, specs in groups for spec in specs):
            return title
    if key.startswith("harness.mcp_servers"):
        return "MCP servers"
    if key.startswith("harness."):
        return "Tools"
    return "General"


def needs_restart(before: object, after: object) -> list[str]:
    """What changed that a running Venus only picks up after a restart, in words ("the language model")."""
    reasons: list[str] = []
    old, new = before.model_dump(), after.model_dump()  # type: ignore[attr-defined]
    for section, values in new.items():
        if section in LIVE_SECTIONS or not isinstance(values, dict):
            continue
        for name, value in values.items():
            if f"{section}.{name}" in LIVE_FIELDS or old[section].get(name) == value:
                continue
            reason = RESTART_REASON.get(section, section)
            if reason not in reasons:
                reasons.append(reason)
    return reasons
