"""Installers (docs/INSTALLERS.md): fast checks of the shared spec, the bundled-models hand-over, the desktop
entry and the per-OS scripts, without building anything. `make installer-test` proves the built packages."""

from __future__ import annotations

import configparser
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from installers import launcher
from installers.bundle import DATA_FILES, bundled_data_files, bundled_model_files, default_model_files

ROOT = Path(__file__).resolve().parent.parent
INSTALLERS = ROOT / "installers"


def test_every_data_file_the_app_reads_at_run_time_is_in_the_bundle():
    pairs = bundled_data_files(ROOT)
    for rel, _dest in DATA_FILES:
        assert (ROOT / rel).exists(), f"{rel} is listed for the bundle but missing"
    dests = {f"{dest}/{src.name}" for src, dest in pairs}
    for needed in ["engine/timeline/migrations/env.py", "harness/migrations/env.py", "engine/timeline/alembic.ini",
                   "engine/models/manifest.json", "engine/models/catalog.json", "assets/intents/en/clock.yaml"]:
        assert needed in dests, needed
    versions = [p for p in (ROOT / "engine/timeline/migrations/versions").glob("*.py")]
    assert versions and all(f"engine/timeline/migrations/versions/{v.name}" in dests for v in versions)
    assert not any("__pycache__" in str(src) for src, _ in pairs)


def test_the_bundled_models_are_the_manifest_defaults(tmp_path):
    manifest = json.loads((ROOT / "engine/models/manifest.json").read_text())
    defaults = {m["id"] for m in manifest["models"] if m.get("default")}
    names = default_model_files(ROOT)
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in names and "whisper-tiny-en/model.bin" in names
    assert len(defaults) >= 5 and not any(n.startswith("gemma") for n in names)  # optional models stay downloads
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    pairs = bundled_model_files(ROOT, tmp_path)
    assert ("models/whisper-tiny-en", "models") == (pairs[names.index("whisper-tiny-en/model.bin")][1],
                                                      pairs[names.index("SmolLM2-135M-Instruct.Q4_1.gguf")][1])
    (tmp_path / names[0]).unlink()
    with pytest.raises(SystemExit, match="venus models install"):
        bundled_model_files(ROOT, tmp_path)


def _bundle(tmp_path: Path) -> Path:
    bundled = tmp_path / "bundle" / "models"
    (bundled / "piper").mkdir(parents=True)
    (bundled / "llm.gguf").write_bytes(b"bundled llm")
    (bundled / "piper" / "voice.onnx").write_bytes(b"bundled voice")
    return bundled


def test_bundled_models_are_linked_into_the_users_folder_and_the_users_files_are_kept(tmp_path):
    bundled, user = _bundle(tmp_path), tmp_path / "user-models"
    (user / "piper").mkdir(parents=True)
    (user / "piper" / "voice.onnx").write_bytes(b"the user's own voice")
    done = launcher.offer_bundled_models(bundled, user, mode="link")
    assert done == [user / "llm.gguf"]
    assert (user / "llm.gguf").is_symlink() and (user / "llm.gguf").read_bytes() == b"bundled llm"
    assert (user / "piper" / "voice.onnx").read_bytes() == b"the user's own voice"
    assert launcher.offer_bundled_models(bundled, user, mode="link") == []  # the second start changes nothing


def test_a_link_into_a_moved_bundle_is_renewed_and_an_appimage_copies(tmp_path):
    bundled, user = _bundle(tmp_path), tmp_path / "user-models"
    user.mkdir()
    (user / "llm.gguf").symlink_to(tmp_path / "old-mount" / "models" / "llm.gguf")  # dangling: last run's mount
    launcher.offer_bundled_models(bundled, user, mode="copy")
    assert not (user / "llm.gguf").is_symlink() and (user / "llm.gguf").read_bytes() == b"bundled llm"
    assert (user / "piper" / "voice.onnx").read_bytes() == b"bundled voice"
    assert not list(user.rglob("*.partial"))


def test_copy_mode_is_chosen_where_the_bundle_moves(monkeypatch):
    monkeypatch.delenv("APPIMAGE", raising=False)
    assert launcher._link_mode() == ("copy" if launcher.os.name == "nt" else "link")
    monkeypatch.setenv("APPIMAGE", "/home/u/Venus.AppImage")
    assert launcher._link_mode() == "copy"


