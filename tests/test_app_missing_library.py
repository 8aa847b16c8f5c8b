"""A system library Qt needs that is missing or damaged: `venus` and `venus doctor` name it and the package to
install, and neither ends in a traceback. The damage is real: an empty libGL.so.1 first on the loader's path."""

import os
import subprocess
import sys

import pytest

from app.desktop_check import check_desktop, explain_load_failure

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_LIBRARY_PATH is the Linux loader's")


def run_venus(tmp_path, *args: str) -> subprocess.CompletedProcess:
    broken = tmp_path / "broken-libs"
    broken.mkdir(exist_ok=True)
    (broken / "libGL.so.1").write_bytes(b"")  # what a truncated package file looks like to the loader
    env = dict(os.environ, LD_LIBRARY_PATH=str(broken), VENUS_CONFIG_DIR=str(tmp_path / "config"),
               QT_QPA_PLATFORM="offscreen", DISPLAY=os.environ.get("DISPLAY", ":0"))
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_desktop_app_names_the_missing_library_instead_of_a_traceback(tmp_path):
    result = run_venus(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "the desktop app cannot start: the system library libGL.so.1 is missing or damaged" in result.stderr
    assert "apt-get install libgl1" in result.stderr and "venus chat" in result.stderr


def test_doctor_fails_the_desktop_line_with_the_package_to_install(tmp_path):
    result = run_venus(tmp_path, "doctor")
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("[FAIL] desktop app:"))
    assert "libGL.so.1" in lines[at] and "apt-get install libgl1" in lines[at + 1]
    assert result.returncode == 1


def test_doctor_passes_the_desktop_line_where_qt_loads():
    check = check_desktop()
    assert check.status == "ok" and check.detail.startswith("Qt ")


def test_an_unknown_library_is_still_named():
    what, fix = explain_load_failure(ImportError("libfoo-bar.so.7: cannot open shared object file"))
    assert "libfoo-bar.so.7" in what and "libfoo-bar.so.7" in fix
