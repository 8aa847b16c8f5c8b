"""The suite's skip policy (tests/conftest.py): under CI a skip is a failure that names what was missing; on a
developer's machine it stays a skip and says how to enable the test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SAMPLE = '''
import pytest

pytest.importorskip("{module}", reason="the module is missing")

def test_runs():
    assert True

def test_needs_a_tool():
    pytest.skip("needs the frobnicator (apt-get install frobnicator)")

@pytest.mark.skipif(True, reason="needs the PulseAudio test server")
def test_marked():
    pass

@pytest.mark.xfail(strict=True, reason="a known flaw")
def test_known_flaw():
    assert False
'''


def _run(tmp_path: Path, *, ci: str | None, module: str = "json") -> subprocess.CompletedProcess:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(SAMPLE.format(module=module))
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "-q", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_under_ci_every_skip_fails_with_its_reason(tmp_path: Path) -> None:
    proc = _run(tmp_path, ci="true")
    assert proc.returncode == 1, proc.stdout
    # a skip in the test body fails the test; a skip mark (evaluated in setup) makes the test an error
    assert "1 failed, 1 passed, 1 xfailed, 1 error" in proc.stdout.splitlines()[-1], proc.stdout
    assert "nothing may be missing: needs the frobnicator" in proc.stdout
    assert "nothing may be missing: needs the PulseAudio test server" in proc.stdout


def test_a_module_skipped_at_import_fails_under_ci(tmp_path: Path) -> None:
    proc = _run(tmp_path, ci="1", module="no_such_module_for_venus")
    assert proc.returncode != 0, proc.stdout
    assert "nothing may be missing" in proc.stdout and "the module is missing" in proc.stdout, proc.stdout


def test_locally_a_skip_stays_a_skip_and_says_how_to_enable_it(tmp_path: Path) -> None:
    for ci in (None, "false"):
        proc = _run(tmp_path, ci=ci)
        assert proc.returncode == 0, proc.stdout
        assert "1 passed, 2 skipped, 1 xfailed" in proc.stdout, proc.stdout
        assert "needs the frobnicator (apt-get install frobnicator) [to run it: `make test`" in proc.stdout