def test_version_flag_prints_the_package_version(capsys):
    from importlib.metadata import version

    assert launcher.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"venus {version('venus-assistant')}"
    assert launcher.bundle_root() is None  # from source: no bundled models, the user's folder as before


def test_the_bundle_check_loads_every_native_part_from_source_too(capsys):
    assert launcher.main(["--check-bundle"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "[ ok ] RapidOCR: " in out and "venus" in out.lower() and "-> current_time" in out


def test_desktop_entry_is_valid_and_names_the_shipped_icon():
    entry = ROOT / "assets" / "venus.desktop"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(entry)
    section = parser["Desktop Entry"]
    assert section["Type"] == "Application" and section["Exec"].split()[0] == "venus"
    assert (ROOT / "assets" / f"{section['Icon']}.png").is_file() and (ROOT / "assets" / f"{section['Icon']}.svg").is_file()
    validator = shutil.which("desktop-file-validate")
    if validator:  # stricter where desktop-file-utils is installed
        result = subprocess.run([validator, str(entry)], capture_output=True, text=True)
        assert result.returncode == 0 and not result.stdout.strip(), result.stdout


def test_the_deb_declares_its_depends_and_keeps_user_data_out_of_the_package():
    control = (INSTALLERS / "linux" / "control.in").read_text()
    depends = re.search(r"^Depends: (.*)$", control, re.M).group(1).split(", ")
    for lib in ["libportaudio2", "libxcb-cursor0", "libxkbcommon-x11-0", "libegl1", "libfontconfig1", "libwayland-cursor0"]:
        assert lib in depends
    assert "@VERSION@" in control and "@INSTALLED_KB@" in control
    build = (INSTALLERS / "linux" / "build.sh").read_text()
    assert "/opt/venus" in build and "usr/bin/venus" in build and "DEBIAN/postrm" not in build
    apprun = INSTALLERS / "linux" / "AppRun"
    assert apprun.stat().st_mode & 0o111 and "usr/lib/venus/venus" in apprun.read_text()
    assert 'cp -al "$BUNDLE" "$APPDIR/usr/lib/venus"' in build  # hard links: the staging costs no disk


def test_the_spec_leaves_torch_out_and_enters_through_the_launcher():
    spec = (INSTALLERS / "venus.spec").read_text()
    assert '"torch"' in spec.split("excludes=")[1].split("]")[0]
    assert 'installers" / "launcher.py' in spec and (INSTALLERS / "launcher.py").is_file()
    for package in ["llama_cpp", "ctranslate2", "livekit", "rapidocr", "piper", "keyring.backends"]:
        assert f'"{package}"' in spec, package


def test_windows_and_macos_scripts_reference_files_that_exist():
    iss = (INSTALLERS / "windows" / "venus.iss").read_text()
    assert "dist\\pyinstaller\\venus\\*" in iss and "OutputDir=..\\..\\dist" in iss and "{app}\\Venus.exe" in iss
    ps1 = (INSTALLERS / "windows" / "build.ps1").read_text()
    assert "installers\\windows\\venus.iss" in ps1 and "build/venus.ico" in ps1 and "assets/venus.png" in ps1
    plist = json.loads((INSTALLERS / "macos" / "info_plist.json").read_text())
    assert plist["NSMicrophoneUsageDescription"] and plist["NSCameraUsageDescription"]
    mac = (INSTALLERS / "macos" / "build.sh").read_text()
    assert "installers/macos/entitlements.plist" in mac and (INSTALLERS / "macos" / "entitlements.plist").is_file()
    workflow = (ROOT / ".github" / "workflows" / "installers.yml").read_text()
    for os_name in ["ubuntu-", "windows-", "macos-"]:
        assert os_name in workflow
    for script in re.findall(r"installers/[\w/]+\.(?:sh|ps1)", workflow.replace("./installers", "installers")):
        assert (ROOT / script).is_file(), script


def test_the_source_install_answers_version_too():
    import subprocess
    import sys
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]  # not a copy of it here
    done = subprocess.run([sys.executable, "-m", "app.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"venus {version}", (done.stdout, done.stderr)
