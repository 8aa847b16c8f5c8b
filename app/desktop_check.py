"""Whether the desktop app's native parts load on this machine; a missing system library is named, with the package
that provides it. Used by `venus doctor` and by `venus` itself, so neither ends in a traceback."""

from __future__ import annotations

import re

from engine.doctor import Check

# System libraries Qt and PortAudio load from the OS, and the Debian/Ubuntu packages that hold them (the .deb's
# Depends in installers/linux/control.in come from the same list).
DEBIAN_PACKAGES = {
    "libGL.so.1": "libgl1", "libEGL.so.1": "libegl1", "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6", "libglib-2.0.so.0": "libglib2.0-0", "libdbus-1.so.3": "libdbus-1-3",
    "libX11.so.6": "libx11-6", "libX11-xcb.so.1": "libx11-xcb1", "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0", "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4", "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0", "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0", "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1", "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0", "libwayland-egl.so.1": "libwayland-egl1",
    "libportaudio.so.2": "libportaudio2", "libasound.so.2": "libasound2",
}
_LIBRARY = re.compile(r"lib[\w+.-]*?\.so(?:\.\d+)*")


def explain_load_failure(error: BaseException) -> tuple[str, str]:
    """(what went wrong, the fix) for an ImportError or OSError raised while loading Qt's native libraries."""
    text = str(error)
    match = _LIBRARY.search(text)
    if match is None:
        return f"Qt cannot be loaded ({text})", "reinstall Venus (a source install: `make setup`)"
    library = match.group(0)
    package = DEBIAN_PACKAGES.get(library)
    fix = (f"install {package} (Debian/Ubuntu: sudo apt-get install {package})" if package
           else f"install the system package that provides {library}")
    return f"the system library {library} is missing or damaged ({text})", fix


def check_desktop() -> Check:
    """One doctor line: the desktop app's Qt libraries load, or which library is missing and how to get it."""
    try:
        import PySide6
        import PySide6.QtGui  # noqa: F401 - loading it is the check (OpenGL, fontconfig, X11/Wayland clients)
        import PySide6.QtWidgets  # noqa: F401
    except (ImportError, OSError) as exc:
        what, fix = explain_load_failure(exc)
        return Check("desktop app", "fail", what, fix + "; `venus chat` works without it")
    return Check("desktop app", "ok", f"Qt {PySide6.__version__} loads")
