"""Typed settings: one JSON file in the user config folder, schema-versioned, never holding secrets.

Each section belongs to one part of Venus; fields carry their defaults and bounds, so a bad value is
rejected when the file is read, with the field named, and never deep inside a loop.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine import paths
from engine.threads import default_threads

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LLMSettings(_Section):
    # in-process GGUF through llama.cpp, the same GGUF through torch (extra `torch`), or an OpenAI-compatible server
    backend: Literal["llama_cpp", "torch", "remote"] = "llama_cpp"
    device: Literal["auto", "cuda", "cpu"] = "auto"  # torch backend only: auto = CUDA when torch sees a card
    model: str = "smollm2-135m-instruct-q4_1"  # a model id from `venus models list`, or a path to a .gguf
    n_ctx: int = Field(4096, ge=512, le=131072)  # context window in tokens
    n_threads: int = Field(0, ge=0, le=256)  # 0 = choose from the CPU count and what else is running
    n_gpu_layers: int = Field(0, ge=-1, le=1000)  # -1 = all layers on the GPU (needs a CUDA build)
    n_batch: int = Field(256, ge=16, le=8192)  # prompt tokens evaluated per decode call
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    top_p: float = Field(0.9, gt=0.0, le=1.0)
    max_tokens: int = Field(160, ge=1, le=8192)  # longest single answer (spoken answers should be short)
    # a spoken answer stops after this many sentences and offers to go on, unless the user asked for more
    # ("tell me more", "in detail", "go on"); 0 = no budget, only max_tokens
    max_spoken_sentences: int = Field(2, ge=0, le=50)
    # control decisions and tool calls by the model: auto = as the model registry says (off for the tiny
    # defaults, which recite the format instead; on for a remote server or a model not measured)
    tool_calls: Literal["auto", "on", "off"] = "auto"
    # tokens kept in the cache after the system prompt before old turns fold into the summary (each turn then
    # costs the same however long the conversation); 0 = sized from the model, -1 = off (fold only at n_ctx)
    working_window: int = Field(0, ge=-1, le=131072)
    remote_url: str = "http://127.0.0.1:8080/v1"  # used when backend == "remote"
    remote_model: str = ""  # model name sent to the server; empty = the server's default
    remote_timeout_s: float = Field(60.0, gt=0)
    system_prompt: str = (
        "You are Venus, a friendly voice assistant running on the user's computer. "
        "Answer briefly, in one or two spoken sentences."
    )


class AudioSettings(_Section):
    input_device: str | int | None = None  # name or index; None = system default
    output_device: str | int | None = None
    blocksize_ms: int = Field(10, ge=2, le=100)  # output block; small so stop() is fast
    test_tone_hz: float = Field(440.0, gt=20, lt=20000)
    echo_cancellation: bool = True  # WebRTC AEC fed with what Venus plays, so it does not hear itself
    noise_suppression: bool = True  # WebRTC noise suppression on the mic, with the echo canceller
    echo_hold_ms: int = Field(1500, ge=0, le=10000)  # canceller runs while Venus speaks and this long after
    stop_fade_ms: float = Field(8.0, ge=0.0, le=50.0)  # stop() fades out this long instead of clicking
    duck_gain: float = Field(0.3, ge=0.0, le=1.0)  # output gain while ducked under overlapping speech
    echo_guard: bool = True  # judge speech onsets against the expected echo while Venus speaks
    echo_guard_threshold: float = Field(0.85, gt=0.0, lt=1.0)  # VAD probability needed while Venus speaks
    echo_guard_margin_db: float = Field(6.0, ge=0.0, le=40.0)  # mic must exceed the expected echo by this


class VADSettings(_Section):
    threshold: float = Field(0.5, gt=0.0, lt=1.0)  # speech probability that opens a segment
    neg_threshold: float = Field(0.35, gt=0.0, lt=1.0)  # probability under which silence counts (hysteresis)
    min_speech_ms: int = Field(120, ge=0, le=5000)
    min_silence_ms: int = Field(200, ge=0, le=5000)  # silence that closes a segment (the turn may go on)
    speech_pad_ms: int = Field(100, ge=0, le=1000)


class ASRSettings(_Section):
    model: str = "whisper-tiny-en"  # a model id or a path to a CTranslate2 model folder
    # the language the user speaks, for whisper; "en" (the default) follows conversation.language; "" = detect it
    language: str = "en"
    partial_interval_ms: int = Field(500, ge=100, le=5000)
    overlap_partial_interval_ms: int = Field(250, ge=100, le=5000)  # while Venus speaks: words decide the overlap
    overlap_first_partial_ms: int = Field(350, ge=250, le=5000)  # ...and the first once this much speech is in
    n_threads: int = Field(default_factory=lambda: default_threads("ct2"), ge=1, le=64)  # VENUS_THREADS_CT2
    beam_size: int = Field(1, ge=1, le=10)  # partials, and speech over Venus's voice (the overlap policy's words)
    # the words that end a user's turn (pre-finals and finals of speech not over Venus): greedy whisper tiny
    # turns cut-off speech into complete-looking questions ("How much does it cost to fly to" -> "... cost of
    # light?"); a beam of 4 hears it right for about 10% more decode time
    turn_beam_size: int = Field(4, ge=1, le=10)
    window_s: float = Field(15.0, ge=5.0, le=30.0)  # whisper encoder window; longer speech gets a longer one
    # the words that end a turn are decoded after a text of everyday requests (engine.asr.REQUEST_HINT), so that
    # whisper tiny writes the words of a request ("timer", "clipboard") where it would guess others
    request_hint: bool = True


class TTSSettings(_Section):
    engine: Literal["piper", "espeak"] = "piper"
    voice: str = "piper-en-us-joe-medium"  # a model id, a path to a Piper .onnx, or an espeak voice name
    rate: float = Field(1.0, ge=0.5, le=2.0)  # 1.0 = the voice's natural speed
    volume: float = Field(1.0, ge=0.0, le=1.0)
    n_threads: int = Field(default_factory=lambda: default_threads("onnx"), ge=1, le=64)  # the Piper voice
    espeak_voice: str = "en-us"  # espeak-ng voice used when engine is espeak and voice names a Piper model


class CameraSettings(_Section):
    enabled: bool = False  # the camera stays off until the user turns it on
    device: str | int = 0  # index, or a path/URL that OpenCV can open
    store_frames: bool = False  # frames are never stored unless the user opts in
    multimodal_model: str = ""  # a multimodal GGUF (model id or path); empty = none
    multimodal_projector: str = ""  # its mmproj GGUF
    multimodal_chat_format: Literal[
        "auto", "qwen2.5-vl", "moondream", "minicpm-v-2.6", "llava-1.5", "llava-1.6", "nanollava", "gemma4", "mtmd"
    ] = "auto"  # which llama-cpp-python chat handler; auto = guessed from the model file name
    sample_fps_speaking: float = Field(1.0, gt=0.0, le=10.0)  # perception rate while the user speaks
    sample_fps_quiet: float = Field(0.3, gt=0.0, le=10.0)  # perception rate otherwise
    scene_change_threshold: float = Field(12.0, gt=0.0, le=255.0)  # mean grey-level change that forces a sample
    facing_max_yaw_deg: float = Field(30.0, gt=0.0, le=90.0)  # head turned further than this = not facing
    away_after_s: float = Field(4.0, ge=0.0, le=600.0)  # no face this long = the user is away
    ocr_enabled: bool = True  # read text held up to the camera
    face_model: str = "centerface"  # a vision model id or a path to the .onnx
    retry_interval_s: float = Field(2.0, gt=0.0, le=300.0)  # wait between attempts to reopen a lost camera


class ConversationSettings(_Section):
    assistant_name: str = "Venus"
    user_name: str = ""
    # ISO 639-1 code of the conversation: whisper (a multilingual one when not "en"), the voice and the language the
    # answers are asked in follow it; English word cues are off for other languages (engine/runtime/language.py)
    language: str = Field("en", pattern=r"^[a-z]{2,3}$")
    duplex_sensitivity: float = Field(0.5, ge=0.0, le=1.0)  # higher = yields to overlapping speech sooner
    end_of_turn_silence_ms: int = Field(500, ge=100, le=5000)
    # what tells a finished turn from a pause: "llm" = the chat model's own reading of the words (a local model;
    # with a remote one the word model decides), "lexical" = the word model and its rules only
    end_of_turn_model: Literal["llm", "lexical"] = "llm"
    # learn the user's voice from their first utterances and score speech over Venus against it (a cue
    # that another person or the TV is talking, not the user)
    voice_matching: bool = True
    # people the user lives or works with ("Anna", "Tom"): speech over Venus that calls one of them is for
    # them, and whisper is primed to hear their names (it hears "Dad" as "bad" without a hint)
    household_names: list[str] = Field(default_factory=list, json_schema_extra={"comma_list": True})


class ToolPermission(_Section):
    name: str
    level: Literal["allow", "ask", "off"]


class HarnessSettings(_Section):
    workers: int = Field(4, ge=1, le=64)  # background task threads
    task_timeout_s: float = Field(120.0, gt=0)
    confirm_timeout_s: float = Field(60.0, gt=0)
    allowed_folders: list[str] = Field(default_factory=list)  # file tools stay inside these
    permissions: dict[str, Literal["allow", "ask", "off"]] = Field(default_factory=dict)  # per-tool overrides
    mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=dict)  # the usual `mcpServers` shape
    max_tool_output_bytes: int = Field(1_000_000, ge=1024)  # an MCP tool's result is cut here, marked "truncated"


class UISettings(_Section):
    theme: Literal["system", "light", "dark"] = "system"
    first_run_done: bool = False


class Settings(_Section):
    """All of Venus's settings; `schema_version` lets older files be migrated forward."""

    schema_version: int = SCHEMA_VERSION
    llm: LLMSettings = Field(default_factory=LLMSettings)
    audio: AudioSettings = Field(default_factory=AudioSettings)
    vad: VADSettings = Field(default_factory=VADSettings)
    asr: ASRSettings = Field(default_factory=ASRSettings)
    tts: TTSSettings = Field(default_factory=TTSSettings)
    camera: CameraSettings = Field(default_factory=CameraSettings)
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    harness: HarnessSettings = Field(default_factory=HarnessSettings)
    ui: UISettings = Field(default_factory=UISettings)


