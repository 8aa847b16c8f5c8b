"""Light and dark themes: a palette, one type scale and one spacing scale, applied as one style sheet.

'system' follows the OS colour scheme and keeps following it when it changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

THEMES = ("system", "light", "dark")

SPACE = (4, 8, 12, 16, 24)  # the only gaps and paddings used (px)
TYPE_SCALE = {"small": 12, "body": 14, "title": 16, "heading": 20}  # the only font sizes used (px)


@dataclass(frozen=True)
class Colours:
    """One theme's colours."""

    base: str  # text fields and lists
    window: str  # the window behind panels
    panel: str  # side panels
    alt: str  # the assistant's bubbles
    text: str
    muted: str  # secondary text
    border: str
    accent: str


LIGHT = Colours(base="#ffffff", window="#f4f5f7", panel="#fbfbfc", alt="#eef1f6", text="#1d1f23",
                muted="#6b7280", border="#dfe2e8", accent="#2f6fdb")
DARK = Colours(base="#1b1c1f", window="#141517", panel="#1f2024", alt="#2a2d33", text="#e6e7ea",
               muted="#9aa0aa", border="#33363c", accent="#5b8fff")


def system_prefers_dark() -> bool:
    """True when the OS reports a dark colour scheme (Unknown counts as light)."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def _palette(dark: bool) -> QPalette:
    c = DARK if dark else LIGHT
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: c.window, QPalette.ColorRole.WindowText: c.text,
        QPalette.ColorRole.Base: c.base, QPalette.ColorRole.AlternateBase: c.alt,
        QPalette.ColorRole.Text: c.text, QPalette.ColorRole.Button: c.panel,
        QPalette.ColorRole.ButtonText: c.text, QPalette.ColorRole.Highlight: c.accent,
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: c.base,
        QPalette.ColorRole.ToolTipText: c.text, QPalette.ColorRole.PlaceholderText: c.muted,
        QPalette.ColorRole.Link: c.accent, QPalette.ColorRole.Mid: c.border,
        QPalette.ColorRole.Midlight: c.border,
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#8a8a8a"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#8a8a8a"))
    return palette


def style_sheet(dark: bool) -> str:
    """The app's style sheet: the type scale, the spacing scale and the theme's colours in one place."""
    c = DARK if dark else LIGHT
    s, t = SPACE, TYPE_SCALE
    return f"""
QWidget {{ font-size: {t['body']}px; }}
QMainWindow, QWidget#central {{ background: {c.window}; }}
QFrame#sidePanel, QFrame#rightPanel {{ background: {c.panel}; border: 1px solid {c.border}; border-radius: 12px; }}
QFrame#sidePanel QLabel, QFrame#rightPanel QLabel, QScrollArea#tasksPanel, QWidget#tasksBody {{
    background: transparent; border: none; }}
QLabel#panelTitle {{ font-size: {t['title']}px; font-weight: 600; }}
QLabel#conversationTitle {{ font-size: {t['heading']}px; font-weight: 600; }}
QLabel#sectionHeader {{ font-size: {t['small']}px; font-weight: 600; color: {c.muted}; text-transform: uppercase; }}
QLabel#mutedText, QLabel#captions {{ color: {c.muted}; font-size: {t['small']}px; }}
QLabel#captions {{ font-size: {t['body']}px; font-style: italic; padding: {s[1]}px {s[2]}px;
    background: {c.alt}; border-radius: 8px; }}
QListView#conversation {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 12px;
    padding: {s[1]}px; }}
QListWidget#conversations {{ background: transparent; border: none; }}
QListWidget#conversations::item {{ padding: {s[1]}px {s[2]}px; border-radius: 8px; }}
QListWidget#conversations::item:selected {{ background: {c.accent}; color: #ffffff; }}
QLineEdit {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 8px; padding: {s[1]}px {s[2]}px; }}
QLineEdit:focus {{ border-color: {c.accent}; }}
QPushButton, QToolButton {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 8px;
    padding: {s[0]}px {s[2]}px; }}
QToolButton {{ padding: {s[0]}px {s[1]}px; }}
QPushButton:hover, QToolButton:hover {{ border-color: {c.accent}; }}
QPushButton:checked, QPushButton:pressed {{ background: {c.accent}; color: #ffffff; border-color: {c.accent}; }}
QPushButton#primaryButton {{ background: {c.accent}; color: #ffffff; border-color: {c.accent}; font-weight: 600; }}
QFrame#taskCard {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 10px; }}
QFrame#taskCard QLabel {{ background: transparent; }}
QFrame#taskCard QPushButton {{ padding: {s[0]}px {s[1]}px; }}
QLabel#taskTitle {{ font-weight: 600; }}
QLabel#stateIndicator {{ font-weight: 600; padding: {s[0]}px {s[2]}px; }}
QLabel#taskArguments {{ font-family: monospace; font-size: {t['small']}px; color: {c.muted}; }}
QProgressBar {{ border: none; background: {c.border}; border-radius: 3px; max-height: 6px; }}
QProgressBar::chunk {{ background: {c.accent}; border-radius: 3px; }}
QFrame#rightPanel QLabel#cameraImage {{ background: #000000; border-radius: 8px; color: {c.muted}; }}
QSplitter::handle {{ background: transparent; }}
QStatusBar {{ color: {c.muted}; }}
"""


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
    app.setStyleSheet(style_sheet(dark))
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
