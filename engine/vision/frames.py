"""Where sampled frames live for the LLM context: in memory by default, on disk only when the user opted in."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from engine.vision._cv import cv2

MEMORY_PREFIX = "mem:"


class FrameStore:
    """Keeps the last `capacity` sampled frames keyed by frame_ref; writes JPEGs only when `store_dir` is set."""

    def __init__(self, capacity: int = 8, store_dir: Path | None = None, jpeg_quality: int = 85) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        if not 1 <= jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be in [1, 100], got {jpeg_quality}")
        self.capacity = capacity
        self.store_dir = store_dir  # None = frames never touch the disk
        self.jpeg_quality = jpeg_quality
        self._frames: OrderedDict[str, np.ndarray] = OrderedDict()
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def put(self, frame_bgr: np.ndarray, t_ms: int) -> str:
        """Keep a frame; returns its frame_ref (a file path when storing to disk, else an in-memory key)."""
        ref = f"{MEMORY_PREFIX}{t_ms}-{next(self._counter)}"
        if self.store_dir is not None:
            self.store_dir.mkdir(parents=True, exist_ok=True)
            path = self.store_dir / f"frame-{t_ms:010d}-{ref.rsplit('-', 1)[1]}.jpg"
            if not cv2.imwrite(str(path), frame_bgr, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality]):
                raise OSError(f"could not write the frame to {path}; check that the folder is writable")
            ref = str(path)
        with self._lock:
            self._frames[ref] = frame_bgr.copy()
            while len(self._frames) > self.capacity:
                self._frames.popitem(last=False)
        return ref

    def get(self, ref: str) -> np.ndarray | None:
        """The frame for a ref: from memory, or read back from disk for a stored frame; None when gone."""
        with self._lock:
            frame = self._frames.get(ref)
        if frame is not None:
            return frame
        if not ref.startswith(MEMORY_PREFIX) and Path(ref).is_file():
            return cv2.imread(ref, cv2.IMREAD_COLOR)
        return None

    def jpeg(self, ref: str, quality: int | None = None) -> bytes | None:
        """The frame encoded as JPEG bytes (for a multimodal model), or None when gone."""
        frame = self.get(ref)
        if frame is None:
            return None
        ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality or self.jpeg_quality])
        return data.tobytes() if ok else None

    def clear(self) -> None:
        """Forget every frame held in memory (stored files stay: the user asked for them)."""
        with self._lock:
            self._frames.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._frames)
