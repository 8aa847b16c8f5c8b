"""Entry point of the frozen Venus (PyInstaller): `--version`, the bundled default models, then `app.cli.main`.

The bundle is read-only (/opt/venus, an AppImage, Program Files, a .app), so the default models that ship inside
it are offered to the user's models folder (`engine.paths.models_dir()`), where Venus looks for every model and
where later downloads go: linked where the bundle's path is stable (a .deb in /opt/venus, a .app), copied where it
is not (an AppImage mounts at a new path each run; Windows links need privileges).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

BUNDLED_MODELS = "models"  # folder inside the bundle (sys._MEIPASS) that holds the default models


def bundle_root() -> Path | None:
    """The frozen bundle's data folder, or None when running from source."""
    base = getattr(sys, "_MEIPASS", None)
    return Path(base) if base else None


def venus_version() -> str:
    """Venus's version from the packaged metadata (copied into the bundle by the spec)."""
    from importlib import metadata

    try:
        return metadata.version("venus-assistant")
    except metadata.PackageNotFoundError:
        return "unknown"


def _link_mode() -> str:
    if os.name == "nt" or os.environ.get("APPIMAGE"):
        return "copy"
    return "link"


def offer_bundled_models(bundled: Path, user_models: Path, mode: str | None = None) -> list[Path]:
    """Put every bundled model file into the user's models folder; a real file of the user's is never touched.

    A missing file or a symlink (possibly into an older or moved bundle) gets the bundled one; returns the paths set.
    """
    mode = mode or _link_mode()
    done = []
    for src in sorted(p for p in bundled.rglob("*") if p.is_file()):
        dest = user_models / src.relative_to(bundled)
        if dest.is_symlink():
            if mode == "link" and os.readlink(dest) == str(src):
                continue
            dest.unlink()
        elif dest.exists():
            continue  # the user's own (or an earlier copied) file: installs and downloads stay theirs
        dest.parent.mkdir(parents=True, exist_ok=True)
        if mode == "link":
            dest.symlink_to(src)
        else:
            tmp = dest.with_name(dest.name + ".partial")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dest)
        done.append(dest)
    return done


def _probe_ocr() -> str:
    import cv2
    import numpy as np

    from engine.vision.ocr import RapidTextReader

    page = np.full((120, 520, 3), 255, np.uint8)
    cv2.putText(page, "Venus reads this", (20, 75), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (0, 0, 0), 3)
    text = RapidTextReader().read(page).text
    if "venus" not in text.lower():
        raise RuntimeError(f"read {text!r} from a rendered 'Venus reads this'")
    return repr(text)


def _probe_echo() -> str:
    from livekit import rtc

    rtc.AudioProcessingModule(echo_cancellation=True, noise_suppression=True, high_pass_filter=True)
    return "AudioProcessingModule ready"


def _probe_keyring() -> str:
    import keyring.backend

    names = sorted({type(k).__module__.rsplit(".", 1)[-1] for k in keyring.backend.get_all_keyring()})
    import keyring.backends.macOS  # noqa: F401  (every OS's backend ships; each says whether it is usable here)
    import keyring.backends.SecretService  # noqa: F401
    import keyring.backends.Windows  # noqa: F401
    return "usable here: " + (", ".join(names) or "none")


def _intents():
    from engine.intents.matcher import IntentMatcher

    return IntentMatcher.load()


BUNDLE_PROBES = {  # what a build could silently lose: native libraries and data found by path
    "llama.cpp": lambda: __import__("llama_cpp").llama_print_system_info().decode()[:60],
    "CTranslate2": lambda: ", ".join(sorted(__import__("ctranslate2").get_supported_compute_types("cpu"))),
    "onnxruntime": lambda: ", ".join(__import__("onnxruntime").get_available_providers()),
    "PortAudio": lambda: __import__("sounddevice").get_portaudio_version()[1],
    "piper": lambda: __import__("piper").__name__,
    "OpenCV": lambda: __import__("cv2").__version__,
    "Qt": lambda: __import__("PySide6.QtWidgets").__version__,
    "livekit echo canceller": _probe_echo,
    "RapidOCR": _probe_ocr,
    "keyring backends": _probe_keyring,
    "intent templates": lambda: f"{len(_intents().intent_names)} intents; 'what time is it' -> {_intents().match('what time is it').intent}",
}


def check_bundle() -> int:
    """`venus --check-bundle`: load every native part and data file a build could miss; 1 if any fails."""
    failed = 0
    for name, probe in BUNDLE_PROBES.items():
        try:
            print(f"[ ok ] {name}: {probe()}")
        except Exception as exc:  # each probe's failure is the finding
            failed += 1
            print(f"[fail] {name}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Run Venus from the bundle."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--version"], ["-V"]):
        print(f"venus {venus_version()}")
        return 0
    if argv[:1] == ["--check-bundle"]:
        return check_bundle()
    root = bundle_root()
    if root is not None and (root / BUNDLED_MODELS).is_dir():
        from engine import paths

        try:
            offer_bundled_models(root / BUNDLED_MODELS, paths.models_dir())
        except OSError as exc:  # a full or read-only home: Venus still starts, and the doctor names the models
            print(f"venus: could not set up the bundled models in {paths.models_dir()}: {exc}", file=sys.stderr)
    from app.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
