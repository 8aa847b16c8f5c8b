#!/usr/bin/env bash
# `make installer`: the frozen Venus (PyInstaller one-folder), then dist/venus_<version>_amd64.deb and the AppImage
# (dist/Venus-<version>-x86_64.AppImage when appimagetool or an AppImage runtime is at hand, else the AppDir and
# its squashfs, dist/Venus-<version>-x86_64.squashfs). Needs `make setup` first; runs from the repository root.
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
cp -a "$BUNDLE" "$DEB_ROOT/opt/venus"
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

# --- AppImage: a read-only image; models and data go to the user's folders (installers/launcher.py) ---
APPDIR=build/appimage/Venus.AppDir
rm -rf "$APPDIR" && mkdir -p "$APPDIR/usr/lib" "$APPDIR/usr/share/applications" \
  "$APPDIR/usr/share/icons/hicolor/256x256/apps"
cp -a "$BUNDLE" "$APPDIR/usr/lib/venus"
install -m 755 installers/linux/AppRun "$APPDIR/AppRun"
install -m 644 assets/venus.desktop "$APPDIR/venus.desktop"
install -m 644 assets/venus.desktop "$APPDIR/usr/share/applications/venus.desktop"
install -m 644 assets/venus.png "$APPDIR/venus.png"
install -m 644 assets/venus.png "$APPDIR/usr/share/icons/hicolor/256x256/apps/venus.png"
ln -sf venus.png "$APPDIR/.DirIcon"
APPIMAGE_OUT="dist/Venus-${VERSION}-x86_64.AppImage"
SQUASHFS="dist/Venus-${VERSION}-x86_64.squashfs"
rm -f "$APPIMAGE_OUT" "$SQUASHFS"
if command -v appimagetool >/dev/null; then  # CI downloads it; Debian and PyPI do not carry it
  ARCH=x86_64 appimagetool --no-appstream "$APPDIR" "$APPIMAGE_OUT"
  echo "built $APPIMAGE_OUT ($(du -h "$APPIMAGE_OUT" | cut -f1))"
else
  mksquashfs "$APPDIR" "$SQUASHFS" -root-owned -noappend -comp zstd -Xcompression-level 15 -quiet -no-progress
  if [ -n "${APPIMAGE_RUNTIME:-}" ]; then  # the type2-runtime stub: runtime + squashfs = an AppImage
    cat "$APPIMAGE_RUNTIME" "$SQUASHFS" > "$APPIMAGE_OUT" && chmod 755 "$APPIMAGE_OUT" && rm "$SQUASHFS"
    echo "built $APPIMAGE_OUT ($(du -h "$APPIMAGE_OUT" | cut -f1))"
  else
    echo "built $SQUASHFS ($(du -h "$SQUASHFS" | cut -f1)); no appimagetool or APPIMAGE_RUNTIME here, so no AppImage header"
  fi
fi
echo "make installer: $(( $(date +%s) - t0 )) s"
