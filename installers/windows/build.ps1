# Windows: the frozen Venus (the shared installers/venus.spec) and its Inno Setup installer in dist\.
# Needs Python 3.11 with Venus installed (pip install -e .), PyInstaller and Pillow, and Inno Setup 6 (iscc).
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..\..")
$version = python -c "from importlib.metadata import version; print(version('venus-assistant'))"
venus models install --defaults-only
python -m PyInstaller --noconfirm --distpath dist\pyinstaller --workpath build\pyinstaller installers\venus.spec
& dist\pyinstaller\venus\venus.exe --version
if ($LASTEXITCODE -ne 0) { throw "the frozen venus.exe did not start" }
python -c "from PIL import Image; Image.open('assets/venus.png').save('build/venus.ico', sizes=[(16,16),(32,32),(48,48),(256,256)])"
iscc /DVersion=$version installers\windows\venus.iss
if ($LASTEXITCODE -ne 0) { throw "iscc failed" }
