#!/usr/bin/env bash
# Start Venus: the desktop app where there is a display, the terminal conversation otherwise.
cd "$(dirname "$0")/.."
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || [ "$(uname)" != Linux ]; then
  exec .venv/bin/venus "$@"
fi
echo "No display here: starting the terminal conversation (venus chat). Type /quit to leave."
exec .venv/bin/venus chat "$@"
