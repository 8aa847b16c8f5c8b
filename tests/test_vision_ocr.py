"""Reading text held up to the camera with RapidOCR (models from its wheel, nothing downloaded)."""

from __future__ import annotations

import pytest
from vision_scenes import CARD_TEXT, scenes

from engine.vision import OcrOptions, RapidTextReader, normalise_text

pytest.importorskip("rapidocr", reason="rapidocr provides the OCR models")


@pytest.fixture(scope="module")
def reader() -> RapidTextReader:
    return RapidTextReader()


def test_card_text_is_read_back_line_by_line(reader):
    result = reader.read(scenes()["text_card"])
    assert [normalise_text(line.text) for line in result.lines] == [normalise_text(t) for t in CARD_TEXT]
    assert all(line.confidence >= 0.6 for line in result.lines)
    assert result.lines[0].box[0][1] < result.lines[1].box[0][1]  # top line first


@pytest.mark.parametrize("scene", ["empty_room", "frontal", "turned"])
def test_photographs_without_text_read_as_empty(reader, scene):
    assert reader.read(scenes()[scene]).text == ""


def test_a_stricter_confidence_drops_lines(reader):
    strict = RapidTextReader(OcrOptions(min_confidence=1.0))
    assert reader.read(scenes()["text_card"]).text
    assert len(strict.read(scenes()["text_card"]).lines) < 2


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
