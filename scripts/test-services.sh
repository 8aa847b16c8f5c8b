#!/usr/bin/env bash
# Start what the tests need on a headless machine: a PulseAudio server with a virtual speaker (vsink) and a
# virtual microphone (vmic) that hears whatever is played into vsink, plus a second pair for a separate
# "user" voice. Safe to run twice. Source it (`. scripts/test-services.sh`) so XDG_RUNTIME_DIR stays set.
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/venus-xdg}
mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
if command -v pulseaudio >/dev/null 2>&1; then
  if ! pactl info >/dev/null 2>&1; then
    pulseaudio -D -n --exit-idle-time=-1 --system=false --realtime=no --high-priority=no \
      --load=module-native-protocol-unix \
      --load='module-null-sink sink_name=vsink rate=48000' \
      --load='module-remap-source master=vsink.monitor source_name=vmic' >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do pactl info >/dev/null 2>&1 && break; sleep 0.1; done
    pactl set-default-sink vsink >/dev/null 2>&1 || true
    pactl set-default-source vmic >/dev/null 2>&1 || true
    # keep-alive reader: without it, streams on the null sink stall for about 2 s
    (parecord -d vsink.monitor --latency-msec=10 --raw /dev/null >/dev/null 2>&1 &)
  fi
  pactl info >/dev/null 2>&1 && export VENUS_TEST_AUDIO=pulse
  # one throwaway duplex stream: the very first one on a new machine can hit an ALSA xrun
  if [ -n "${VENUS_TEST_AUDIO:-}" ] && [ -x .venv/bin/python ]; then
    timeout 20 .venv/bin/python -c "import numpy, sounddevice as sd; sd.playrec(numpy.zeros((8000, 1), 'float32'), 16000, channels=1, blocking=True)" >/dev/null 2>&1 || true
  fi
fi