# Each migration takes the raw dict of version N and returns version N+1.
def _v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    # v1 kept the voice under "voice" at the top level and the model path under "model_path".
    raw = dict(raw)
    if "voice" in raw:
        raw.setdefault("tts", {})["voice"] = raw.pop("voice")
    if "model_path" in raw:
        raw.setdefault("llm", {})["model"] = raw.pop("model_path")
    raw["schema_version"] = 2
    return raw


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


class LoadResult(BaseModel):
    """What `load_settings` found: the settings in force and, if the file was bad, why and where the copy is."""

    settings: Settings
    problem: str | None = None
    backup: Path | None = None
    migrated_from: int | None = None


def migrate(raw: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """Bring a raw settings dict up to SCHEMA_VERSION; returns it and the version it started at (None if current)."""
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"schema_version must be a positive integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise ValueError(f"schema_version {version} is newer than this Venus understands ({SCHEMA_VERSION})")
    start = version
    while version < SCHEMA_VERSION:
        raw = MIGRATIONS[version](raw)
        version = raw["schema_version"]
    return raw, (start if start != SCHEMA_VERSION else None)


def _describe(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"]) or "(top level)"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


def _kept_copy(path: Path) -> tuple[Path, bool]:
    """A copy of the broken file beside it: the one already kept for these same bytes, else a new one.

    The broken file itself stays where the user edits it; the copy only guards the hand edits against the
    next save from the app. Returns the copy and whether it was made now.
    """
    data = path.read_bytes()
    for earlier in sorted(path.parent.glob(f"{path.name}.bad-*")):
        try:
            if earlier.read_bytes() == data:
                return earlier, False
        except OSError:
            continue
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup, n = path.with_name(f"{path.name}.bad-{stamp}"), 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.bad-{stamp}-{n}")
    shutil.copy2(path, backup)
    return backup, True


def load_settings(path: Path | None = None, *, keep_copy: bool = True) -> LoadResult:
    """Read settings; a missing file gives defaults, a bad one gives defaults and the reason.

    A bad file is left in place and copied aside once per distinct content (`keep_copy`; `venus doctor` only
    reads, so it passes False), so launching again and again with the same mistake leaves one copy.
    """
    path = path or paths.settings_file()
    if not path.exists():
        return LoadResult(settings=Settings())
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("the file must hold a JSON object")
        raw, migrated_from = migrate(raw)
        settings = Settings.model_validate(raw)
    except (ValueError, ValidationError) as exc:
        reason = _describe(exc) if isinstance(exc, ValidationError) else str(exc)
        problem = f"{path} is invalid ({reason}); Venus uses the default settings until it is fixed"
        if not keep_copy:
            return LoadResult(settings=Settings(), problem=problem)
        backup, new = _kept_copy(path)
        problem += f" (your file is also kept as {backup})"
        log.info("%s%s", problem, "" if new else "; the copy was made on an earlier launch")  # callers show it
        return LoadResult(settings=Settings(), problem=problem, backup=backup)
    if migrated_from is not None:
        save_settings(settings, path)
        log.info("migrated %s from schema %s to %s", path, migrated_from, SCHEMA_VERSION)
    return LoadResult(settings=settings, migrated_from=migrated_from)


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write settings atomically (temp file + rename), so a crash never leaves half a file."""
    path = path or paths.settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = settings.model_dump_json(indent=2)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path
