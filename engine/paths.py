"""Where Venus keeps its files: per-user folders from platformdirs, each overridable by an environment variable."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "venus"


def _dir(env: str, default: str) -> Path:
    path = Path(os.environ.get(env) or default).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir() -> Path:
    """Settings live here (VENUS_CONFIG_DIR overrides)."""
    return _dir("VENUS_CONFIG_DIR", platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """Conversations database and task state live here (VENUS_DATA_DIR overrides)."""
    return _dir("VENUS_DATA_DIR", platformdirs.user_data_dir(APP_NAME))


def models_dir() -> Path:
    """Model files live here (VENUS_MODELS_DIR overrides); shared by every profile on the machine user."""
    return _dir("VENUS_MODELS_DIR", os.path.join(platformdirs.user_data_dir(APP_NAME), "models"))


def log_dir() -> Path:
    """Rotating log files live here (VENUS_LOG_DIR overrides)."""
    return _dir("VENUS_LOG_DIR", platformdirs.user_log_dir(APP_NAME))


def cache_dir() -> Path:
    """Downloaded wheels and partial downloads live here (VENUS_CACHE_DIR overrides)."""
    return _dir("VENUS_CACHE_DIR", platformdirs.user_cache_dir(APP_NAME))


def settings_file() -> Path:
    """The one settings file."""
    return config_dir() / "settings.json"


def database_file() -> Path:
    """The SQLite timeline and task database."""
    return data_dir() / "venus.db"


def assets_dir() -> Path:
    """Read-only data that ships with Venus (intent templates): VENUS_ASSETS_DIR, else the checkout's assets/."""
    override = os.environ.get("VENUS_ASSETS_DIR")
    return Path(override).expanduser() if override else Path(__file__).resolve().parent.parent / "assets"
