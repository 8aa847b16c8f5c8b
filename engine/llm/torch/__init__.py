"""The torch backend: GGUF models evaluated by torch on the CPU or a CUDA device (optional extra `torch`)."""

from __future__ import annotations

from engine.llm.torch.backend import TorchBackend, TorchOptions, pick_device
from engine.llm.torch.gguf_weights import SUPPORTED_ARCHITECTURES, ModelConfig, UnsupportedModel

__all__ = ["SUPPORTED_ARCHITECTURES", "ModelConfig", "TorchBackend", "TorchOptions", "UnsupportedModel", "pick_device"]
