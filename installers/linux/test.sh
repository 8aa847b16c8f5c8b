#!/usr/bin/env bash
# `make installer-test`: install dist/venus_*.deb into a fresh minimal Debian 12 root (debootstrap, as root) with
# nothing but what the package declares, and use it as a user would: --version, doctor, a spoken question answered
# in a WAV file, the desktop app on a virtual display for 20 s (screenshot kept; a second start must hand over to
# it); then remove the package (the user's data stays) and run the AppImage from the same root: as the user without
# FUSE (extracted to a temporary folder, as the runtime falls back to), then once through a FUSE mount.
# Artifacts: dist/installer-test/.
# The root (build/installer-test/root) is removed after a pass unless KEEP_ROOT=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "installer-test needs root (debootstrap, chroot)"; exit 2; }
for tool in debootstrap Xvfb xdotool espeak-ng sox bc; do
  command -v $tool >/dev/null || { echo "missing $tool: apt-get install debootstrap xvfb xdotool espeak-ng sox bc"; exit 2; }
done
DEB=$(ls -t dist/venus_*_amd64.deb | head -1)
IMAGE=$(ls -t dist/Venus-*-x86_64.AppImage 2>/dev/null | head -1 || true)
[ -n "$IMAGE" ] || { echo "no dist/Venus-*-x86_64.AppImage: run make installer first"; exit 2; }
OUT=dist/installer-test
ROOT=$(pwd)/build/installer-test/root
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PY=.venv/bin/python
t0=$(date +%s)
step() { echo "== $(( $(date +%s) - t0 )) s: $*"; }

cleanup() {
  [ -n "${XVFB_PID:-}" ] && kill "$XVFB_PID" 2>/dev/null || true
  # Stopped in the FUSE step (or its mount stayed): the AppImage may still run, and its FUSE mount at
  # $ROOT/tmp/.mount_Venus* would keep remove_root from removing the root at the next run. $fuse_run is the
  # subshell of the `IN ... &`; TERM to its child (timeout) reaches the runtime, which passes it to the app.
  if [ -n "${fuse_run:-}" ]; then pkill -TERM -P "$fuse_run" 2>/dev/null || true; kill "$fuse_run" 2>/dev/null || true; fi
  # The mount points as the kernel lists them (a glob could name a symlink made inside the root), detached lazily:
  # a FUSE server still serving them, or one that died, leaves nothing behind.
  awk -v dir="$ROOT/tmp/.mount_" '{ gsub(/\\040/, " ", $2) } index($2, dir) == 1 { print $2 }' /proc/mounts \
    | while IFS= read -r m; do umount -l "$m" 2>/dev/null || true; done
  for m in tmp/.X11-unix dev/pts dev sys proc; do umount -l "$ROOT/$m" 2>/dev/null || true; done
}
remove_root() {  # never through a mount that is still there (the host's /dev, /proc, X socket)
  cleanup
  if grep -q " $ROOT/" /proc/mounts; then echo "still mounted under $ROOT; not removing it"; return 1; fi
  rm -rf "$ROOT"
}
trap cleanup EXIT
remove_root
rm -rf "$OUT" && mkdir -p "$ROOT" "$OUT"

step "debootstrap --variant=minbase bookworm"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg  # on Ubuntu (CI) too
debootstrap --variant=minbase ${KEYRING:+--keyring=$KEYRING} bookworm "$ROOT" "$MIRROR" > "$OUT/debootstrap.log" 2>&1
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/" 2>/dev/null || true
[ -f /etc/apt/sources.list.d/debian.sources ] && cp /etc/apt/sources.list.d/debian.sources "$ROOT/etc/apt/sources.list.d/"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$ROOT/$m"; done
mkdir -p /tmp/.X11-unix "$ROOT/tmp/.X11-unix" && mount --bind /tmp/.X11-unix "$ROOT/tmp/.X11-unix"  # the X socket, offline
IN() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
# Venus runs offline (a network namespace of its own): the first run needs nothing from the internet.
AS_USER() { unshare --net chroot --userspec=alice:alice "$ROOT" env -i PATH=/usr/bin:/bin HOME=/home/alice LANG=C.UTF-8 USER=alice \
  XDG_RUNTIME_DIR=/tmp/xdg-alice "$@"; }
IN useradd -m -s /bin/bash alice
mkdir -p "$ROOT/tmp/xdg-alice" && chroot "$ROOT" chown alice:alice /tmp/xdg-alice && chmod 700 "$ROOT/tmp/xdg-alice"

step "apt-get install ./$(basename "$DEB") (declared Depends only; $(df -h --output=avail "$ROOT" | tail -1 | tr -d ' ') free)"
ln -f "$DEB" "$ROOT/tmp/venus.deb" 2>/dev/null || cp "$DEB" "$ROOT/tmp/venus.deb"  # a hard link where it can: no copy
IN apt-get update -q > "$OUT/apt.log" 2>&1
IN apt-get install -y -q --no-install-recommends /tmp/venus.deb >> "$OUT/apt.log" 2>&1
rm -f "$ROOT/tmp/venus.deb" && IN apt-get clean
tail -1 "$OUT/apt.log"
test -x "$ROOT/usr/bin/venus" && test -f "$ROOT/usr/share/applications/venus.desktop" \
  && test -f "$ROOT/usr/share/icons/hicolor/256x256/apps/venus.png"
