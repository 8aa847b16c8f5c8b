#!/usr/bin/env bash
# `make installer`: the frozen Venus (PyInstaller one-folder), then dist/venus_<version>_amd64.deb and
# dist/Venus-<version>-x86_64.AppImage (our own runtime, installers/linux/appimage, plus the AppDir's squashfs; or
# appimagetool's, when it is on PATH). Needs `make setup` first (it installs the runtime's build packages); runs
# from the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
VERSION=$($PY -c "from importlib.metadata import version; print(version('venus-assistant'))")
ARCH=amd64
BUNDLE=dist/pyinstaller/venus
t0=$(date +%s)

$PY -c "import PyInstaller" 2>/dev/null || $PY -m pip install -q "pyinstaller>=6.10,<7"
.venv/bin/venus models install --defaults-only   # the bundled models come from the models folder, verified

if [ "${SKIP_FREEZE:-0}" != 1 ] || [ ! -x "$BUNDLE/venus" ]; then
  $PY -m PyInstaller --noconfirm --log-level WARN --distpath dist/pyinstaller --workpath build/pyinstaller \
    installers/venus.spec
fi
"$BUNDLE/venus" --version
"$BUNDLE/venus" --check-bundle
echo "frozen in $(( $(date +%s) - t0 )) s: $(du -sh "$BUNDLE" | cut -f1)"

# --- .deb: /opt/venus, /usr/bin/venus, the desktop entry and icon; the user's data is never the package's ---
DEB_ROOT=build/deb/venus
rm -rf "$DEB_ROOT" && mkdir -p "$DEB_ROOT/DEBIAN" "$DEB_ROOT/opt" "$DEB_ROOT/usr/bin" \
  "$DEB_ROOT/usr/share/applications" "$DEB_ROOT/usr/share/icons/hicolor/256x256/apps" \
  "$DEB_ROOT/usr/share/icons/hicolor/scalable/apps"
cp -al "$BUNDLE" "$DEB_ROOT/opt/venus"  # hard links: the staging costs no disk (CI runners have little)
ln -s /opt/venus/venus "$DEB_ROOT/usr/bin/venus"
install -m 644 assets/venus.desktop "$DEB_ROOT/usr/share/applications/venus.desktop"
install -m 644 assets/venus.png "$DEB_ROOT/usr/share/icons/hicolor/256x256/apps/venus.png"
install -m 644 assets/venus.svg "$DEB_ROOT/usr/share/icons/hicolor/scalable/apps/venus.svg"
INSTALLED_KB=$(du -sk --exclude=DEBIAN "$DEB_ROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@INSTALLED_KB@/$INSTALLED_KB/" \
  installers/linux/control.in > "$DEB_ROOT/DEBIAN/control"
mkdir -p dist
DEB="dist/venus_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zzstd -z10 --build "$DEB_ROOT" "$DEB" >/dev/null 2>&1 \
  || dpkg-deb --root-owner-group -Zxz --build "$DEB_ROOT" "$DEB"
echo "built $DEB ($(du -h "$DEB" | cut -f1), installed $((INSTALLED_KB / 1024)) MB)"
rm -rf "$DEB_ROOT"

# --- AppImage: a read-only image; models and data go to the user's folders (installers/launcher.py) ---
APPDIR=build/appimage/Venus.AppDir
rm -rf "$APPDIR" && mkdir -p "$APPDIR/usr/lib" "$APPDIR/usr/share/applications" \
  "$APPDIR/usr/share/icons/hicolor/256x256/apps"
cp -al "$BUNDLE" "$APPDIR/usr/lib/venus"
install -m 755 installers/linux/AppRun "$APPDIR/AppRun"
install -m 644 assets/venus.desktop "$APPDIR/venus.desktop"
install -m 644 assets/venus.desktop "$APPDIR/usr/share/applications/venus.desktop"
install -m 644 assets/venus.png "$APPDIR/venus.png"
install -m 644 assets/venus.png "$APPDIR/usr/share/icons/hicolor/256x256/apps/venus.png"
ln -sf venus.png "$APPDIR/.DirIcon"
APPIMAGE_OUT="dist/Venus-${VERSION}-x86_64.AppImage"
rm -f "$APPIMAGE_OUT" dist/Venus-*-x86_64.squashfs  # the latter: what builds before our runtime left
if [ "${USE_APPIMAGETOOL:-0}" = 1 ]; then  # AppImage's own tool and runtime, only when asked for (GitHub only)
  ARCH=x86_64 appimagetool --no-appstream "$APPDIR" "$APPIMAGE_OUT"
else  # an AppImage is its runtime (a static ELF) with the AppDir's squashfs appended
  # quiet unless it fails: the linker's one warning (libfuse's unused module loader calls dlopen) is expected
  if ! log=$(make -s -C installers/linux/appimage O="$(pwd)/build/appimage" 2>&1); then echo "$log"; exit 1; fi
  mksquashfs "$APPDIR" build/appimage/Venus.squashfs -root-owned -noappend -comp zstd -Xcompression-level 15 \
    -quiet -no-progress
  cat build/appimage/runtime-x86_64 build/appimage/Venus.squashfs > "$APPIMAGE_OUT.part"  # no half file in dist/
  chmod 755 "$APPIMAGE_OUT.part" && mv "$APPIMAGE_OUT.part" "$APPIMAGE_OUT" && rm build/appimage/Venus.squashfs
fi
APPIMAGE_EXTRACT_AND_RUN=${USE_APPIMAGETOOL:+1} "$APPIMAGE_OUT" --version  # mounted with FUSE, or extracted where FUSE is missing (our runtime falls back)
echo "built $APPIMAGE_OUT ($(du -h "$APPIMAGE_OUT" | cut -f1))"
rm -rf "$APPDIR"
# KEEP_BUNDLE=0 (CI): the frozen folder goes too, once packaged (1.2 GB; SKIP_FREEZE=1 reuses it otherwise)
[ "${KEEP_BUNDLE:-1}" = 1 ] || rm -rf "$BUNDLE" build/pyinstaller
echo "make installer: $(( $(date +%s) - t0 )) s"
