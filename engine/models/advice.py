"""Advice for this machine: which catalog models fit, which are tight or too big, and one recommended per kind.

The machine is a `MachineFacts` record (memory, cores, GPU, free disk), measured by `MachineFacts.this()` or given
by a caller (tests, or a UI asking "what if"). The rules are a few documented constants, not per-model cases:
memory against the model's stated need, disk against the download, and for LLMs the decode speed expected from
memory bandwidth per core, replaced by the measured speed once the probe has run (engine.models.probe).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

import psutil

from engine import paths
from engine.errors import VenusError
from engine.models.catalog import Catalog, CatalogEntry, CatalogKind, load_catalog
from engine.models.probe import LLM_OK_TOKENS_PER_S, ProbeResult, SpeedClass, read_probe, speed_class

# A model may take this share of the machine's memory and still leave room for the other models, the app and
# the desktop; up to TIGHT_RAM_SHARE it runs, but other programs may be pushed to swap.
FIT_RAM_SHARE = 0.5
TIGHT_RAM_SHARE = 0.8
# Decoding reads every weight once per token; one core streams about 2.5 GB/s, so each core carries about 250 MB
# of weights at 10 tokens/s (the same figure as the first-run wizard's recommendation).
BYTES_PER_CORE_AT_10_TPS = 250_000_000
# A GPU's memory bandwidth, conservatively (a mid-range card): tokens/s = this / weights.
GPU_BYTES_PER_S = 200_000_000_000
MIN_TOKENS_PER_S = 3.0  # below this an LLM is "tight" however much memory there is: too slow to talk
# Speech recognition decodes each utterance several times; about 75 MB of weights per core keeps it early.
ASR_BYTES_PER_CORE = 75_000_000
DISK_MARGIN = 1.05  # room for the partial file and the hash stamps


class Fit(StrEnum):
    """Whether a model suits this machine."""

    FITS = "fits"
    TIGHT = "tight"  # runs, but slowly or with little memory to spare
    TOO_BIG = "too big"


@dataclass(frozen=True)
class MachineFacts:
    """What the advice looks at. Sizes in bytes; gpu_vram_bytes is 0 when there is no usable GPU."""

    ram_total_bytes: int
    ram_available_bytes: int
    physical_cores: int
    disk_free_bytes: int  # in the models folder
    gpu_name: str = ""
    gpu_vram_bytes: int = 0  # only counted when llama.cpp was built with GPU offload

    def __post_init__(self) -> None:
        if self.ram_total_bytes <= 0 or self.physical_cores <= 0 or self.disk_free_bytes < 0:
            raise ValueError(f"MachineFacts: memory and cores must be > 0, disk >= 0; got {self}")

    @classmethod
    def this(cls, models_dir: Path | None = None) -> MachineFacts:
        """Measure this computer: psutil for memory and cores, the models folder's disk, nvidia-smi for a GPU."""
        memory = psutil.virtual_memory()
        folder = models_dir or paths.models_dir()
        while not folder.exists() and folder != folder.parent:  # not created yet: the disk it will be on
            folder = folder.parent
        name, vram = _nvidia_gpu() if _gpu_offload() else ("", 0)
        return cls(int(memory.total), int(memory.available), psutil.cpu_count(logical=False) or psutil.cpu_count() or 1,
                   int(shutil.disk_usage(folder).free), name, vram)

    def describe(self) -> str:
        """"4 cores, 15.6 GB memory (9.1 GB free), 120 GB free disk, NVIDIA ... 24 GB"."""
        gpu = f", {self.gpu_name} {self.gpu_vram_bytes / 1e9:.0f} GB" if self.gpu_vram_bytes else ", no GPU offload"
        return (f"{self.physical_cores} core{'s' if self.physical_cores != 1 else ''}, "
                f"{self.ram_total_bytes / 1e9:.1f} GB memory ({self.ram_available_bytes / 1e9:.1f} GB free), "
                f"{self.disk_free_bytes / 1e9:.0f} GB free disk{gpu}")


