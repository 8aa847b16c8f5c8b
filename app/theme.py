"""Light and dark palettes; 'system' follows the OS colour scheme and keeps following it when it changes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

THEMES = ("system", "light", "dark")


def system_prefers_dark() -> bool:
    """True when the OS reports a dark colour scheme (Unknown counts as light)."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def _palette(dark: bool) -> QPalette:
    base, text, window, alt, accent = (
        ("#1e1f22", "#e8e8e8", "#2b2d30", "#3a3d41", "#4f8cff") if dark
        else ("#ffffff", "#1b1b1b", "#f3f3f3", "#e9eef6", "#2f6fdb")
    )
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: window, QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.Base: base, QPalette.ColorRole.AlternateBase: alt,
        QPalette.ColorRole.Text: text, QPalette.ColorRole.Button: window,
        QPalette.ColorRole.ButtonText: text, QPalette.ColorRole.Highlight: accent,
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: base,
        QPalette.ColorRole.ToolTipText: text, QPalette.ColorRole.PlaceholderText: "#8a8a8a",
        QPalette.ColorRole.Link: accent,
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#8a8a8a"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#8a8a8a"))
    return palette


def resolve_dark(theme: str) -> bool:
    """Whether `theme` ('system', 'light' or 'dark') means dark right now."""
    if theme not in THEMES:
        raise ValueError(f"ui.theme must be one of {', '.join(THEMES)}, got {theme!r}")
    return system_prefers_dark() if theme == "system" else theme == "dark"


def apply_theme(app: QApplication, theme: str) -> bool:
    """Set the app palette for `theme`; returns True when dark. 'system' re-applies on OS scheme changes."""
    dark = resolve_dark(theme)
    app.setStyle("Fusion")
    app.setPalette(_palette(dark))
    app.setProperty("venusTheme", theme)
    app.setProperty("venusDark", dark)
    hints = QGuiApplication.styleHints()
    if not app.property("venusFollowsScheme"):
        hints.colorSchemeChanged.connect(lambda _scheme: _follow_system(app))
        app.setProperty("venusFollowsScheme", True)
    return dark


def _follow_system(app: QApplication) -> None:
    if app.property("venusTheme") == "system":
        apply_theme(app, "system")
