"""Read a GGUF file with ggml's own reader (`gguf`): the architecture's hyperparameters and float weights.

Quantized tensors (Q4_0, Q4_1, Q5_0, Q8_0, Q4_K, Q6_K, ...) are dequantized at load with `gguf.quants`;
the model then keeps them as float on the CPU, or as int8 per-channel on a CUDA device (see model.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import ModelCorrupt, ModelNotFound, VenusError

SUPPORTED_ARCHITECTURES = ("llama", "qwen2", "qwen3", "gemma3")


class UnsupportedModel(VenusError):
    """The GGUF holds an architecture or tensor type the torch backend does not implement."""

    code = "model-unsupported"


@dataclass(frozen=True)
class ModelConfig:
    """Hyperparameters of one decoder-only transformer, read from GGUF metadata."""

    arch: str  # "llama", "qwen2", "qwen3" or "gemma3"
    n_layers: int
    n_embd: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    n_ff: int
    n_vocab: int
    rms_eps: float
    rope_base: float
    rope_base_local: float  # gemma3's sliding-window layers rotate with their own base
    sliding_window: int  # 0 = every layer attends to the whole context
    swa_period: int  # gemma3: every swa_period-th layer is global, the others slide
    neox_rope: bool  # rotate halves (NEOX) instead of adjacent pairs (llama's GGUF layout)

    def is_sliding(self, layer: int) -> bool:
        """Whether `layer` attends only to the last `sliding_window` positions."""
        return self.sliding_window > 0 and (layer + 1) % self.swa_period != 0


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    if field is None:
        return default
    value = field.contents()
    return value


def read_gguf(path: str | Path):
    """Open `path` with gguf.GGUFReader, turning a missing or unreadable file into a Venus error."""
    import gguf

    path = Path(path)
    if not path.is_file():
        raise ModelNotFound(f"model file {path} does not exist",
                            fix="check llm.model in settings or run `venus models install`")
    try:
        return gguf.GGUFReader(str(path), "r")
    except Exception as exc:  # the reader raises ValueError, struct errors or IndexError on damage
        raise ModelCorrupt(f"{path} is not a readable GGUF file ({exc})",
                           fix="download or import the model again; it may be truncated or not a GGUF") from exc


def read_config(reader, path: str | Path) -> ModelConfig:
    """The hyperparameters of the GGUF's architecture; an unsupported one is named in the error."""
    arch = str(_field(reader, "general.architecture", ""))
    if arch not in SUPPORTED_ARCHITECTURES:
        raise UnsupportedModel(
            f"{path}: architecture {arch!r} is not implemented by the torch backend "
            f"(it runs {', '.join(SUPPORTED_ARCHITECTURES)})",
            fix='set llm.backend to "llama_cpp" for this model')

    def need(key: str):
        value = _field(reader, f"{arch}.{key}")
        if value is None:
            raise ModelCorrupt(f"{path}: GGUF metadata {arch}.{key} is missing",
                               fix="download or import the model again")
        return value

    n_embd, n_heads = int(need("embedding_length")), int(need("attention.head_count"))
    head_dim = int(_field(reader, f"{arch}.attention.key_length", n_embd // n_heads))
    unsupported = {  # features of these architectures this backend does not implement, named in the error
        f"{arch}.rope.dimension_count": (int(_field(reader, f"{arch}.rope.dimension_count", head_dim)), head_dim),
        f"{arch}.rope.scaling.type": (str(_field(reader, f"{arch}.rope.scaling.type", "none")), "none"),
        f"{arch}.expert_count": (int(_field(reader, f"{arch}.expert_count", 0)), 0),
    }
    for key, (value, expected) in unsupported.items():
        if value != expected and not (key.endswith("scaling.type") and value == "linear"
                                      and float(_field(reader, f"{arch}.rope.scaling.factor", 1.0)) == 1.0):
            raise UnsupportedModel(f"{path}: {key} = {value!r} is not implemented by the torch backend",
                                   fix='set llm.backend to "llama_cpp" for this model')
    embd = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
    if embd is None:
        raise ModelCorrupt(f"{path}: tensor token_embd.weight is missing", fix="download or import the model again")
    gemma = arch == "gemma3"
    return ModelConfig(
        arch=arch,
        n_layers=int(need("block_count")),
        n_embd=n_embd,
        n_heads=n_heads,
        n_kv_heads=int(_field(reader, f"{arch}.attention.head_count_kv", n_heads)),
        head_dim=head_dim,
        n_ff=int(need("feed_forward_length")),
        n_vocab=int(embd.shape[1]),
        rms_eps=float(need("attention.layer_norm_rms_epsilon")),
        rope_base=float(_field(reader, f"{arch}.rope.freq_base", 10000.0)),
        rope_base_local=float(_field(reader, f"{arch}.rope.freq_base_swa", 10000.0)) if gemma else 0.0,
        sliding_window=int(_field(reader, f"{arch}.attention.sliding_window", 0)) if gemma else 0,
        swa_period=6 if gemma else 1,
        neox_rope=arch != "llama",
    )


def load_tensors(reader, path: str | Path) -> dict[str, np.ndarray]:
    """Every tensor as a float32 array shaped (rows, columns) as torch expects; quantized ones dequantized."""
    from gguf import GGMLQuantizationType, quants

    out: dict[str, np.ndarray] = {}
    for tensor in reader.tensors:
        shape = tuple(int(d) for d in reversed(tensor.shape))  # GGUF lists ne0 (the row length) first
        try:
            data = quants.dequantize(tensor.data, GGMLQuantizationType(tensor.tensor_type))
            array = np.asarray(data, dtype=np.float32).reshape(shape)
            if not array.flags.writeable:  # F32 tensors come straight from the read-only memory map
                array = array.copy()
        except NotImplementedError as exc:
            raise UnsupportedModel(
                f"{path}: tensor {tensor.name} has type {tensor.tensor_type.name}, which gguf cannot dequantize",
                fix='set llm.backend to "llama_cpp" for this model') from exc
        except (ValueError, IndexError) as exc:
            raise ModelCorrupt(f"{path}: tensor {tensor.name} is damaged ({exc})",
                               fix="download or import the model again; it may be truncated") from exc
        if not np.isfinite(array).all():
            raise ModelCorrupt(f"{path}: tensor {tensor.name} holds NaN or infinite values",
                               fix="download or import the model again; it is damaged")
        out[tensor.name] = array
    return out
