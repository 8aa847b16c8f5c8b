"""`venus doctor`: what this machine has, what Venus needs, and the fix for anything missing."""

from __future__ import annotations

import importlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine import paths
from engine.secrets import find_plaintext_secrets, plaintext_warning

if TYPE_CHECKING:
    from engine.settings import Settings


@dataclass(frozen=True)
class Check:
    """One line of the report. `status` is ok / info / warn / fail; fail means the default setup cannot run."""

    name: str
    status: str
    detail: str
    fix: str = ""


def _python_and_os() -> list[Check]:
    ok = sys.version_info >= (3, 11)
    return [
        Check("python", "ok" if ok else "fail", f"{platform.python_version()} ({sys.executable})",
              "" if ok else "install Python 3.11 or newer"),
        Check("os", "ok", f"{platform.system()} {platform.release()} {platform.machine()}"),
    ]


def cpu_features() -> list[str]:
    """SIMD features that matter for llama.cpp, from /proc/cpuinfo (Linux) or the compiled build."""
    wanted = ["avx", "avx2", "fma", "f16c", "avx512f", "amx_tile", "neon", "sse4_2"]
    try:
        flags = set()
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags.update(line.split(":", 1)[1].split())
                break
        return [f for f in wanted if f in flags]
    except OSError:
        return [platform.processor() or "unknown"]


def _cpu() -> Check:
    return Check("cpu", "ok", f"{os.cpu_count()} logical cores; features: {', '.join(cpu_features()) or 'none found'}")


def _llama() -> list[Check]:
    try:
        import llama_cpp
    except Exception as exc:  # ImportError, or OSError from a broken native library
        return [Check("llama-cpp-python", "fail", f"cannot import: {exc}",
                      "run `make setup` (it builds llama-cpp-python with portable CPU flags)")]
    offload = bool(llama_cpp.llama_supports_gpu_offload())
    gpu = "none found"
    if shutil.which("nvidia-smi"):
        proc = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=10)
        gpu = proc.stdout.strip() or "nvidia-smi found no GPU"
    fix = ""
    if gpu != "none found" and not offload:
        fix = 'rebuild with CMAKE_ARGS="-DGGML_CUDA=on" make setup to use the GPU'
    return [
        Check("llama-cpp-python", "ok", f"{llama_cpp.__version__}; GPU offload {'available' if offload else 'not compiled in'}"),
        Check("gpu", "ok" if not fix else "warn", gpu, fix),
    ]


def _torch() -> list[Check]:
    """torch for the torch LLM backend: version, CUDA and the card's free memory, and the backend settings pick."""
    from engine.llm import chosen_backend
    from engine.settings import Settings, load_settings

    llm = (load_settings(keep_copy=False).settings if paths.settings_file().exists() else Settings()).llm
    backend = chosen_backend(llm)
    try:
        import torch
    except Exception as exc:  # ImportError, or OSError from a broken CUDA library
        status = "fail" if backend == "torch" else "info"
        return [Check("torch", status, f"not installed ({exc.__class__.__name__}); LLM backend in use: {backend}",
                      'pip install -e ".[torch]" for the torch backend (README: the CUDA build for a GPU)')]
    if torch.cuda.is_available():
        free, total = torch.cuda.mem_get_info()
        cuda = f"CUDA {torch.version.cuda}: {torch.cuda.get_device_name(0)}, {free / 2**30:.1f} of {total / 2**30:.1f} GiB free"
    else:
        cuda = "CUDA not available" + (" (CPU build)" if torch.version.cuda is None else "")
    where = ""
    if backend == "torch":
        where = f" on {'cuda' if llm.device == 'cuda' or (llm.device == 'auto' and torch.cuda.is_available()) else 'cpu'}"
    fix = ""
    if backend == "torch" and llm.device == "cuda" and not torch.cuda.is_available():
        fix = 'install the CUDA build of torch (README) or set llm.device to "auto"'
    return [Check("torch", "warn" if fix else "ok",
                  f"{torch.__version__}; {cuda}; LLM backend in use: {backend}{where}", fix)]


def _audio() -> list[Check]:
    try:
        import sounddevice as sd

        devices = sd.query_devices()
    except Exception as exc:
        return [Check("audio", "warn", f"PortAudio unavailable: {exc}",
                      "install PortAudio (Debian: apt-get install libportaudio2); text chat still works")]
    inputs = [d["name"] for d in devices if d["max_input_channels"] > 0]
    outputs = [d["name"] for d in devices if d["max_output_channels"] > 0]
    fix = "" if inputs and outputs else "connect a microphone and speakers (or use `venus chat` / file devices)"
    return [
        Check("audio input", "ok" if inputs else "warn", ", ".join(inputs) or "none", fix if not inputs else ""),
        Check("audio output", "ok" if outputs else "warn", ", ".join(outputs) or "none", fix if not outputs else ""),
    ]


