#!/usr/bin/env bash
# macOS: Venus.app (PyInstaller, the shared installers/venus.spec) in a .dmg. Signing and notarization are left to
# the release machine: set CODESIGN_IDENTITY to sign the .app (hardened runtime, installers/macos/entitlements.plist).
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=$(python -c "from importlib.metadata import version; print(version('venus-assistant'))")
venus models install --defaults-only
python -m PyInstaller --noconfirm --distpath dist/pyinstaller --workpath build/pyinstaller installers/venus.spec
APP=dist/pyinstaller/Venus.app
"$APP/Contents/MacOS/venus" --version
if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  codesign --deep --force --options runtime --entitlements installers/macos/entitlements.plist \
    --sign "$CODESIGN_IDENTITY" "$APP"
fi
mkdir -p dist build/dmg && rm -rf build/dmg/* && cp -R "$APP" build/dmg/ && ln -s /Applications build/dmg/Applications
hdiutil create -volname "Venus $VERSION" -srcfolder build/dmg -ov -format UDZO "dist/Venus-$VERSION-macos-$(uname -m).dmg"