def _gpu_offload() -> bool:
    try:
        import llama_cpp

        return bool(llama_cpp.llama_supports_gpu_offload())
    except Exception:  # no llama.cpp, or a broken native library: `venus doctor` reports it
        return False


def _nvidia_gpu() -> tuple[str, int]:
    if not shutil.which("nvidia-smi"):
        return "", 0
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10).stdout
        name, mib = out.strip().splitlines()[0].rsplit(",", 1)
        return name.strip(), int(float(mib)) * 1024 * 1024
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return "", 0


@dataclass(frozen=True)
class Advice:
    """One catalog model judged for one machine: the row of `venus models catalog` and of the app's Models page."""

    entry: CatalogEntry
    fit: Fit
    reason: str  # why, in words: "needs 5.6 GB of 4.0 GB memory"
    on_gpu: bool = False  # fits in the GPU's memory (LLMs and projectors)
    installed: bool = False
    recommended: bool = False  # the one suggested for its kind on this machine
    expected_tokens_per_s: float | None = None  # LLMs: from memory bandwidth, before any probe
    probe: ProbeResult | None = None  # measured after download, when it has run

    @property
    def speed(self) -> SpeedClass | None:
        """The measured speed class, else the expected one (LLMs), else None."""
        if self.probe is not None:
            return self.probe.speed
        if self.expected_tokens_per_s is not None:
            return speed_class("llm", self.expected_tokens_per_s)
        return None

    def speed_text(self) -> str:
        """"41.8 tokens/s (fast)" when measured, "~12 tokens/s (ok, expected)" before, "" when unknown."""
        if self.probe is not None:
            return self.probe.describe()
        if self.expected_tokens_per_s is not None:
            return f"~{self.expected_tokens_per_s:.0f} tokens/s ({self.speed}, expected)"
        return ""

    def to_json(self) -> dict:
        """A plain dict for `venus models catalog --json` and the app."""
        e = self.entry
        return {
            "id": e.id, "kind": e.kind.value, "title": e.title, "publisher": e.publisher, "parameters": e.parameters,
            "size_bytes": e.size_bytes, "size_exact": e.exact, "ram_bytes": e.ram_bytes, "vram_bytes": e.vram_bytes,
            "license": e.license.model_dump(), "languages": list(e.languages), "good_at": e.good_at,
            "tool_calls": e.tool_calls, "projector": e.projector,
            "files": [f.model_dump(mode="json") for f in e.files],
            "fit": self.fit.value, "reason": self.reason, "on_gpu": self.on_gpu, "installed": self.installed,
            "recommended": self.recommended, "expected_tokens_per_s": self.expected_tokens_per_s,
            "speed": self.speed.value if self.speed else None, "speed_text": self.speed_text(),
            "probe": None if self.probe is None else {"metric": self.probe.metric, "value": self.probe.value,
                                                      "threads": self.probe.threads,
                                                      "measured_at": self.probe.measured_at},
        }


def expected_tokens_per_s(entry: CatalogEntry, machine: MachineFacts, *, on_gpu: bool = False) -> float | None:
    """Decode speed expected from memory bandwidth (LLMs only): cores x 250 MB at 10 tokens/s, or the GPU's."""
    if entry.kind != CatalogKind.LLM:
        return None
    weights = entry.size_bytes
    if on_gpu:
        return GPU_BYTES_PER_S / weights
    return 10.0 * machine.physical_cores * BYTES_PER_CORE_AT_10_TPS / weights


