"""Reading text in a frame with RapidOCR (PP-OCR detection and recognition models shipped in its wheel)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from engine.errors import ModelNotFound
from engine.threads import default_threads


@dataclass(frozen=True)
class OcrOptions:
    """What counts as text worth reporting."""

    min_confidence: float = 0.6  # recognised lines below this are dropped
    min_chars: int = 2  # shorter lines are usually noise (a logo, a stray mark)
    threads: int = field(default_factory=lambda: default_threads("onnx"))  # onnxruntime threads for OCR

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"min_confidence must be in [0, 1], got {self.min_confidence}")
        if self.min_chars < 1:
            raise ValueError(f"min_chars must be at least 1, got {self.min_chars}")
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {self.threads}")


@dataclass(frozen=True)
class TextLine:
    """One line of recognised text, its confidence and its box corners in frame pixels."""

    text: str
    confidence: float
    box: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class OcrResult:
    """All lines read in a frame, top to bottom."""

    lines: tuple[TextLine, ...] = ()

    @property
    def text(self) -> str:
        """The lines joined with newlines."""
        return "\n".join(line.text for line in self.lines)


def normalise_text(text: str) -> str:
    """Lower case, letters and digits only: two readings of the same sign compare equal."""
    return re.sub(r"[^0-9a-z]+", "", text.lower())


class TextReader(Protocol):
    """Anything that reads text from a BGR frame."""

    def read(self, frame_bgr: np.ndarray) -> OcrResult:
        """The text in the frame (empty when none)."""
        ...


def _plausible_shape(corners: tuple[tuple[float, float], ...], glyphs: int) -> bool:
    # Printed glyphs are at least ~0.45 of their height wide; a short "word" in a squat box is usually
    # texture (brickwork, foliage) that the recogniser turned into digits.
    xs, ys = [x for x, _ in corners], [y for _, y in corners]
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    return height > 0 and width / height >= 0.45 * glyphs


class RapidTextReader:
    """RapidOCR on onnxruntime; the models load once, on first use, from the installed package."""

    def __init__(self, options: OcrOptions | None = None) -> None:
        self.options = options or OcrOptions()
        self._engine = None
        self._lock = threading.Lock()  # the engine is not safe to share between threads

    def _load(self):
        if self._engine is None:
            try:
                from rapidocr import RapidOCR
            except ImportError as exc:
                raise ModelNotFound(
                    "the OCR package rapidocr is not installed",
                    fix="pip install 'rapidocr>=3.4' (its models ship inside the package)",
                ) from exc
            threads = self.options.threads
            self._engine = RapidOCR(params={
                "Global.log_level": "warning",
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            })
        return self._engine

    def read(self, frame_bgr: np.ndarray) -> OcrResult:
        """The text in the frame, top to bottom; lines under the confidence or length limits are dropped."""
        with self._lock:
            engine = self._load()
            output = engine(np.ascontiguousarray(frame_bgr))
        found = zip(output.boxes, output.txts, output.scores, strict=True) if output.boxes is not None else ()
        lines = []
        for box, text, score in found:
            text = str(text).strip()
            confidence = float(score)
            glyphs = normalise_text(text).replace(" ", "")
            if confidence < self.options.min_confidence or len(glyphs) < self.options.min_chars:
                continue
            if len(set(glyphs)) < 2:  # one glyph repeated ("0000", "|||") is texture read as text, not text
                continue
            corners = tuple((float(x), float(y)) for x, y in box)
            if len(glyphs) < 6 and not _plausible_shape(corners, len(glyphs)):
                continue
            lines.append(TextLine(text=text, confidence=confidence, box=corners))
        lines.sort(key=lambda line: (min(y for _, y in line.box), min(x for x, _ in line.box)))
        return OcrResult(lines=tuple(lines))
