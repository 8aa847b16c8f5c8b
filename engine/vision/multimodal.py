"""Multimodal GGUF models (Qwen2.5-VL, moondream, MiniCPM-V, LLaVA ...) through llama-cpp-python's chat handlers.

Configured by `camera.multimodal_model` and `camera.multimodal_projector`; everything about the files is
checked when the model is loaded, so a wrong path or a text-only GGUF fails with the setting named.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import BackendError, ConfigError, ModelCorrupt, ModelNotFound
from engine.timeline.events import Event, VideoObservation
from engine.vision.frames import FrameStore

GGUF_MAGIC = b"GGUF"

# chat format -> llama_cpp.llama_chat_format handler class name
CHAT_HANDLERS: dict[str, str] = {
    "qwen2.5-vl": "Qwen25VLChatHandler",
    "moondream": "MoondreamChatHandler",
    "minicpm-v-2.6": "MiniCPMv26ChatHandler",
    "llava-1.5": "Llava15ChatHandler",
    "llava-1.6": "Llava16ChatHandler",
    "nanollava": "NanoLlavaChatHandler",
    "gemma4": "Gemma4ChatHandler",
    "mtmd": "MTMDChatHandler",
}

# substrings of a model file name (lower case) -> chat format, most specific first
_NAME_HINTS: tuple[tuple[str, str], ...] = (
    ("qwen2.5-vl", "qwen2.5-vl"),
    ("qwen2.5vl", "qwen2.5-vl"),
    ("qwen2_5_vl", "qwen2.5-vl"),
    ("moondream", "moondream"),
    ("minicpm", "minicpm-v-2.6"),
    ("nanollava", "nanollava"),
    ("llava-v1.6", "llava-1.6"),
    ("llava-1.6", "llava-1.6"),
    ("llava", "llava-1.5"),
    ("gemma-4", "gemma4"),
    ("gemma4", "gemma4"),
)


@dataclass(frozen=True)
class MultimodalOptions:
    """A multimodal model and how to run it."""

    model: str  # a model id or a path to the language-model GGUF
    projector: str  # a model id or a path to its mmproj GGUF
    chat_format: str = "auto"  # a key of CHAT_HANDLERS, or auto = guessed from the model file name
    n_ctx: int = 4096  # images take several hundred tokens each
    n_threads: int = 2  # CPU threads for decoding
    max_tokens: int = 96  # longest answer about a frame

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model is empty: set camera.multimodal_model to a multimodal GGUF")
        if not self.projector:
            raise ValueError("projector is empty: set camera.multimodal_projector to the model's mmproj GGUF")
        if self.chat_format != "auto" and self.chat_format not in CHAT_HANDLERS:
            raise ValueError(
                f"chat_format {self.chat_format!r} is not one of auto, {', '.join(CHAT_HANDLERS)}"
            )
        if self.n_ctx < 512 or self.n_threads < 1 or self.max_tokens < 1:
            raise ValueError("n_ctx must be at least 512, n_threads and max_tokens at least 1")


def guess_chat_format(model_path: Path) -> str:
    """The chat format for a model file, from its name; ConfigError when the name gives no hint."""
    name = model_path.name.lower()
    for hint, chat_format in _NAME_HINTS:
        if hint in name:
            return chat_format
    raise ConfigError(
        f"cannot tell which chat format {model_path.name} uses",
        fix=f"set camera.multimodal_chat_format to one of: {', '.join(CHAT_HANDLERS)}",
    )


def _check_gguf(path: Path, setting: str) -> None:
    if not path.is_file():
        raise ModelNotFound(
            f"{setting} points to {path}, which does not exist", fix=f"fix {setting} in settings"
        )
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ModelCorrupt(
            f"{path} (from {setting}) is not a GGUF file", fix=f"point {setting} at a .gguf file"
        )


def _resolve(model: str) -> Path:
    from engine.models.registry import resolve

    return resolve(model, check=True)


def image_data_uri(jpeg: bytes) -> str:
    """A JPEG as a data: URI, the form llama-cpp-python's chat handlers accept for images."""
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def context_images(events: Iterable[Event], frames: FrameStore, max_images: int = 2) -> list[tuple[int, str]]:
    """(seq, data URI) of the newest frames still held for observations among `events`, oldest first.

    The context builder puts each image where its VideoObservation sits on the timeline.
    """
    if max_images < 1:
        raise ValueError(f"max_images must be at least 1, got {max_images}")
    found: list[tuple[int, str]] = []
    for event in reversed(list(events)):
        if isinstance(event, VideoObservation) and event.frame_ref:
            jpeg = frames.jpeg(event.frame_ref)
            if jpeg is not None:
                found.append((event.seq, image_data_uri(jpeg)))
                if len(found) == max_images:
                    break
    return found[::-1]


class MultimodalModel:
    """A loaded multimodal model that answers questions about JPEG frames (loads in `load`, not __init__)."""

    def __init__(self, options: MultimodalOptions) -> None:
        self.options = options
        self.model_path = _resolve(options.model)
        self.projector_path = _resolve(options.projector)
        _check_gguf(self.model_path, "camera.multimodal_model")
        _check_gguf(self.projector_path, "camera.multimodal_projector")
        self.chat_format = (
            guess_chat_format(self.model_path) if options.chat_format == "auto" else options.chat_format
        )
        self._llm: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The model file name, for settings and notices."""
        return self.model_path.name

    def load(self) -> None:
        """Load the model and its projector; raises ModelCorrupt when the projector does not fit the model."""
        if self._llm is not None:
            return
        try:
            import llama_cpp
            from llama_cpp import llama_chat_format
        except ImportError as exc:
            raise BackendError(
                "llama-cpp-python is not installed", fix="install it (see the Makefile)"
            ) from exc
        handler_cls = getattr(llama_chat_format, CHAT_HANDLERS[self.chat_format])
        handler = handler_cls(clip_model_path=str(self.projector_path), verbose=False)
        try:
            llm = llama_cpp.Llama(
                model_path=str(self.model_path),
                chat_handler=handler,
                n_ctx=self.options.n_ctx,
                n_threads=self.options.n_threads,
                verbose=False,
            )
        except ValueError as exc:
            raise ModelCorrupt(
                f"{self.model_path} could not be loaded: {exc}", fix="check camera.multimodal_model"
            ) from exc
        try:
            handler._init_mtmd_context(
                llm
            )  # load the projector now, so a mismatch shows at start, not mid-answer
        except ValueError as exc:
            llm.close()
            raise ModelCorrupt(
                f"the projector {self.projector_path} does not work with {self.model_path.name}: {exc}",
                fix="set camera.multimodal_projector to the mmproj file released with this model",
            ) from exc
        self._llm = llm

    def ask(self, question: str, jpeg_frames: list[bytes], system: str | None = None) -> str:
        """Answer a question about the frames (oldest first), loading the model on first use."""
        if not jpeg_frames:
            raise ValueError("ask() needs at least one frame")
        self.load()
        content: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": image_data_uri(j)}} for j in jpeg_frames
        ]
        content.append({"type": "text", "text": question})
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": content})
        with self._lock:
            try:
                reply = self._llm.create_chat_completion(
                    messages=messages, max_tokens=self.options.max_tokens, temperature=0.2
                )
            except Exception as exc:
                raise BackendError(f"the multimodal model {self.name} failed: {exc}") from exc
        return str(reply["choices"][0]["message"]["content"] or "").strip()

    def close(self) -> None:
        """Free the model."""
        if self._llm is not None:
            self._llm.close()
            self._llm = None