step "every bundled library finds its system libraries (the declared Depends are complete)"
IN sh -c 'I=/opt/venus/_internal; find $I -name "*.so*" -type f | while read f; do
  LD_LIBRARY_PATH=$I ldd "$f" 2>/dev/null | grep "not found" | sed "s|^|${f#$I/}: |"; done' | sort -u > "$OUT/ldd-missing.txt"
if [ -s "$OUT/ldd-missing.txt" ]; then echo "missing system libraries:"; cat "$OUT/ldd-missing.txt"; exit 1; fi

# The question is spoken on the host (espeak-ng is a test tool, not a dependency of Venus).
espeak-ng -v en-us -s 150 -w /tmp/venus-q22k.wav "What is the capital of France?"
sox /tmp/venus-q22k.wav -r 16000 -c 1 "$ROOT/tmp/q.wav" pad 0.3 2.0
chmod 644 "$ROOT/tmp/q.wav"

run_checks() {  # $1: label, $2: the venus command inside the root, $3: "main" to skip the first-run wizard,
  local label=$1 venus=$2 window=${3:-wizard} grace=${4:-0}  # $4: seconds more for the window (extraction)
  step "$label: venus --version"
  AS_USER "$venus" --version | tee "$OUT/$label-version.txt"
  step "$label: venus --check-bundle (native libraries and data files load)"
  AS_USER "$venus" --check-bundle | tee "$OUT/$label-check-bundle.txt"
  step "$label: venus doctor"
  AS_USER "$venus" doctor > "$OUT/$label-doctor.txt" 2>&1 || true
  cat "$OUT/$label-doctor.txt"
  if grep -q "Traceback" "$OUT/$label-doctor.txt"; then echo "doctor printed a traceback"; exit 1; fi
  if grep -E "^\s*(FAIL|fail)" "$OUT/$label-doctor.txt" | grep -i "model"; then echo "a bundled model failed"; exit 1; fi
  step "$label: venus duplex --input q.wav --output a.wav"
  rm -f "$ROOT/tmp/a-$label.wav"
  local s=$(date +%s.%N)
  AS_USER "$venus" duplex --input /tmp/q.wav --output "/tmp/a-$label.wav" > "$OUT/$label-duplex.txt" 2>&1 \
    || { cat "$OUT/$label-duplex.txt"; exit 1; }
  echo "duplex took $(echo "$(date +%s.%N) - $s" | bc) s"; tail -5 "$OUT/$label-duplex.txt"
  cp "$ROOT/tmp/a-$label.wav" "$OUT/"
  $PY installers/linux/wav_speech.py "$OUT/a-$label.wav"
  step "$label: desktop app under Xvfb for 20 s ($window, ${grace} s more to start)"
  if [ "$window" = main ]; then  # as after the first-run wizard: the main window
    AS_USER sh -c 'mkdir -p ~/.config/venus && echo "{\"ui\": {\"first_run_done\": true}}" > ~/.config/venus/settings.json'
  fi
  Xvfb :97 -screen 0 1280x800x24 -nolisten tcp > "$OUT/xvfb.log" 2>&1 & XVFB_PID=$!
  sleep 1
  s=$(date +%s.%N)
  AS_USER DISPLAY=:97 timeout -k 30 $((24 + grace)) "$venus" > "$OUT/$label-app.txt" 2>&1 & local app=$!
  local shown=""
  for _ in $(seq $((200 + 10 * grace))); do  # any visible window on this private display is Venus's
    if DISPLAY=:97 xdotool search --onlyvisible --name . >/dev/null 2>&1; then
      shown=$(echo "$(date +%s.%N) - $s" | bc); break; fi
    sleep 0.1
  done
  echo "window after ${shown:-never} s"
  if [ -n "$shown" ]; then  # a second start brings the running window to the front and exits
    AS_USER DISPLAY=:97 timeout 60 "$venus" > "$OUT/$label-second-start.txt" 2>&1 \
      && grep -q "already running" "$OUT/$label-second-start.txt" \
      || { cat "$OUT/$label-second-start.txt"; echo "a second start did not hand over to the running Venus"; exit 1; }
    cat "$OUT/$label-second-start.txt"
  fi
  sleep "$(echo "20 + $grace - ($(date +%s.%N) - $s)" | bc)" 2>/dev/null || true
  local alive=yes; DISPLAY=:97 xdotool search --onlyvisible --name . >/dev/null 2>&1 || alive=no
  DISPLAY=:97 $PY -c "import mss, sys; getattr(mss, 'MSS', mss.mss)().shot(mon=-1, output=sys.argv[1])" "$OUT/$label-app.png"
  wait $app || true  # timeout ends it at 24 s (plus the grace)
  kill "$XVFB_PID" 2>/dev/null || true; wait "$XVFB_PID" 2>/dev/null || true; XVFB_PID=
  [ -n "$shown" ] || { echo "no Venus window within $((20 + grace)) s"; cat "$OUT/$label-app.txt"; exit 1; }
  [ $alive = yes ] || { echo "the window was gone before $((20 + grace)) s:"; cat "$OUT/$label-app.txt"; exit 1; }
  if grep -q "Traceback" "$OUT/$label-app.txt"; then cat "$OUT/$label-app.txt"; exit 1; fi
}

