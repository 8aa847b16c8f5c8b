"""Camera scenes for the vision tests, built from real photographs that ship inside scikit-image's wheel.

astronaut.png (Eileen Collins, a frontal face) gives the frontal, mirrored and close-up scenes;
camera.png (the cameraman, looking sideways into his camera) is a real head turned away; coffee.png and
brick.png are scenes with nobody in them; a card with printed text is rendered for OCR.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.vision._cv import cv2

FRAME_SIZE = (640, 480)  # width, height of every synthetic camera frame
CARD_TEXT = ("MILK 2 LITRES", "best before 12 May")
# the card's words of two or more characters, per line (a lone "2" would match inside any "12")
CARD_WORDS = (("milk", "litres"), ("best", "before", "12", "may"))
CARD_WORDS_NEEDED = 4  # of the six: a reading has to get most of the card, not spell it as one CPU does


def _photo(name: str) -> np.ndarray:
    data = pytest.importorskip(
        "skimage.data", reason="scikit-image (dev extra) provides the test photographs"
    )
    image = getattr(data, name)()
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(image, cv2.COLOR_RGB2BGR)


def fit(image: np.ndarray, size: tuple[int, int] = FRAME_SIZE, background: int = 90) -> np.ndarray:
    """Scale an image into a camera-sized frame without distorting it (grey bars fill the rest)."""
    width, height = size
    scale = min(width / image.shape[1], height / image.shape[0])
    resized = cv2.resize(
        image, (round(image.shape[1] * scale), round(image.shape[0] * scale)), interpolation=cv2.INTER_AREA
    )
    frame = np.full((height, width, 3), background, np.uint8)
    top, left = (height - resized.shape[0]) // 2, (width - resized.shape[1]) // 2
    frame[top : top + resized.shape[0], left : left + resized.shape[1]] = resized
    return frame


def card_words_read(text: str, line: int | None = None) -> int:
    """How many of the card's words (of one line, or all) appear in `text`, compared letters and digits only."""
    from engine.vision import normalise_text

    read = normalise_text(text)
    words = CARD_WORDS[line] if line is not None else CARD_WORDS[0] + CARD_WORDS[1]
    return sum(normalise_text(word) in read for word in words)


def text_card() -> np.ndarray:
    """A dark room with a white card of printed text held up in front of the camera."""
    frame = np.full((FRAME_SIZE[1], FRAME_SIZE[0], 3), 40, np.uint8)
    cv2.rectangle(frame, (120, 160), (520, 320), (245, 245, 240), -1)
    cv2.putText(frame, CARD_TEXT[0], (140, 230), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (20, 20, 20), 3, cv2.LINE_AA)
    cv2.putText(frame, CARD_TEXT[1], (140, 290), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (20, 20, 20), 2, cv2.LINE_AA)
    return frame


def scenes() -> dict[str, np.ndarray]:
    """Every named scene as a 640x480 BGR frame."""
    astronaut = _photo("astronaut")
    return {
        "frontal": fit(astronaut),
        "mirrored": fit(astronaut[:, ::-1]),
        "close_up": fit(astronaut[20:240, 110:340]),
        "turned": fit(_photo("camera")),
        "turned_mirrored": fit(_photo("camera")[:, ::-1]),
        "empty_room": fit(_photo("coffee")),
        "empty_wall": fit(_photo("brick")),
        "text_card": text_card(),
    }


# scene -> (person present, facing the screen)
EXPECTED_ATTENTION = {
    "frontal": (True, True),
    "mirrored": (True, True),
    "close_up": (True, True),
    "turned": (True, False),
    "turned_mirrored": (True, False),
    "empty_room": (False, False),
    "empty_wall": (False, False),
    "text_card": (False, False),
}


def write_video(path: Path, segments: list[tuple[np.ndarray, float]], fps: float = 10.0) -> Path:
    """Write an MJPG AVI that shows each frame for its number of seconds; returns the path."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, FRAME_SIZE)
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    for frame, seconds in segments:
        for _ in range(round(seconds * fps)):
            writer.write(frame)
    writer.release()
    return path
