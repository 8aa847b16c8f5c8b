"""Reading text held up to the camera with RapidOCR (models from its wheel, nothing downloaded)."""

from __future__ import annotations

import pytest
from vision_scenes import CARD_WORDS_NEEDED, card_words_read, scenes

from engine.vision import OcrOptions, RapidTextReader

pytest.importorskip("rapidocr", reason="rapidocr provides the OCR models")


@pytest.fixture(scope="module")
def reader() -> RapidTextReader:
    return RapidTextReader()


def test_card_text_is_read_back_line_by_line(reader):
    """Most of the card's words come back, each printed line as its own line, the top one first."""
    result = reader.read(scenes()["text_card"])
    assert card_words_read(result.text) >= CARD_WORDS_NEEDED, result.text
    assert len(result.lines) == 2, [line.text for line in result.lines]
    top, bottom = result.lines
    assert card_words_read(top.text, 0) >= 1 and card_words_read(top.text, 1) == 0, top.text
    assert card_words_read(bottom.text, 1) >= 2 and card_words_read(bottom.text, 0) == 0, bottom.text
    assert top.box[0][1] < bottom.box[0][1]


@pytest.mark.parametrize("scene", ["empty_room", "frontal", "turned"])
def test_photographs_without_text_read_as_empty(reader, scene):
    assert reader.read(scenes()[scene]).text == ""


def test_a_stricter_confidence_drops_lines(reader):
    """A line read below `min_confidence` is dropped; the lines above it stay."""
    lines = reader.read(scenes()["text_card"]).lines
    assert lines and all(line.confidence >= OcrOptions().min_confidence for line in lines)
    weakest = min(line.confidence for line in lines)
    assert weakest < 1.0, "every line read with full confidence: nothing to drop"
    stricter = RapidTextReader(OcrOptions(min_confidence=min(1.0, weakest + 1e-6)))
    kept = stricter.read(scenes()["text_card"]).lines
    assert [line.text for line in kept] == [line.text for line in lines if line.confidence > weakest]


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="min_confidence"):
        OcrOptions(min_confidence=1.5)
    with pytest.raises(ValueError, match="threads"):
        OcrOptions(threads=0)


def test_importing_vision_drops_opencvs_qt_variables_but_keeps_the_users():
    """A non-headless OpenCV wheel (pulled in by some packages) points QT_QPA_* at its bundled Qt5 plugins on import.

    That is simulated here (the headless wheel may be the one installed) by setting the variables to a path
    inside OpenCV's package, as its config does; a user's own value elsewhere must survive.
    """
    import os
    import subprocess
    import sys

    import cv2

    cv2_dir = os.path.dirname(os.path.abspath(cv2.__file__))
    code = (
        "import os, sys, rapidocr, engine.vision; "
        "print(os.environ.get('QT_QPA_PLATFORM_PLUGIN_PATH', 'unset'), os.environ.get('QT_QPA_FONTDIR', 'unset')); "
        "print(any(name.startswith('PySide6') for name in sys.modules))"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "QT_QPA_PLATFORM_PLUGIN_PATH": os.path.join(cv2_dir, "qt", "plugins"),
        "QT_QPA_FONTDIR": "/usr/share/fonts",
    }
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["unset", "/usr/share/fonts", "False"], out.stdout + out.stderr
