"""Settings: round trip, migration from an older schema, and a hand-broken file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import ValidationError

from engine import paths
from engine.settings import SCHEMA_VERSION, Settings, load_settings, save_settings


def test_round_trip_keeps_every_value() -> None:
    """A value changed in every section comes back: a section the file drops would fall back to its default."""
    s = Settings()
    s.llm.n_ctx = 8192
    s.audio.blocksize_ms = 30
    s.vad.threshold = 0.35
    s.asr.language = "de"
    s.tts.rate = 1.25
    s.camera.store_frames = True
    s.conversation.user_name = "Ada"
    s.harness.allowed_folders = ["/home/me/Documents"]
    s.harness.permissions = {"shell": "ask"}
    s.ui.theme = "dark"
    assert all(getattr(s, section) != getattr(Settings(), section) for section in Settings.model_fields
               if section != "schema_version")
    path = save_settings(s)
    assert path == paths.settings_file()
    loaded = load_settings()
    assert loaded.problem is None
    assert loaded.settings == s


def test_missing_file_gives_defaults() -> None:
    result = load_settings()
    assert result.settings == Settings() and result.problem is None


def test_migration_from_schema_1() -> None:
    # every value differs from its default, so a value the migration dropped cannot pass as the default
    old = {"schema_version": 1, "voice": "/voices/en_GB-alan-low.onnx", "model_path": "/models/x.gguf",
           "llm": {"n_ctx": 2048}}
    paths.settings_file().write_text(json.dumps(old))
    result = load_settings()
    assert result.problem is None and result.migrated_from == 1
    assert result.settings.tts.voice == "/voices/en_GB-alan-low.onnx"
    assert result.settings.llm.model == "/models/x.gguf"
    assert result.settings.llm.n_ctx == 2048
    on_disk = json.loads(paths.settings_file().read_text())
    assert on_disk["schema_version"] == SCHEMA_VERSION, "the migrated file is written back"


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ('{"llm": {"n_ctx": "huge"}}', "llm.n_ctx"),
        ('{"vad": {"threshold": 7}}', "vad.threshold"),
        ('{"tts": {"engine": "robot"}}', "tts.engine"),
        ('{"llm": {"n_ctx": 4096, ', "Expecting"),  # truncated JSON
        ('[1, 2, 3]', "JSON object"),
        ('{"schema_version": 99}', "newer than this Venus"),
    ],
)
def test_broken_file_starts_on_defaults_keeps_a_copy_and_names_the_field(content: str, field: str) -> None:
    paths.settings_file().write_text(content)
    result = load_settings()
    assert result.settings == Settings()
    assert field in result.problem
    assert result.backup is not None and result.backup.read_text() == content
    assert str(result.backup) in result.problem and "default settings until it is fixed" in result.problem
    assert paths.settings_file().read_text() == content, "the broken file stays where the user edits it"


def test_a_broken_file_is_copied_aside_once_not_on_every_launch() -> None:
    """Launching again and again with the same mistake keeps one copy; a new mistake gets its own; reading does not."""
    settings_file = paths.settings_file()
    settings_file.write_text('{"llm": {"n_ctx": "huge"}}')
    first = load_settings()
    assert [load_settings().backup for _ in range(3)] == [first.backup] * 3
    assert sorted(settings_file.parent.glob("settings.json.bad-*")) == [first.backup]
    settings_file.write_text('{"llm": {"n_ctx": "enormous"}}')
    second = load_settings()
    assert second.backup != first.backup and second.backup.read_text() == '{"llm": {"n_ctx": "enormous"}}'
    assert first.backup.read_text() == '{"llm": {"n_ctx": "huge"}}'
    settings_file.write_text('{"vad": {"threshold": 7}}')
    looked = load_settings(keep_copy=False)
    assert "vad.threshold" in looked.problem and looked.backup is None
    assert len(list(settings_file.parent.glob("settings.json.bad-*"))) == 2


def test_secrets_have_no_place_in_the_file() -> None:
    with pytest.raises(ValidationError):
        Settings.model_validate({"llm": {"api_key": "sk-123"}})


def test_assignment_is_validated_up_front() -> None:
    s = Settings()
    with pytest.raises(ValidationError):
        s.llm.temperature = -1


def test_doctor_reports_a_broken_settings_file_and_copies_nothing() -> None:
    paths.settings_file().write_text('{"asr": {"beam_size": 0}}')
    proc = subprocess.run([sys.executable, "-m", "app.cli", "doctor"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # it ran to the end on the defaults
    line = next(line for line in proc.stdout.splitlines() if " settings:" in line)
    assert line.startswith("[warn]") and "asr.beam_size" in line and "default settings until it is fixed" in line
    assert "fix: fix the field named in" in proc.stdout
    assert list(paths.settings_file().parent.glob("settings.json.bad-*")) == [], "the doctor only reads"
