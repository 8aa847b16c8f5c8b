"""Subcommands of the `venus` command line (no Qt imported here)."""
