"""Venus's AppImage runtime (installers/linux/appimage/runtime.c), built here and run for real on a small AppImage:
a squashfs made with mksquashfs from an AppDir whose AppRun is a shell script that reports what it was given."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_SRC = ROOT / "installers" / "linux" / "appimage"
STATIC_LIBS = ["libsquashfuse.a", "libfuse3.a", "libzstd.a", "liblzma.a", "liblz4.a", "liblzo2.a", "libz.a"]
SETUP_HINT = "`make setup` as root installs them (scripts/setup.sh)"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the AppImage runtime is a Linux ELF")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # no geteuid on Windows, where CI collects this too

APPRUN = """#!/bin/sh
echo "APPDIR=$APPDIR"
echo "APPIMAGE=$APPIMAGE"
echo "ARGV0=$ARGV0"
for a in "$@"; do echo "ARG=$a"; done
echo "HELLO=$(cat "$APPDIR/usr/share/hello.txt")"
echo "TOOL=$(md5sum < "$APPDIR/usr/bin/tool" | cut -c1-32)"
echo "MOUNT=$(grep " $APPDIR " /proc/mounts | cut -d' ' -f3)"
echo "LS=$(ls "$APPDIR" | tr '\n' ,)"
echo "LINK=$(readlink "$APPDIR/hello")"
if [ -n "$SLEEP" ]; then echo "ready"; sleep "$SLEEP"; fi
exit "${EXIT_CODE:-0}"
"""


def test_setup_installs_what_the_runtime_links_so_the_build_does_not_skip():
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    block = re.search(r"SYSTEM_PACKAGES=\((.*?)\n\)", setup, re.S).group(1)
    packages = {p for line in block.splitlines() for p in line.split("#")[0].split()}
    needed = {"build-essential", "squashfs-tools", "libsquashfuse-dev", "libfuse3-dev", "zlib1g-dev", "liblzma-dev",
              "liblz4-dev", "liblzo2-dev", "libzstd-dev"}
    assert needed <= packages, needed - packages
    makefile = (RUNTIME_SRC / "Makefile").read_text()
    linked = re.findall(r"-l([\w+]+)", makefile)  # whole names: "-lz" must not be found inside "-lzstd"
    for lib in STATIC_LIBS:
        assert lib[3:-2] in linked, lib


def _missing_build_tools() -> list[str]:
    missing = [tool for tool in ("gcc", "make", "mksquashfs") if not shutil.which(tool)]
    if "gcc" not in missing:  # gcc prints the bare name back when it has no such library
        for lib in STATIC_LIBS:
            found = subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True).stdout.strip()
            if not os.path.isabs(found):
                missing.append(lib)
    return missing


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The runtime built with its Makefile, and an AppImage of a small AppDir, in a folder with a space in its name."""
    missing = _missing_build_tools()
    if missing:
        pytest.skip(f"cannot build the AppImage runtime without {', '.join(missing)}: {SETUP_HINT}")
    build = tmp_path_factory.mktemp("appimage")
    done = subprocess.run(["make", "-s", "-C", str(RUNTIME_SRC), f"O={build}"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    out = build / "with space"  # the spec: an AppImage must work from a path with blanks (make's O= cannot)
    appdir = out / "Test.AppDir"
    (appdir / "usr" / "share").mkdir(parents=True)
    (appdir / "usr" / "bin").mkdir()
    (appdir / "AppRun").write_text(APPRUN)
    (appdir / "AppRun").chmod(0o755)
    (appdir / "usr" / "share" / "hello.txt").write_text("hello from the image\n")
    (appdir / "usr" / "bin" / "tool").write_bytes(os.urandom(300_000))  # more than one squashfs block
    (appdir / "usr" / "bin" / "tool").chmod(0o755)
    (appdir / "hello").symlink_to("usr/share/hello.txt")
    (appdir / "locked").mkdir()
    (appdir / "locked" / "inside.txt").write_text("kept\n")
    (appdir / "locked").chmod(0o555)  # a read-only folder must still get its files
    for path in (appdir / "usr" / "bin" / "tool", appdir / "locked"):
        os.utime(path, (1_000_000_000, 1_000_000_000))  # a time of its own, so extraction must carry it over
    image = out / "Test.squashfs"
    subprocess.run(["mksquashfs", str(appdir), str(image), "-root-owned", "-noappend", "-comp", "zstd", "-quiet",
                    "-no-progress"], check=True, capture_output=True)
    appimage = out / "Test.AppImage"
    appimage.write_bytes((build / "runtime-x86_64").read_bytes() + image.read_bytes())
    appimage.chmod(0o755)
    return {"appdir": appdir, "runtime": build / "runtime-x86_64", "appimage": appimage}


def _run(args, cwd, env=None, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True,
                          text=True, timeout=timeout)


def _report(stdout: str) -> dict[str, list[str]]:
    lines: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        key, _, value = line.partition("=")
        lines.setdefault(key, []).append(value)
    return lines


def test_the_runtime_is_a_static_elf_with_the_type2_magic_and_finds_its_image(built, tmp_path):
    elf = built["runtime"].read_bytes()
    assert elf[:4] == b"\x7fELF" and elf[8:11] == b"AI\x02"
    phoff, phentsize, phnum = struct.unpack_from("<Q", elf, 0x20)[0], *struct.unpack_from("<HH", elf, 0x36)
    types = [struct.unpack_from("<I", elf, phoff + i * phentsize)[0] for i in range(phnum)]
    assert 3 not in types  # no PT_INTERP: static, it needs no loader or library of the user's system
    done = _run([built["appimage"], "--appimage-offset"], tmp_path)
    assert done.returncode == 0 and int(done.stdout) == len(elf)
    assert built["appimage"].read_bytes()[len(elf):len(elf) + 4] == b"hsqs"  # squashfs's magic, right there


def test_extract_writes_the_files_symlinks_modes_and_times_of_the_image(built, tmp_path):
    done = _run([built["appimage"], "--appimage-extract"], tmp_path)
    assert done.returncode == 0, done.stderr
    root, appdir = tmp_path / "squashfs-root", built["appdir"]
    assert (root / "usr" / "share" / "hello.txt").read_text() == "hello from the image\n"
    assert (root / "usr" / "bin" / "tool").read_bytes() == (appdir / "usr" / "bin" / "tool").read_bytes()
    assert os.readlink(root / "hello") == "usr/share/hello.txt"
    assert stat.S_IMODE((root / "AppRun").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "usr" / "share" / "hello.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((root / "locked").stat().st_mode) == 0o555
    assert (root / "locked" / "inside.txt").read_text() == "kept\n"
    assert (root / "usr" / "bin" / "tool").stat().st_mtime == 1_000_000_000
    assert (root / "locked").stat().st_mtime == 1_000_000_000
    again = _run([built["appimage"], "--appimage-extract"], tmp_path)  # over an earlier extraction
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("how", ["option", "environment"])
def test_extract_and_run_passes_arguments_environment_and_exit_code_then_removes_the_folder(built, tmp_path, how):
    args = ["two words", "--flag"]
    env = {"EXIT_CODE": "7", "TMPDIR": str(tmp_path)}
    if how == "option":
        command = [built["appimage"], "--appimage-extract-and-run", *args]
    else:
        command, env["APPIMAGE_EXTRACT_AND_RUN"] = [built["appimage"], *args], "1"
    done = _run(command, tmp_path, env)
    assert done.returncode == 7, done.stderr
    seen = _report(done.stdout)
    assert seen["ARG"] == args and seen["HELLO"] == ["hello from the image"]
    assert seen["APPIMAGE"] == [str(built["appimage"])] and seen["ARGV0"] == [str(built["appimage"])]
    assert seen["APPDIR"][0].startswith(f"{tmp_path}/.extract_Test") and seen["MOUNT"] == [""]
    assert not Path(seen["APPDIR"][0]).exists() and done.stderr == ""


def _fuse_usable() -> bool:
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return False
    return IS_ROOT or shutil.which("fusermount3") is not None


@pytest.mark.skipif(not _fuse_usable(), reason="no usable /dev/fuse (or no fusermount3 for a non-root user) here")
def test_by_default_it_mounts_the_image_with_fuse_runs_apprun_and_unmounts(built, tmp_path):
    done = _run([built["appimage"], "a", "b"], tmp_path, {"EXIT_CODE": "3", "TMPDIR": str(tmp_path)})
    assert done.returncode == 3, done.stderr
    seen = _report(done.stdout)
    assert seen["MOUNT"] == ["fuse.squashfs"], done.stderr  # a FUSE mount, not an extraction
    tool = (built["appdir"] / "usr" / "bin" / "tool").read_bytes()
    assert seen["TOOL"] == [hashlib.md5(tool).hexdigest()]  # read through FUSE across several squashfs blocks
    assert seen["ARG"] == ["a", "b"] and seen["HELLO"] == ["hello from the image"]
    assert seen["LINK"] == ["usr/share/hello.txt"]  # readlink and readdir through the mount
    assert {"AppRun", "hello", "locked", "usr"} <= set(seen["LS"][0].split(","))
    mountpoint = seen["APPDIR"][0]
    assert mountpoint.startswith(f"{tmp_path}/.mount_Test") and seen["APPIMAGE"] == [str(built["appimage"])]
    assert mountpoint not in Path("/proc/mounts").read_text() and not Path(mountpoint).exists()


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, name) of each process whose parent is pid."""
    found = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat_file.read_text()
        except OSError:  # ended meanwhile
            continue
        name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
        if int(rest[1]) == pid:
            found.append((int(stat_file.parent.name), name))
    return found


@pytest.mark.skipif(not _fuse_usable(), reason="no usable /dev/fuse (or no fusermount3 for a non-root user) here")
def test_if_the_fuse_server_ends_before_the_app_its_mount_is_detached_and_the_exit_code_still_comes_back(built,
                                                                                                         tmp_path):
    proc = subprocess.Popen([str(built["appimage"])], cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(tmp_path), "SLEEP": "3",
                                                         "EXIT_CODE": "6"})
    mountpoint = ""
    try:
        lines = []
        for line in proc.stdout:  # AppRun reports, says "ready" and sleeps (it is read whole: sh has it in memory)
            lines.append(line)
            if line == "ready\n":
                break
        seen = _report("".join(lines))
        assert seen["MOUNT"] == ["fuse.squashfs"], "".join(lines)
        mountpoint = seen["APPDIR"][0]
        runtime_name = Path(f"/proc/{proc.pid}/comm").read_text().strip()
        servers = [pid for pid, name in _children(proc.pid) if name == runtime_name]  # AppRun's is "AppRun"
        assert len(servers) == 1, _children(proc.pid)
        os.kill(servers[0], 9)  # it ignores TERM, INT and HUP
        deadline = time.monotonic() + 2
        while f" {mountpoint} " in Path("/proc/mounts").read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the app should still be sleeping"
        assert f" {mountpoint} " not in Path("/proc/mounts").read_text()  # detached at once, not left dangling
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if mountpoint and f" {mountpoint} " in Path("/proc/mounts").read_text():  # the old runtime left it
            subprocess.run(["umount", "-l", mountpoint] if IS_ROOT else ["fusermount3", "-u", "-z", mountpoint])
    assert proc.returncode == 6, err
    assert err.splitlines() == [f"Test.AppImage: the FUSE server ended before the app (killed by signal 9): its "
                                f"files are gone, and {mountpoint} is unmounted"]
    assert not Path(mountpoint).exists() and "ready" not in out


@pytest.mark.skipif(not IS_ROOT or not all(shutil.which(t) for t in ("unshare", "setpriv", "fusermount3")),
                    reason="needs root (a namespace of its own with a /dev/fuse a user may open), setpriv, fusermount3")
def test_a_user_mounts_through_fusermount3_and_it_unmounts_after(built, tmp_path):
    # /dev/fuse may be root's only (as on this machine): a private mount namespace gets one the user may open.
    shared = Path(tempfile.mkdtemp(prefix="venus-appimage-"))
    try:
        shared.chmod(0o755)
        appimage = shared / "UserTest.AppImage"  # somewhere the user can read, with a name of its own
        shutil.copy(built["appimage"], appimage)
        os.mknod(shared / "fuse", 0o666 | stat.S_IFCHR, os.stat("/dev/fuse").st_rdev)
        (shared / "fuse").chmod(0o666)
        as_user = (f'mount --bind {shared}/fuse /dev/fuse && exec setpriv --reuid=65534 --regid=65534 --clear-groups '
                   f'env PATH=/usr/bin:/bin EXIT_CODE=5 {appimage} u')
        done = _run(["unshare", "-m", "sh", "-c", as_user], tmp_path)
        if "cannot mount with FUSE (/dev/fuse" in done.stderr or "unshare failed" in done.stderr:
            pytest.skip(f"no FUSE device for a user here: {done.stderr.strip()}")
        assert done.returncode == 5, done.stderr
        seen = _report(done.stdout)
        assert seen["MOUNT"] == ["fuse.squashfs"] and seen["ARG"] == ["u"], done.stdout + done.stderr
        assert seen["APPDIR"][0].startswith("/tmp/.mount_UserTest") and not Path(seen["APPDIR"][0]).exists()
    finally:
        shutil.rmtree(shared)


@pytest.mark.skipif(not IS_ROOT or not shutil.which("unshare"), reason="needs root to hide /dev in a namespace")
def test_without_fuse_it_says_so_in_one_line_and_extracts_instead(built, tmp_path):
    hide_dev = 'mount -t tmpfs none /dev && exec "$0" "$@"'  # a mount namespace of its own: /dev is empty there
    done = _run(["unshare", "-m", "sh", "-c", hide_dev, built["appimage"], "x"], tmp_path,
                {"EXIT_CODE": "4", "TMPDIR": str(tmp_path)})
    if "unshare failed" in done.stderr or "mount:" in done.stderr:
        pytest.skip(f"no mount namespace here: {done.stderr.strip()}")
    assert done.returncode == 4, done.stderr
    assert done.stderr.splitlines() == [
        "Test.AppImage: cannot mount with FUSE (/dev/fuse: No such file or directory); "
        "extracting to a temporary folder instead"]
    seen = _report(done.stdout)
    assert seen["ARG"] == ["x"] and seen["HELLO"] == ["hello from the image"] and seen["MOUNT"] == [""]


def test_errors_are_one_clear_line(built, tmp_path):
    bare = _run([built["runtime"]], tmp_path)  # the runtime with nothing appended
    assert bare.returncode == 1 and len(bare.stderr.splitlines()) == 1
    assert "no AppImage payload at offset" in bare.stderr and "squashfs" in bare.stderr
    unknown = _run([built["appimage"], "--appimage-frobnicate"], tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.strip().endswith("(--appimage-help lists them)")
    helped = _run([built["appimage"], "--appimage-help"], tmp_path)
    for option in ["--appimage-offset", "--appimage-extract ", "--appimage-extract-and-run", "APPIMAGE_EXTRACT_AND_RUN"]:
        assert option in helped.stdout


def test_a_signal_during_extraction_removes_the_half_written_folder(built, tmp_path):
    """Ctrl-C or a kill while the image is extracted (before AppRun runs) leaves no temporary folder behind."""
    big = tmp_path / "big"
    shutil.copytree(built["appdir"], big / "Big.AppDir", symlinks=True)
    (big / "Big.AppDir" / "locked").chmod(0o755)
    for i in range(40):  # enough to take a moment to write
        (big / "Big.AppDir" / "usr" / f"blob{i}").write_bytes(os.urandom(2_000_000))
    image = big / "Big.squashfs"
    subprocess.run(["mksquashfs", str(big / "Big.AppDir"), str(image), "-noappend", "-comp", "gzip", "-quiet",
                    "-no-progress"], check=True, capture_output=True)
    appimage = big / "Big.AppImage"
    appimage.write_bytes(built["runtime"].read_bytes() + image.read_bytes())
    appimage.chmod(0o755)
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = subprocess.Popen([str(appimage), "--appimage-extract-and-run"], cwd=tmp_path, text=True,
                            env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not any(temp.iterdir()) and time.monotonic() < deadline:  # the extraction has begun
        time.sleep(0.005)
    proc.terminate()
    out, err = proc.communicate(timeout=60)
    if "ready" in out:
        pytest.skip("the extraction finished before the signal came; nothing to check")
    assert proc.returncode == 128 + 15, err
    assert list(temp.iterdir()) == []


def test_a_truncated_image_is_one_line_and_nothing_runs(built, tmp_path):
    """A download cut short: squashfs keeps its tables at the end, so the runtime cannot read it, and says so."""
    data = built["appimage"].read_bytes()
    offset = int(_run([built["appimage"], "--appimage-offset"], tmp_path).stdout)
    cut = tmp_path / "Cut.AppImage"
    cut.write_bytes(data[:offset + (len(data) - offset) // 2])
    cut.chmod(0o755)
    for args in (["--appimage-extract"], ["--appimage-extract-and-run"]):
        done = _run([cut, *args], tmp_path, {"TMPDIR": str(tmp_path)})
        assert done.returncode != 0 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "APPDIR=" not in done.stdout and "Traceback" not in done.stderr
    assert not list(tmp_path.glob(".extract_*"))


def _crafted_appimage(runtime: Path, where: Path, layout: str, outside: Path) -> Path:
    """An AppImage whose image has what no real folder has, so mksquashfs cannot write it from one: "symlink" a
    symlink `escape` -> `outside` and then a folder `escape` with a file in it; "dotdot" a folder named "..". mksquashfs
    writes a tree with a name of the same length in its place (its directory table left uncompressed, -noI), and that
    name is changed in the directory table. unsquashfs -lls shows the tree before and refuses the image after."""
    src = where / "src"
    src.mkdir(parents=True)
    (src / "AppRun").write_text("#!/bin/sh\necho ran\n")
    (src / "AppRun").chmod(0o755)
    if layout == "symlink":
        (src / "escape").symlink_to(outside)
        (src / "escapf").mkdir()
        (src / "escapf" / "file").write_text("written through the symlink\n")
        entry, renamed, refused = b"\x01\x00\x05\x00escapf", b"escape", "duplicate names"  # type 1 (folder), len-1
    else:
        (src / "zz").mkdir()
        (src / "zz" / "file").write_text("written beside the target\n")
        entry, renamed, refused = b"\x01\x00\x01\x00zz", b"..", "invalid characters in name"
    image = where / "crafted.squashfs"
    subprocess.run(["mksquashfs", str(src), str(image), "-noappend", "-noI", "-quiet", "-no-progress"], check=True,
                   capture_output=True)
    data = bytearray(image.read_bytes())
    directory_table = struct.unpack_from("<Q", data, 72)[0]  # the superblock's directory_table_start
    assert data.count(entry, directory_table) == 1
    at = data.index(entry, directory_table) + 4
    data[at:at + len(renamed)] = renamed
    image.write_bytes(data)
    if shutil.which("unsquashfs"):  # the hostile layout is really there: squashfs's own reader says so
        listed = subprocess.run(["unsquashfs", "-lls", str(image)], capture_output=True, text=True)
        assert listed.returncode != 0 and refused in listed.stdout + listed.stderr, listed.stdout + listed.stderr
    appimage = where / "Crafted.AppImage"
    appimage.write_bytes(runtime.read_bytes() + bytes(data))
    appimage.chmod(0o755)
    return appimage


@pytest.mark.parametrize("option", ["--appimage-extract", "--appimage-extract-and-run"])
@pytest.mark.parametrize("layout", ["symlink", "dotdot"])
def test_a_crafted_image_cannot_make_extraction_write_outside_its_folder(built, tmp_path, layout, option):
    outside, cwd, temp = tmp_path / "outside", tmp_path / "cwd", tmp_path / "temp"
    for folder in (outside, cwd, temp):
        folder.mkdir()
        folder.chmod(0o755)
    appimage = _crafted_appimage(built["runtime"], tmp_path / "build", layout, outside)
    done = _run([appimage, option], cwd, {"TMPDIR": str(temp)})
    assert done.returncode == 1 and "ran" not in done.stdout, (done.stdout, done.stderr)
    assert len(done.stderr.splitlines()) == 1, done.stderr
    named = "/escape: " if layout == "symlink" else '/..: the image has an entry named ".."'
    assert done.stderr.startswith("Crafted.AppImage: cannot extract ") and named in done.stderr, done.stderr
    target = cwd / "squashfs-root" if option == "--appimage-extract" else None  # what --appimage-extract leaves
    written = [path for folder in (outside, cwd, temp) for path in folder.rglob("*")
               if not (target and (path == target or target in path.parents))]
    assert written == [] and stat.S_IMODE(outside.stat().st_mode) == 0o755  # nothing outside, not even a chmod
