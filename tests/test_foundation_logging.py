"""The console stays quiet: library chatter is DEBUG in the log file, ALSA's C messages and OpenCV's camera
warnings never reach stderr; Venus's own warnings still do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_NOISE = textwrap.dedent("""
    import ctypes, logging, sys
    if sys.argv[1] != "none":
        from engine.logsetup import setup_logging
        setup_logging(verbose=sys.argv[1] == "verbose")
    asound = ctypes.CDLL("libasound.so.2")
    pcm = ctypes.c_void_p()
    for _ in range(3):  # ALSA prints this from C, as it prints "underrun occurred"
        assert asound.snd_pcm_open(ctypes.byref(pcm), b"venus-no-such-device", 0, 0) < 0
    from engine.vision._cv import cv2
    assert not cv2.VideoCapture(97).isOpened()  # a camera that is not there
    logging.getLogger("alembic.runtime.migration").info("Context impl SQLiteImpl.")
    logging.getLogger("alembic.runtime.migration").warning("alembic warns")
    logging.getLogger("engine.timeline.db").info("conversations migrated to 0001")
    logging.getLogger("engine.audio").warning("venus warns")
""")


def _run(mode: str, log_dir: Path) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENCV_LOG_LEVEL"}
    proc = subprocess.run([sys.executable, "-c", _NOISE, mode], capture_output=True, text=True, timeout=120,
                          env={**env, "VENUS_LOG_DIR": str(log_dir)})
    assert proc.returncode == 0, proc.stderr
    log = log_dir / "venus.log"
    return proc.stderr, log.read_text() if log.exists() else ""


def test_alsa_opencv_and_library_chatter_stay_off_the_console(tmp_path: Path) -> None:
    """Without Venus's logging the same script floods stderr; with it only Venus's and libraries' warnings show."""
    raw, _ = _run("none", tmp_path / "raw")
    assert "ALSA lib pcm.c" in raw and "Unknown PCM venus-no-such-device" in raw, "the control must be noisy"
    assert "[ WARN" in raw and "can't open camera" in raw
    console, log = _run("quiet", tmp_path / "quiet")
    assert console.splitlines() == ["WARNING alembic.runtime.migration: alembic warns",
                                    "WARNING engine.audio: venus warns"], console
    alsa = [line for line in log.splitlines() if " alsa: " in line]
    assert len(alsa) == 1, "three identical ALSA messages within seconds are written once"
    assert " INFO " in alsa[0] and "ALSA lib pcm.c" in alsa[0] and "(snd_pcm_open_noupdate) Unknown PCM" in alsa[0]
    assert "Context impl SQLiteImpl" not in log, "alembic's start-up INFO is DEBUG, below the file's level"
    assert "conversations migrated to 0001" in log and "alembic warns" in log


def test_verbose_keeps_library_chatter_in_the_file_as_debug(tmp_path: Path) -> None:
    _, log = _run("verbose", tmp_path / "verbose")
    line = next(line for line in log.splitlines() if "Context impl SQLiteImpl" in line)
    assert " DEBUG " in line and "alembic.runtime.migration" in line