run_checks deb venus

step "apt-get remove venus: the user's data stays"
IN apt-get remove -y -q venus >> "$OUT/apt.log" 2>&1
test ! -e "$ROOT/opt/venus" && test ! -e "$ROOT/usr/bin/venus"
ls -d "$ROOT/home/alice/.local/share/venus" "$ROOT/home/alice/.config/venus"
echo "removed; kept: $(du -sh "$ROOT/home/alice/.local/share/venus" | cut -f1) in ~/.local/share/venus"

step "AppImage: $(basename "$IMAGE") in the same root (its dependencies stay installed)"
rm -rf "$ROOT/home/alice/.local/share/venus/models"  # the image brings its own models
# where a user keeps a download; a hard link where it can (the image is 755 already), else a copy
ln -f "$IMAGE" "$ROOT/home/alice/Venus.AppImage" 2>/dev/null || install -m 755 "$IMAGE" "$ROOT/home/alice/Venus.AppImage"
APPIMAGE=/home/alice/Venus.AppImage
if "$IMAGE" --appimage-help | grep -q "^Venus AppImage runtime"; then  # ours (not appimagetool's) falls back
  # alice has no FUSE here: /dev/fuse is root's, and minbase has no fusermount3 (fuse3 is not a Depends)
  step "AppImage without FUSE: one line on stderr, then extracted to a temporary folder and run"
  AS_USER $APPIMAGE --version > "$OUT/appimage-nofuse.txt" 2> "$OUT/appimage-nofuse-stderr.txt"
  cat "$OUT/appimage-nofuse.txt" "$OUT/appimage-nofuse-stderr.txt"
  { grep -q "^venus " "$OUT/appimage-nofuse.txt" && [ "$(wc -l < "$OUT/appimage-nofuse-stderr.txt")" = 1 ] \
    && grep -q "cannot mount with FUSE" "$OUT/appimage-nofuse-stderr.txt"; } || { echo "not the expected fallback"; exit 1; }
fi
printf '#!/bin/sh\nexec %s --appimage-extract-and-run "$@"\n' "$APPIMAGE" > "$ROOT/usr/local/bin/venus-appimage"
chmod 755 "$ROOT/usr/local/bin/venus-appimage"
run_checks appimage /usr/local/bin/venus-appimage main 10
test ! -L "$ROOT/home/alice/.local/share/venus/models/SmolLM2-135M-Instruct.Q4_1.gguf"  # copied, not linked
leftover=$(find "$ROOT/tmp" -maxdepth 1 -name ".extract_*")
[ -z "$leftover" ] || { echo "extract-and-run left $leftover behind"; exit 1; }

step "AppImage through a FUSE mount (root in the test root, with Debian's fuse3)"
IN apt-get install -y -q --no-install-recommends fuse3 >> "$OUT/apt.log" 2>&1
if IN sh -c 'exec 3<>/dev/fuse' 2>/dev/null; then
  IN timeout 300 $APPIMAGE --check-bundle > "$OUT/appimage-fuse-check-bundle.txt" 2>&1 & fuse_run=$!
  mounted=""
  for _ in $(seq 100); do  # the image is mounted while it runs (a FUSE mount at /tmp/.mount_Venus*)
    mounted=$(grep -o " $ROOT/tmp/\.mount_Venus[^ ]* fuse[^ ]*" /proc/mounts || true); [ -n "$mounted" ] && break
    sleep 0.1
  done
  fuse_ok=yes; wait $fuse_run || fuse_ok=no
  fuse_run=  # ended: cleanup must not signal a pid that may be reused
  [ $fuse_ok = yes ] || { cat "$OUT/appimage-fuse-check-bundle.txt"; exit 1; }
  cat "$OUT/appimage-fuse-check-bundle.txt"
  echo "mounted:$mounted"
  [ -n "$mounted" ] || { echo "no FUSE mount seen while it ran"; exit 1; }
  if grep -q "cannot mount" "$OUT/appimage-fuse-check-bundle.txt"; then echo "it fell back to extracting"; exit 1; fi
  sleep 1  # the server unmounts as soon as the app exits; the runtime waits up to 1 s for it
  if grep -q "$ROOT/tmp/\.mount_Venus" /proc/mounts || ls -d "$ROOT"/tmp/.mount_Venus* 2>/dev/null; then
    echo "the mount or its folder stayed after the app exited"; exit 1
  fi
else
  echo "/dev/fuse cannot be opened in the test root: no FUSE check"
fi
step "installer-test passed"
[ "${KEEP_ROOT:-0}" = 1 ] || remove_root  # about 2 GB; KEEP_ROOT=1 keeps it for a look inside
