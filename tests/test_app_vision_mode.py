"""The Camera settings page says which kind of vision is active."""

from __future__ import annotations

import pytest

from app.settings_dialog import SettingsDialog
from engine.settings import Settings


@pytest.mark.parametrize(
    ("camera", "shown", "not_shown"),
    [
        ({}, "text reading (OCR); no multimodal model", "moondream2.gguf"),
        ({"multimodal_model": "/models/moondream2.gguf"}, "multimodal model (moondream2.gguf)", "no multimodal"),
        ({"ocr_enabled": False}, "presence and facing the screen only", "OCR"),
    ],
)
def test_camera_page_names_the_active_vision(qtbot, tmp_path, camera, shown, not_shown) -> None:
    """The page's line follows the settings it was opened with: OCR only, a multimodal model, or presence only."""
    settings = Settings()
    settings.camera = settings.camera.model_copy(update=camera)
    dialog = SettingsDialog(settings, settings_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    text = dialog.vision_mode.text()
    assert text.startswith("Vision in use: ") and shown in text and not_shown not in text
    assert dialog.vision_mode.accessibleName()
