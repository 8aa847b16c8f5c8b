"""The Help menu's texts: keyboard shortcuts and About."""

from __future__ import annotations

import html

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Ctrl+N", "New chat"),
    ("Ctrl+F", "Search conversations"),
    ("F2", "Rename the selected conversation"),
    ("Ctrl+Shift+E", "Export the conversation as Markdown"),
    ("Ctrl+L", "Type a message"),
    ("F9 (hold), or click Push to talk", "Talk; a click keeps listening until the next click"),
    ("Esc", "Stop Venus talking"),
    ("Ctrl+M", "Mute or unmute the microphone"),
    ("Ctrl+K", "Camera on or off"),
    ("Ctrl+C", "Copy the selected message"),
    ("Ctrl+,", "Settings"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
)


def shortcuts_html() -> str:
    """The shortcuts as a two-column table."""
    rows = "".join(f"<tr><td><b>{html.escape(keys)}</b>&nbsp;&nbsp;</td><td>{html.escape(what)}</td></tr>"
                   for keys, what in SHORTCUTS)
    return f"<table cellpadding='3'>{rows}</table>"


def about_html(assistant_name: str, version: str) -> str:
    """Who Venus is, in a few lines."""
    return (f"<h3>{html.escape(assistant_name)} {html.escape(version)}</h3>"
            "<p>A local-first, full-duplex voice and video assistant. It listens and watches continuously, "
            "answers with synthesized speech, yields the moment you cut in and runs tasks in the background.</p>"
            "<p>Everything runs on this computer with small default models; conversations are kept in a "
            "local database and can be exported as Markdown or JSON.</p>")
