#!/usr/bin/env bash
# Run the test suite the way CI does: a virtual display, a PulseAudio server with virtual devices, and an
# unlocked Secret Service keyring, all started here and gone when the tests end.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/test-services.sh
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export PYTHONUNBUFFERED=1
inner='eval "$(printf pass | gnome-keyring-daemon --unlock --components=secrets)" >/dev/null; export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK; exec .venv/bin/python -m pytest "$@"'
if command -v xvfb-run >/dev/null 2>&1 && command -v dbus-run-session >/dev/null 2>&1; then
  exec xvfb-run -a -s "-screen 0 1280x1024x24" dbus-run-session -- sh -c "$inner" pytest "$@"
fi
exec .venv/bin/python -m pytest "$@"
