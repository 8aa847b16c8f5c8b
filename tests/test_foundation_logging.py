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


_CANCELLED_DECODE = textwrap.dedent("""
    import sys, threading, time
    if sys.argv[1] == "venus":
        from engine.logsetup import setup_logging
        setup_logging()
        from engine.llm.llama_backend import LlamaBackend
        from engine.llm.llama_options import LlamaOptions
    else:  # llama-cpp-python's own logging, which prints llama.cpp's lines to stderr: the control
        import llama_cpp
        llama_cpp.llama_log_set(llama_cpp._logger.llama_log_callback, None)
        llama_cpp._logger.set_verbose(False)
        from engine.llm.llama_backend import LlamaBackend
        from engine.llm.llama_options import LlamaOptions
        llama_cpp.llama_log_set(llama_cpp._logger.llama_log_callback, None)
    from engine.llm.backend import ChatMessage
    from engine.models.registry import resolve
    backend = LlamaBackend(LlamaOptions(model_path=str(resolve("smollm2-135m-instruct-q4_1", kind="llm")),
                                        n_ctx=2048, n_batch=64, n_threads=1))
    done = threading.Event()
    def cut_in():  # the user cutting in while the context is evaluated, as often as the runtime could
        while not done.is_set():
            backend.cancel()
            time.sleep(0.002)
    threading.Thread(target=cut_in, daemon=True).start()
    stats = backend.sync([ChatMessage("user", "word " * 1200)])
    done.set()
    assert stats.cancelled, stats
    after = backend.sync([ChatMessage("user", "Hello there")])  # the backend works on after the abort
    assert not after.cancelled and after.total > 0, after
    backend.close()
""")


def test_a_cancelled_decode_leaves_llama_cpp_lines_in_the_log_not_on_the_console(tmp_path: Path) -> None:
    """Cancelling a decode (the user cut in) made llama.cpp print "decode: removing memory module entries ..." on
    the terminal of `venus chat`; its lines now go to Venus's log, the abort's failures as INFO."""
    def run(mode: str) -> tuple[str, str]:
        log_dir = tmp_path / mode
        proc = subprocess.run([sys.executable, "-c", _CANCELLED_DECODE, mode], capture_output=True, text=True,
                              timeout=300, env={**os.environ, "VENUS_LOG_DIR": str(log_dir)})
        assert proc.returncode == 0, proc.stderr
        log = log_dir / "venus.log"
        return proc.stderr, log.read_text() if log.exists() else ""

    raw, _ = run("control")
    assert "removing memory module entries" in raw, "the control must show the line on stderr"
    console, log = run("venus")
    assert "removing memory module" not in console and "failed to decode" not in console, console
    lines = [line for line in log.splitlines() if " llama_cpp: " in line]
    assert any("removing memory module entries" in line for line in lines), log
    assert all(" INFO " in line for line in lines), lines
    assert len(lines) < 20, "llama.cpp's per-step debug lines are dropped, not logged"