def judge(entry: CatalogEntry, machine: MachineFacts, *, installed: bool = False) -> tuple[Fit, str, bool]:
    """(fit, reason, on_gpu) for one model: disk for the download, memory (GPU or RAM), then LLM speed."""
    gb = 1e9
    if not installed and entry.size_bytes * DISK_MARGIN > machine.disk_free_bytes:
        return (Fit.TOO_BIG, f"needs {entry.size_bytes / gb:.1f} GB of disk, "
                             f"{machine.disk_free_bytes / gb:.1f} GB free in the models folder", False)
    gpu_kinds = (CatalogKind.LLM, CatalogKind.PROJECTOR)
    if entry.kind in gpu_kinds and entry.vram_bytes and machine.gpu_vram_bytes >= entry.vram_bytes:
        return Fit.FITS, f"fits in the GPU's {machine.gpu_vram_bytes / gb:.0f} GB (set GPU layers)", True
    need, total = entry.ram_bytes, machine.ram_total_bytes
    memory = f"needs {need / gb:.1f} GB of {total / gb:.1f} GB memory"
    if need > TIGHT_RAM_SHARE * total:
        return Fit.TOO_BIG, memory, False
    if need > FIT_RAM_SHARE * total or need > machine.ram_available_bytes:
        return (Fit.TIGHT, f"{memory} ({machine.ram_available_bytes / gb:.1f} GB free now): "
                           "close other programs", False)
    speed = expected_tokens_per_s(entry, machine)
    if speed is not None and speed < MIN_TOKENS_PER_S:
        return (Fit.TIGHT, f"{memory}, but about {speed:.0f} tokens/s on {machine.physical_cores} cores: "
                           "too slow to talk", False)
    return Fit.FITS, memory, False


def advise(catalog: Catalog | None = None, machine: MachineFacts | None = None, *, language: str = "en",
           installed: set[str] | None = None) -> list[Advice]:
    """Every catalog model judged for `machine` (default: this one), with one recommended per kind for `language`.

    `installed` is the set of installed ids (default: asked of the registry); installed models show their probe.
    """
    from engine.models.get import installed_ids

    catalog = catalog or load_catalog()
    machine = machine or MachineFacts.this()
    installed = installed_ids() if installed is None else installed
    rows = []
    for entry in catalog.models:
        here = entry.id in installed
        fit, reason, on_gpu = judge(entry, machine, installed=here)
        rows.append(Advice(entry, fit, reason, on_gpu, here, False,
                           expected_tokens_per_s(entry, machine, on_gpu=on_gpu), _probe_of(entry.id) if here else None))
    chosen = _recommend(rows, machine, language)
    return [replace(r, recommended=r.entry.id in chosen) for r in rows]


def _probe_of(model_id: str) -> ProbeResult | None:
    from engine.models.registry import get_entry

    try:
        return read_probe(get_entry(model_id))
    except VenusError:
        return None


def _recommend(rows: list[Advice], machine: MachineFacts, language: str) -> set[str]:
    """One id per kind: the biggest fitting model that keeps pace, in the user's language."""
    fitting = [r for r in rows if r.fit == Fit.FITS and (language in r.entry.languages or not r.entry.languages)]
    chosen: set[str] = set()

    def pick(candidates: list[Advice], keeps_pace) -> Advice | None:
        paced = [r for r in candidates if keeps_pace(r)]
        if paced:
            return max(paced, key=lambda r: r.entry.size_bytes)
        return min(candidates, key=lambda r: r.entry.size_bytes, default=None)

    def llm_pace(r: Advice) -> bool:
        speed = r.probe.value if r.probe is not None else r.expected_tokens_per_s
        return speed is not None and speed >= LLM_OK_TOKENS_PER_S

    text_llms = [r for r in fitting if r.entry.kind == CatalogKind.LLM and r.entry.projector is None]
    vision_llms = [r for r in fitting if r.entry.kind == CatalogKind.LLM and r.entry.projector is not None]
    # An English speaker is best served by an English-only whisper; anyone else needs a multilingual one.
    asr = [r for r in fitting if r.entry.kind == CatalogKind.ASR
           and (r.entry.languages == ("en",)) == (language == "en")]
    voices = [r for r in fitting if r.entry.kind == CatalogKind.TTS]
    for best in (pick(text_llms, llm_pace),
                 pick(asr, lambda r: r.entry.size_bytes <= ASR_BYTES_PER_CORE * machine.physical_cores),
                 pick(voices, lambda r: True)):
        if best is not None:
            chosen.add(best.entry.id)
    vision = pick(vision_llms, llm_pace)
    projectors = {r.entry.id for r in fitting if r.entry.kind == CatalogKind.PROJECTOR}
    if vision is not None and vision.entry.projector in projectors:
        chosen.add(vision.entry.projector)  # the camera's pair: its projector is the projector recommended
    return chosen