def _cameras() -> Check:
    if sys.platform.startswith("linux"):
        nodes = sorted(str(p) for p in Path("/dev").glob("video*"))
        return Check("camera", "ok" if nodes else "warn", ", ".join(nodes) or "none",
                     "" if nodes else "connect a webcam to use vision (optional)")
    return Check("camera", "ok", "probed when the camera is turned on")


def _models() -> list[Check]:
    from engine.models.manage import list_models

    checks = []
    for st in list_models(full=True):
        entry = st.entry
        if st.ok:
            checks.append(Check(f"model {entry.id}", "ok", f"{entry.kind}, verified{'; ' + st.header if st.header else ''}"))
        else:
            status = "fail" if entry.default else "warn"
            fix = "run `venus models install`" if entry.origin == "manifest" else "import or download it again"
            checks.append(Check(f"model {entry.id}", status, "; ".join(st.problems), fix))
    return checks


def _packages() -> list[Check]:
    checks = []
    for module, why in [("faster_whisper", "speech recognition"), ("onnxruntime", "VAD and voices"),
                        ("piper", "neural voice")]:
        try:
            importlib.import_module(module)
            checks.append(Check(module, "ok", why))
        except Exception as exc:
            checks.append(Check(module, "fail", f"cannot import ({exc})", "run `make setup`"))
    espeak = shutil.which("espeak-ng")
    checks.append(Check("espeak-ng", "ok" if espeak else "warn", espeak or "not found",
                        "" if espeak else "install espeak-ng for the light fallback voice"))
    return checks


def _keyring() -> Check:
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
    except Exception as exc:
        return Check("keyring", "warn", f"unavailable: {exc}", "install a Secret Service (gnome-keyring or KWallet)")
    if isinstance(backend, fail.Keyring):
        return Check("keyring", "warn", "no OS keyring backend found",
                     "start a Secret Service (gnome-keyring or KWallet); API keys cannot be saved until then")
    return Check("keyring", "ok", f"{type(backend).__module__}.{type(backend).__name__}")


def _database() -> Check:
    db = paths.database_file()
    try:
        from engine.timeline.store import database_schema_version
    except ImportError:
        return Check("database", "ok", f"{db} (schema versioning not available in this build)")
    try:
        version = database_schema_version(db)
    except Exception as exc:
        return Check("database", "fail", f"{db}: {exc}", "move the file aside; Venus will create a new one")
    return Check("database", "ok", f"{db}, schema {version or 'not created yet'}")


def _settings() -> list[Check]:
    from engine.settings import load_settings

    path = paths.settings_file()
    if not path.exists():
        return [Check("settings", "info", f"{path} not created yet: defaults in use",
                      "the first-run setup or Settings creates it")]
    result = load_settings(keep_copy=False)  # the doctor only reads: no copy of a broken file
    if result.problem:
        return [Check("settings", "warn", result.problem, f"fix the field named in {path}, or delete the file")]
    return [Check("settings", "ok", str(path)), _secrets_in(result.settings)]


def _secrets_in(settings: Settings) -> Check:
    """Warn about credentials written in clear in the settings file (they belong in the keyring)."""
    found = find_plaintext_secrets(settings.harness.mcp_servers)
    if not found:
        return Check("secrets", "ok", "the settings file holds only keyring: references")
    return Check("secrets", "warn", f"{plaintext_warning(found)} ({paths.settings_file()})",
                 "open Settings → MCP servers and press 'Move to keyring' (each becomes a keyring:NAME reference)")


def run_checks(extra: Sequence[Check] = ()) -> list[Check]:
    """Every check, in report order; `extra` (the desktop app's, from app/) goes after the packages."""
    checks = _python_and_os() + [_cpu()] + _llama() + _torch() + _packages() + list(extra) + _audio() + [_cameras()]
    checks += _models() + [_keyring(), *_settings(), _database()]
    checks.append(Check("folders", "ok", f"models {paths.models_dir()}; logs {paths.log_dir()}; config {paths.config_dir()}"))
    return checks


def format_report(checks: list[Check]) -> str:
    """Human-readable report, one line per check plus the fix under it."""
    marks = {"ok": "[ ok ]", "info": "[info]", "warn": "[warn]", "fail": "[FAIL]"}
    lines = []
    for c in checks:
        lines.append(f"{marks[c.status]} {c.name}: {c.detail}")
        if c.fix:
            lines.append(f"       fix: {c.fix}")
    failed = sum(c.status == "fail" for c in checks)
    lines.append("Venus is ready." if not failed else f"{failed} problem(s) stop the default setup; see the fixes above.")
    return "\n".join(lines)
