; Inno Setup script for Venus on Windows: installs the PyInstaller folder (installers/venus.spec) per user,
; with a Start-menu entry; uninstalling leaves the user's data in %LOCALAPPDATA%\venus.
; Build (from the repository root): iscc /DVersion=0.1.0 installers\windows\venus.iss
#ifndef Version
  #define Version "0.1.0"
#endif

[Setup]
AppId={{8C4D3F2E-6B1A-4E57-9C0D-5A7E1B2C3D4F}
AppName=Venus
AppVersion={#Version}
AppPublisher=The Venus developers
DefaultDirName={autopf}\Venus
DefaultGroupName=Venus
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir=..\..\dist
OutputBaseFilename=Venus-{#Version}-windows-x64-setup
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
Compression=lzma2/fast
SolidCompression=no
SetupIconFile=..\..\build\venus.ico
UninstallDisplayIcon={app}\Venus.exe
ChangesEnvironment=yes

[Files]
Source: "..\..\dist\pyinstaller\venus\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Venus"; Filename: "{app}\Venus.exe"
Name: "{autodesktop}\Venus"; Filename: "{app}\Venus.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked
Name: "addtopath"; Description: "Add the venus command to PATH"

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; \
  Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\Venus.exe"; Description: "Start Venus"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKCU, 'Environment', 'Path', Path) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;
