"""A second start of Venus brings the running window to the front and exits; a crashed instance's socket does
not block the next start. Real processes: the second start is the `venus` command itself."""

import os
import signal
import subprocess
import sys
import textwrap

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.controller import TimelineController  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.single_instance import SingleInstance, instance_key  # noqa: E402
from engine.settings import Settings  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the crash case leaves a Unix socket file")


def start_venus(config_dir, *args: str) -> subprocess.Popen:
    """The real `venus` command with its own settings folder (first run done), offscreen."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "settings.json").write_text('{"ui": {"first_run_done": true}}')
    env = dict(os.environ, VENUS_CONFIG_DIR=str(config_dir), QT_QPA_PLATFORM="offscreen")
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "config"))
    controller = TimelineController(None, Settings())
    window = MainWindow(Settings(), controller.timeline, controller)
    qtbot.addWidget(window)
    yield window
    window.shutdown()


def test_a_second_start_shows_the_hidden_window_and_exits(qtbot, window, tmp_path):
    instance = SingleInstance(instance_key(tmp_path / "config"))
    assert instance.listen()
    instance.activated.connect(window.bring_to_front)
    try:
        assert not window.isVisible()  # hidden to the tray, say
        second = start_venus(tmp_path / "config")
        qtbot.waitUntil(lambda: second.poll() is not None, timeout=60_000)
        output = second.stdout.read()
        assert second.returncode == 0, output
        assert "already running" in output
        assert window.isVisible()

        assert instance_key(tmp_path / "other profile") != instance.key  # another profile is another instance
    finally:
        instance.close()


def test_a_crashed_instances_socket_does_not_block_the_next_start(qtbot, tmp_path):
    key = instance_key(tmp_path / "config")
    crashed = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from PySide6.QtCore import QCoreApplication
        from app.single_instance import SingleInstance
        app = QCoreApplication([])
        assert SingleInstance({key!r}).listen()
        print("listening", flush=True)
        app.exec()
    """)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    assert crashed.stdout.readline().strip() == "listening"
    crashed.send_signal(signal.SIGKILL)  # its socket file stays behind
    crashed.wait()

    instance = SingleInstance(key)
    assert not instance.ask_running_to_show(300)  # nobody answers on the stale socket
    heard = []
    instance.activated.connect(lambda: heard.append(True))
    assert instance.listen()
    try:
        second = start_venus(tmp_path / "config")
        qtbot.waitUntil(lambda: second.poll() is not None, timeout=60_000)
        assert second.returncode == 0 and "already running" in second.stdout.read()
        assert heard == [True]
    finally:
        instance.close()
