"""The curated catalog of models a user can download (engine/models/catalog.json), schema-checked on load.

Each entry names its files with the publisher's download URL, a size (exact when a sha256 is given, approximate
otherwise), the licence, the memory it needs, its languages and what it is good at. `venus models get ID`
(engine.models.get) installs an entry into the models folder under the same id, so the registry resolves it
like a shipped model and settings such as `llm.model` can name it.

For a UI: `engine.models.advice.advise()` gives one `Advice` row per entry (fit, reason, recommended, installed,
speed); `engine.models.get.entries_to_get()` then `get_model(entry, progress=..., cancel=event)` on a worker
thread installs one; `engine.models.probe.run_probe()` measures it afterwards.
"""

from __future__ import annotations

import json
import os
import re
from enum import StrEnum
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engine.errors import ConfigError, ModelNotFound

CATALOG_ENV = "VENUS_CATALOG"  # a path to another catalog file (tests, or a curated list of one's own)

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# an SPDX licence id ("Apache-2.0", "CC-BY-4.0") or a LicenseRef- for a licence SPDX does not list
_SPDX = re.compile(r"^(LicenseRef-[A-Za-z0-9.-]+|[A-Za-z0-9][A-Za-z0-9.+-]*)$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")  # ISO 639-1 (or -3 where there is no two-letter code)


class CatalogKind(StrEnum):
    """What a catalog model is for; the same words as the registry's kinds."""

    LLM = "llm"
    ASR = "asr"
    TTS = "tts"
    PROJECTOR = "projector"  # the image encoder (mmproj) of a multimodal LLM


class FileFormat(StrEnum):
    """How a downloaded file is checked when no sha256 is known."""

    GGUF = "gguf"  # header and tensor table parse, and the tensors fit in the file
    CTRANSLATE2 = "ctranslate2"  # CTranslate2 model.bin: binary version, then a "...Spec" name
    ONNX = "onnx"  # an ONNX protobuf (starts with its ir_version field)
    JSON = "json"  # parses as JSON
    TEXT = "text"  # UTF-8 text


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class License(_Strict):
    """The model's licence: shown, and confirmed, before anything is downloaded."""

    spdx: str  # SPDX id, or LicenseRef-NAME for a licence SPDX does not list
    url: str  # where to read it
    note: str = ""  # the terms that matter in one line (e.g. "non-commercial use")

    @field_validator("spdx")
    @classmethod
    def _spdx(cls, value: str) -> str:
        if not _SPDX.match(value):
            raise ValueError(f"{value!r} is not an SPDX licence id or LicenseRef-NAME")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _https(value)


class CatalogFile(_Strict):
    """One file of a catalog model and where it comes from."""

    name: str  # path inside the models folder, with "/" separators
    url: str  # the publisher's https download URL
    sha256: str | None = None  # the publisher's hash; None = checked by size and format, hash recorded on download
    size_bytes: int = Field(gt=0)  # exact when sha256 is set, approximate otherwise
    format: FileFormat

    @field_validator("name")
    @classmethod
    def _relative(cls, value: str) -> str:
        path = PurePosixPath(value)
        if path.is_absolute() or ".." in path.parts or "\\" in value or not value:
            raise ValueError(f"file name {value!r} must be a relative path inside the models folder")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _https(value)

    @field_validator("sha256")
    @classmethod
    def _sha(cls, value: str | None) -> str | None:
        if value is not None and not _SHA256.match(value):
            raise ValueError(f"sha256 {value!r} is not 64 lower-case hex digits")
        return value


class CatalogEntry(_Strict):
    """A model a user can download: what it is, what it needs and what it is good at."""

    id: str  # also its registry id once installed
    kind: CatalogKind
    title: str
    publisher: str  # who trained it (and who converted or quantized it)
    parameters: str = ""  # "3B"; empty where it does not apply
    files: tuple[CatalogFile, ...] = Field(min_length=1)
    license: License
    ram_bytes: int = Field(gt=0)  # memory to run it on the CPU (weights, context, runtime)
    vram_bytes: int = Field(ge=0)  # GPU memory to run it fully offloaded; 0 = runs on the CPU only
    languages: tuple[str, ...] = ()  # ISO codes it understands or speaks; empty for a projector
    good_at: str  # one line
    tool_calls: bool | None = None  # LLMs: trusted with tool calls (measured); None = not measured
    projector: str | None = None  # multimodal LLMs: the id of their projector entry

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"id {value!r} must be lower case letters, digits, '.', '_' or '-'")
        return value

    @field_validator("languages")
    @classmethod
    def _languages(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [code for code in value if not _LANGUAGE.match(code)]
        if bad:
            raise ValueError(f"languages {bad} are not ISO 639 codes")
        return value

    @property
    def size_bytes(self) -> int:
        """Download size of all files."""
        return sum(f.size_bytes for f in self.files)

    @property
    def exact(self) -> bool:
        """True when every file has the publisher's sha256 (so the size is exact too)."""
        return all(f.sha256 for f in self.files)


class Catalog(_Strict):
    """The whole catalog file."""

    schema_version: Literal[1] = Field(alias="schema")
    about: str = ""
    models: tuple[CatalogEntry, ...]

    @model_validator(mode="after")
    def _consistent(self) -> Catalog:
        ids = [m.id for m in self.models]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate ids: {', '.join(duplicates)}")
        names = [f.name for m in self.models for f in m.files]
        clashes = sorted({n for n in names if names.count(n) > 1})
        if clashes:
            raise ValueError(f"two entries install the same file: {', '.join(clashes)}")
        kinds = {m.id: m.kind for m in self.models}
        for m in self.models:
            if m.projector is not None and kinds.get(m.projector) != CatalogKind.PROJECTOR:
                raise ValueError(f"{m.id}: projector {m.projector!r} is not a projector entry of the catalog")
        return self

    def get(self, model_id: str) -> CatalogEntry:
        """The entry with this id, or ModelNotFound listing the ids."""
        for m in self.models:
            if m.id == model_id:
                return m
        raise ModelNotFound(f"no catalog model with id {model_id!r}",
                            fix=f"choose one of `venus models catalog`: {', '.join(m.id for m in self.models)}")


def _https(url: str) -> str:
    import httpx

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValueError(f"{url!r} is not a URL ({exc})") from exc
    local = parsed.host in ("127.0.0.1", "localhost", "::1")  # a test catalog served on this machine
    if not parsed.host or (parsed.scheme != "https" and not (local and parsed.scheme == "http")):
        raise ValueError(f"{url!r} must be an https:// URL")
    return url


def catalog_path() -> Path:
    """The catalog in use: $VENUS_CATALOG, or the one shipped with Venus."""
    override = os.environ.get(CATALOG_ENV)
    if override:
        return Path(override).expanduser()
    return Path(str(resources.files("engine.models").joinpath("catalog.json")))


def load_catalog(path: str | os.PathLike | None = None) -> Catalog:
    """Read and check a catalog file; ConfigError names the file and the first bad field."""
    path = Path(path) if path is not None else catalog_path()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the model catalog {path}: {exc.strerror or exc}",
                          fix=f"check the path (or unset {CATALOG_ENV})") from exc
    except ValueError as exc:
        raise ConfigError(f"the model catalog {path} is not JSON ({exc})", fix="fix or replace the file") from exc
    try:
        return Catalog.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"the model catalog {path} is invalid at {where or 'top level'}: {first['msg']}",
                          fix="fix the field named") from exc
