"""The download manager against a real HTTP server on 127.0.0.1: resume, checksum, progress."""

from __future__ import annotations

import hashlib
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from engine.errors import DownloadError
from engine.models.download import ChecksumFormatError, DownloadOptions, download


@dataclass
class _Served:
    payload: bytes
    cut_after: int | None = None  # first request dies after this many body bytes
    requests: list[str] = field(default_factory=list)


def _handler(served: _Served):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            served.requests.append(self.headers.get("Range", ""))
            start = 0
            if rng := self.headers.get("Range"):
                start = int(rng.split("=")[1].split("-")[0])
                if start >= len(served.payload):
                    self.send_response(416)
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(served.payload) - 1}/{len(served.payload)}")
            else:
                self.send_response(200)
            body = served.payload[start:]
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if served.cut_after is not None:
                cut, served.cut_after = served.cut_after, None
                self.wfile.write(body[:cut])
                self.wfile.flush()
                self.connection.shutdown(2)  # drop the connection mid-body
                return
            self.wfile.write(body)

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, _Served]]:
    served = _Served(payload=bytes(range(256)) * 4096)  # 1 MiB
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/model.gguf", served
    httpd.shutdown()


def test_download_resumes_after_a_cut_connection(server, tmp_path) -> None:
    url, served = server
    served.cut_after = 300_000
    seen: list[tuple[int, int | None]] = []
    dest = download(url, hashlib.sha256(served.payload).hexdigest(), tmp_path / "m.gguf",
                    progress=lambda done, total: seen.append((done, total)),
                    options=DownloadOptions(backoff_s=0.01))
    assert dest.read_bytes() == served.payload
    assert len(served.requests) == 2 and served.requests[0] == ""
    resumed_at = int(served.requests[1].removeprefix("bytes=").rstrip("-"))
    assert 0 < resumed_at <= 300_000, "the second request resumes from the bytes already received"
    assert seen[-1] == (len(served.payload), len(served.payload))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen), "progress never goes backwards"
    assert not (tmp_path / "m.gguf.part").exists()


def test_wrong_checksum_is_rejected_and_nothing_half_written_remains(server, tmp_path) -> None:
    url, served = server
    with pytest.raises(DownloadError, match="expected 0000"):
        download(url, "0" * 64, tmp_path / "m.gguf", options=DownloadOptions(backoff_s=0.01))
    assert list(tmp_path.iterdir()) == []


def test_a_partial_file_from_an_earlier_run_is_resumed(server, tmp_path) -> None:
    url, served = server
    (tmp_path / "m.gguf.part").write_bytes(served.payload[:123_456])
    download(url, hashlib.sha256(served.payload).hexdigest(), tmp_path / "m.gguf")
    assert served.requests == ["bytes=123456-"]
    assert (tmp_path / "m.gguf").read_bytes() == served.payload


def test_unreachable_server_keeps_the_partial_and_says_how_to_resume(tmp_path) -> None:
    with pytest.raises(DownloadError, match="run the same command again to resume"):
        download("http://127.0.0.1:9/model.gguf", "a" * 64, tmp_path / "m.gguf",
                 options=DownloadOptions(retries=1, backoff_s=0.01))


def test_bad_checksum_argument_is_a_value_error(tmp_path) -> None:
    with pytest.raises(ValueError, match="64 hex digits"):
        download("http://127.0.0.1:9/x", "xyz", tmp_path / "x")
    with pytest.raises(ChecksumFormatError, match=r"not hex \('g'\)"):
        download("http://127.0.0.1:9/x", "g" * 64, tmp_path / "x")


def _venus_models_download(url: str, sha256: str, models_dir) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "models", "download", url, "--sha256", sha256],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "VENUS_MODELS_DIR": str(models_dir)})


def _error_line(proc: subprocess.CompletedProcess) -> str:
    """The last stderr line, after asserting the command failed without a traceback."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr.strip().splitlines()[-1]


def test_venus_models_download_with_a_malformed_checksum_says_so_in_one_line(server, tmp_path) -> None:
    """`--sha256 00` fails before any byte is fetched, with one line naming the problem and no traceback."""
    url, served = server
    proc = _venus_models_download(url, "00", tmp_path / "models")
    line = _error_line(proc)
    assert line.startswith("venus: --sha256 must be 64 hex digits, got '00' (2 characters)")
    assert line.endswith("[download-bad-checksum]") and proc.stderr.count("\n") == 1
    assert served.requests == [] and not (tmp_path / "models").exists()


def test_venus_models_download_with_a_wrong_checksum_names_the_mismatch(server, tmp_path) -> None:
    """A well-formed but wrong checksum downloads, finds the mismatch, deletes the file and says both sums."""
    url, served = server
    proc = _venus_models_download(url, "0" * 64, tmp_path / "models")
    line = _error_line(proc)
    actual = hashlib.sha256(served.payload).hexdigest()
    assert line.startswith("venus: checksum mismatch:") and actual in line and "expected " + "0" * 64 in line
    assert line.endswith("[download-failed]")
    assert list((tmp_path / "models").iterdir()) == []


def test_venus_models_download_rejects_a_url_that_is_not_http(tmp_path) -> None:
    proc = _venus_models_download("file:///etc/passwd", "a" * 64, tmp_path / "models")
    assert "is not an http:// or https:// URL" in _error_line(proc)
