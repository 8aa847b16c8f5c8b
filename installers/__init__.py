"""Build specs and per-OS scripts for the Venus installers (docs/INSTALLERS.md)."""
