#!/usr/bin/env bash
# Set up everything Venus needs, idempotently: system packages (apt, when root on Debian/Ubuntu), the
# virtualenv at .venv, llama-cpp-python built with portable CPU flags, Venus itself, and the default models.
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM_PACKAGES=(
  # Qt widgets and the virtual display used by tests
  libegl1 libgl1 libfontconfig1 fontconfig-config fonts-dejavu-core libfreetype6 libglib2.0-0 libdbus-1-3
  libx11-6 libxkbcommon0 xvfb xauth libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libx11-xcb1
  # audio, keyring, speech, clipboard
  libportaudio2 libsndfile1 pulseaudio pulseaudio-utils gnome-keyring dbus dbus-x11 espeak-ng sox xclip
  # building llama-cpp-python from source
  build-essential cmake git python3-venv python3-dev
  # installers (make installer): the AppImage's squashfs and our AppImage runtime (installers/linux/appimage),
  # a static ELF linked with squashfuse, FUSE 3 and squashfuse's five decompressors; fuse3 to mount AppImages
  squashfs-tools libsquashfuse-dev libfuse3-dev zlib1g-dev liblzma-dev liblz4-dev liblzo2-dev libzstd-dev fuse3
  # the installer test (make installer-test, run by .ci/run): a fresh Debian root, and the window watched from outside
  debootstrap debian-archive-keyring xdotool bc
)

install_system_packages() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=()
    for p in "${SYSTEM_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    if [ ${#missing[@]} -gt 0 ]; then
      echo "venus setup: installing system packages: ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
  elif command -v apt-get >/dev/null 2>&1; then
    echo "venus setup: not root; if anything below fails, install: sudo apt-get install ${SYSTEM_PACKAGES[*]}"
  else
    echo "venus setup: not Debian/Ubuntu; install PortAudio, espeak-ng, sox and a C/C++ toolchain with cmake yourself."
  fi
}

PYTHON=${PYTHON:-python3}
install_system_packages
if [ ! -x .venv/bin/python ]; then
  echo "venus setup: creating .venv"
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip wheel
fi
PIP=(.venv/bin/python -m pip install -q)

# llama.cpp's default -march=native build crashes on CPUs with AMX; build a portable AVX2 one unless the user
# asks for something else (CUDA: CMAKE_ARGS="-DGGML_CUDA=on" make setup).
if ! .venv/bin/python -c "import llama_cpp" >/dev/null 2>&1; then
  echo "venus setup: building llama-cpp-python (several minutes on 2 cores)"
  export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
  "${PIP[@]}" --no-cache-dir "llama-cpp-python>=0.3.16"
fi

stamp=.venv/.venus-installed
want=$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "venus setup: installing Venus and its Python dependencies"
  "${PIP[@]}" -e ".[dev]"
  echo "$want" > "$stamp"
fi

.venv/bin/venus models install
