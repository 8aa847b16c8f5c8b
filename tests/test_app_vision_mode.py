"""The Camera settings page says which kind of vision is active."""

from __future__ import annotations

from app.settings_dialog import SettingsDialog, vision_mode
from engine.settings import Settings


def test_camera_page_names_the_active_vision(qtbot, tmp_path) -> None:
    settings = Settings()
    dialog = SettingsDialog(settings, settings_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    assert "no multimodal model" in dialog.vision_mode.text()
    assert dialog.vision_mode.accessibleName()
    settings.camera.multimodal_model = "/models/moondream2.gguf"
    assert "moondream2.gguf" in vision_mode(settings.camera)
    settings.camera.multimodal_model = ""
    settings.camera.ocr_enabled = False
    assert vision_mode(settings.camera) == "presence and facing the screen only"
