#!/usr/bin/env bash
# Cold start of the desktop app, frozen vs source, on this machine: seconds from exec to Venus's window shown
# (xdotool, a virtual display) and to "listening" (its microphone stream open on the PulseAudio test server).
# Usage: bash installers/linux/startup.sh [rounds]   (each run uses fresh settings and data folders; same models)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-3}
. scripts/test-services.sh
MODELS=${VENUS_MODELS_DIR:-$HOME/.local/share/venus/models}
Xvfb :96 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & XVFB=$!
trap 'kill $XVFB 2>/dev/null || true' EXIT
sleep 1
tree() {  # a process and all its descendants (the AppImage's runtime starts the app as its child)
  local pid
  for pid in "$@"; do echo "$pid"; tree $(ps -o pid= --ppid "$pid" 2>/dev/null); done
}
measure() {  # $1 label, $2 models folder ("fresh": an empty one, as on a first start), rest: command
  local label=$1 models=$2; shift 2
  local run=$ROUND
  {
    local tmp; tmp=$(mktemp -d)
    mkdir -p "$tmp/config" && echo '{"ui": {"first_run_done": true}}' > "$tmp/config/settings.json"
    [ "$models" = fresh ] && local use_models=$tmp/models || local use_models=$models
    local s; s=$(date +%s.%N)
    DISPLAY=:96 VENUS_CONFIG_DIR=$tmp/config VENUS_DATA_DIR=$tmp/data VENUS_LOG_DIR=$tmp/log \
      VENUS_MODELS_DIR=$use_models "$@" >"$tmp/out.txt" 2>&1 & local pid=$!
    local window="" listening=""
    for _ in $(seq 600); do
      local pids; pids=$(tree "$pid")
      for p in $pids; do
        [ -z "$window" ] && DISPLAY=:96 xdotool search --onlyvisible --pid "$p" >/dev/null 2>&1 && window=$(echo "$(date +%s.%N) - $s" | bc)
        [ -z "$listening" ] && pactl list source-outputs 2>/dev/null | grep -q "application.process.id = \"$p\"" \
          && listening=$(echo "$(date +%s.%N) - $s" | bc)
      done
      [ -n "$window" ] && [ -n "$listening" ] && break
      sleep 0.05
    done
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
    printf '%s run %d: window %.2f s, listening %.2f s\n' "$label" "$run" "${window:-nan}" "${listening:-nan}"
    rm -rf "$tmp"
  }
}
for ROUND in $(seq "$RUNS"); do  # interleaved, so load from other work falls on every column alike
  measure source "$MODELS" .venv/bin/venus
  [ -x dist/pyinstaller/venus/venus ] || continue
  measure "frozen, first start (.deb: models linked)" fresh dist/pyinstaller/venus/venus
  measure "frozen, first start (AppImage: models copied)" fresh env APPIMAGE=/tmp/Venus.AppImage dist/pyinstaller/venus/venus
  measure "frozen, later starts" "$MODELS" dist/pyinstaller/venus/venus
  for image in dist/Venus-*-x86_64.AppImage; do
    [ -x "$image" ] || continue
    [ -r /dev/fuse ] && measure "AppImage file, FUSE mount, first start" fresh "$image"
    measure "AppImage file, no FUSE (extracted each start), first start" fresh env APPIMAGE_EXTRACT_AND_RUN=1 "$image"
  done
done
