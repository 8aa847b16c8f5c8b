"""Read a GGUF file's header (metadata and tensor table) in pure Python, without loading the model.

Used to show what a model is (`venus models list`) and to reject a truncated or corrupt file with a clear
error before llama.cpp ever sees it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from engine.errors import ModelCorrupt

_MAGIC = b"GGUF"
# value type id -> struct format (strings and arrays are handled separately)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# ggml tensor type id -> (bytes per block, elements per block); used to find where the data must end
_TYPE_SIZES = {
    0: (4, 1), 1: (2, 1), 2: (18, 32), 3: (20, 32), 6: (22, 32), 7: (24, 32), 8: (34, 32), 9: (36, 32),
    10: (84, 256), 11: (110, 256), 12: (144, 256), 13: (176, 256), 14: (210, 256), 15: (292, 256),
    24: (1, 1), 25: (2, 1), 26: (4, 1), 27: (8, 1), 28: (8, 1), 30: (2, 1),
}
_BIG_ARRAY = 64  # arrays longer than this (token lists) are summarised, not kept


@dataclass
class GGUFInfo:
    """What a GGUF header says about a model."""

    path: Path
    version: int
    metadata: dict[str, Any] = field(default_factory=dict)
    tensor_count: int = 0
    parameter_count: int = 0
    data_end: int | None = None  # byte offset where the last tensor ends (None if a type is unknown)

    @property
    def architecture(self) -> str:
        """e.g. 'llama', 'gemma3'."""
        return str(self.metadata.get("general.architecture", "unknown"))

    @property
    def context_length(self) -> int | None:
        """Training context length, if the header has it."""
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if value is not None else None

    @property
    def chat_template(self) -> str | None:
        """The Jinja chat template stored in the file, if any."""
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) else None

    @property
    def name(self) -> str:
        """The model's own name from its metadata."""
        return str(self.metadata.get("general.name", self.path.stem))


class _Reader:
    def __init__(self, fh: BinaryIO, path: Path, size: int) -> None:
        self.fh, self.path, self.size = fh, path, size

    def read(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise ModelCorrupt(
                f"{self.path} ends in the middle of its header (file is truncated, {self.size} bytes)",
                fix="download or import the model again",
            )
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > self.size:
            raise ModelCorrupt(f"{self.path} has an impossible string length in its header (corrupt)",
                               fix="download or import the model again")
        return self.read(length).decode("utf-8", errors="replace")

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            item_type, count = self.unpack("<I"), self.unpack("<Q")
            if count > self.size:
                raise ModelCorrupt(f"{self.path} has an impossible array length in its header (corrupt)",
                                   fix="download or import the model again")
            if item_type in _SCALARS and count > _BIG_ARRAY:
                self.fh.seek(struct.calcsize(_SCALARS[item_type]) * count, 1)
                return f"<{count} values>"
            items = [self.value(item_type) for _ in range(count)]
            return items if count <= _BIG_ARRAY else f"<{count} values>"
        raise ModelCorrupt(f"{self.path} has an unknown metadata value type {vtype} (corrupt or too new)",
                           fix="download the model again or update Venus")


def read_gguf(path: str | Path) -> GGUFInfo:
    """Parse the header of a GGUF file; raises ModelNotFound/ModelCorrupt with the file named."""
    from engine.errors import ModelNotFound

    path = Path(path)
    if not path.is_file():
        raise ModelNotFound(f"model file {path} does not exist", fix="check the path, or `venus models list`")
    size = path.stat().st_size
    with open(path, "rb") as fh:
        reader = _Reader(fh, path, size)
        if size < 24 or fh.read(4) != _MAGIC:
            raise ModelCorrupt(f"{path} is not a GGUF file (wrong magic bytes)",
                               fix="choose a .gguf model file, or download it again")
        version = reader.unpack("<I")
        if version not in (2, 3):
            raise ModelCorrupt(f"{path} is GGUF version {version}, which Venus cannot read",
                               fix="use a GGUF v2/v3 file (re-convert with a current llama.cpp)")
        tensor_count, kv_count = reader.unpack("<Q"), reader.unpack("<Q")
        info = GGUFInfo(path=path, version=version, tensor_count=tensor_count)
        for _ in range(kv_count):
            key = reader.string()
            info.metadata[key] = reader.value(reader.unpack("<I"))
        alignment = int(info.metadata.get("general.alignment", 32))
        last_end, known = 0, True
        for _ in range(tensor_count):
            reader.string()
            n_dims = reader.unpack("<I")
            dims = [reader.unpack("<Q") for _ in range(n_dims)]
            ttype, offset = reader.unpack("<I"), reader.unpack("<Q")
            elements = math.prod(dims)
            info.parameter_count += elements
            if ttype in _TYPE_SIZES:
                block_bytes, block_elems = _TYPE_SIZES[ttype]
                last_end = max(last_end, offset + elements // block_elems * block_bytes)
            else:
                known = False
        data_start = (fh.tell() + alignment - 1) // alignment * alignment
        if known:
            info.data_end = data_start + last_end
            if info.data_end > size:
                raise ModelCorrupt(
                    f"{path} is truncated: its tensors need {info.data_end} bytes but the file has {size}",
                    fix="download or import the model again",
                )
    return info


def describe(info: GGUFInfo) -> str:
    """One line for `venus models list`."""
    params = info.parameter_count
    human = f"{params / 1e9:.2f}B" if params >= 1e9 else f"{params / 1e6:.0f}M"
    template = "chat template" if info.chat_template else "no chat template"
    return f"{info.architecture}, {human} params, ctx {info.context_length or '?'}, {template}"
