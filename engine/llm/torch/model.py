"""A decoder-only transformer in plain torch (llama, qwen2, qwen3, gemma3) over a static KV cache.

The cache is pre-allocated for n_ctx positions and indexed by position: keeping the first n tokens is a
length change, nothing is copied or freed. Prefill runs scaled-dot-product attention over the chunk with a
causal (and, for gemma3's sliding layers, windowed) mask; a decode step is the same call with one token.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from engine.errors import ModelCorrupt
from engine.llm.torch.gguf_weights import ModelConfig


def _int8_kernel_works(device: torch.device) -> bool:
    """Whether torch's int8-weight matmul (`_weight_int8pack_mm`) runs on `device` in this torch build."""
    try:
        x = torch.ones(1, 64, dtype=torch.bfloat16, device=device)
        w = torch.ones(8, 64, dtype=torch.int8, device=device)
        return bool(torch._weight_int8pack_mm(x, w, torch.ones(8, dtype=torch.bfloat16, device=device)).sum() == 512)
    except (RuntimeError, NotImplementedError, AttributeError):
        return False


class QuantLinear:
    """A weight matrix: float, or int8 with one scale per output row (a quarter of the bytes of float32).

    An int8 matrix is multiplied one token at a time by torch's int8-weight kernel (bfloat16 activations) where
    the build has it, and otherwise (and for prompt chunks) dequantized inside the matmul.
    """

    def __init__(self, weight: np.ndarray, device: torch.device, dtype: torch.dtype, int8: bool,
                 kernel: bool = False) -> None:
        w = torch.from_numpy(weight)
        self.int8 = int8
        self.kernel = int8 and kernel
        if int8:
            scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127.0
            self.q = torch.round(w / scale).to(torch.int8).to(device)
            self.scale = scale.view(-1).to(device=device, dtype=dtype)
            self.scale_bf16 = self.scale.to(torch.bfloat16)
            self.weight = None
        else:
            self.weight = w.to(device=device, dtype=dtype)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight is not None:
            return F.linear(x, self.weight)
        if self.kernel and x.shape[0] == 1:
            return torch._weight_int8pack_mm(x.to(torch.bfloat16), self.q, self.scale_bf16).to(x.dtype)
        return F.linear(x, self.q.to(x.dtype)) * self.scale  # per-row scale after the matmul


class Transformer:
    """Weights, rotary tables and the KV cache of one model; `forward` evaluates tokens at given positions."""

    def __init__(self, config: ModelConfig, tensors: dict[str, np.ndarray], *, n_ctx: int,
                 device: torch.device, dtype: torch.dtype = torch.float32, int8: bool = False) -> None:
        self.config, self.n_ctx, self.device, self.dtype = config, n_ctx, device, dtype

        def take(name: str, optional: bool = False) -> np.ndarray | None:
            if name not in tensors:
                if optional:
                    return None
                raise ModelCorrupt(f"tensor {name} is missing from the {config.arch} GGUF",
                                   fix="download or import the model again")
            return tensors[name]

        def vec(name: str, optional: bool = False) -> torch.Tensor | None:
            array = take(name, optional)
            return None if array is None else torch.from_numpy(array).to(device=device, dtype=dtype)

        kernel = int8 and _int8_kernel_works(device)

        def lin(*names: str) -> QuantLinear:
            # several matrices that read the same input are one matmul (q|k|v, gate|up): fewer calls per step
            return QuantLinear(np.concatenate([take(n) for n in names]), device, dtype, int8, kernel)

        c = config
        embd = take("token_embd.weight")
        self.embed = torch.from_numpy(embd).to(device=device, dtype=dtype)
        self.embed_scale = math.sqrt(c.n_embd) if c.arch == "gemma3" else 1.0
        output = tensors.get("output.weight")
        self.output = QuantLinear(embd if output is None else output, device, dtype, int8, kernel)
        self.output_norm = vec("output_norm.weight")
        self.layers = []
        for i in range(c.n_layers):
            p = f"blk.{i}."
            layer = {
                "attn_norm": vec(p + "attn_norm.weight"),
                "qkv": lin(p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"),
                "o": lin(p + "attn_output.weight"),
                "qkv_bias": None if p + "attn_q.bias" not in tensors else torch.cat(
                    [vec(p + f"attn_{x}.bias") for x in "qkv"]),
                "q_norm": vec(p + "attn_q_norm.weight", True), "k_norm": vec(p + "attn_k_norm.weight", True),
                "post_attn_norm": vec(p + "post_attention_norm.weight", True),
                "ffn_norm": vec(p + "ffn_norm.weight"),
                "gate_up": lin(p + "ffn_gate.weight", p + "ffn_up.weight"), "down": lin(p + "ffn_down.weight"),
                "post_ffn_norm": vec(p + "post_ffw_norm.weight", True),
            }
            self.layers.append(layer)
        shape = (c.n_kv_heads, n_ctx, c.head_dim)
        self.k_cache = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(c.n_layers)]
        self.v_cache = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(c.n_layers)]
        # Llama 3.x stores its long-context RoPE scaling as per-frequency divisors (llama.cpp's rope_freqs)
        freqs = tensors.get("rope_freqs.weight")
        self._freq_factors = None if freqs is None else torch.from_numpy(freqs).to(torch.float64).flatten()
        positions = torch.arange(n_ctx, dtype=torch.float64)
        self._rope = {base: self._rope_table(positions, base) for base in {c.rope_base, c.rope_base_local} if base}

    # ---- pieces -------------------------------------------------------------------------------------------

    def _rope_table(self, positions: torch.Tensor, base: float) -> tuple[torch.Tensor, torch.Tensor]:
        half = self.config.head_dim // 2
        inv = base ** (-torch.arange(half, dtype=torch.float64) * 2 / self.config.head_dim)
        if self._freq_factors is not None and base == self.config.rope_base:
            inv = inv / self._freq_factors
        angles = positions[:, None] * inv[None, :]
        # float32 tables whatever the model's dtype: bfloat16 angles lose the position past a few hundred
        return angles.cos().to(self.device, torch.float32), angles.sin().to(self.device, torch.float32)

    def _rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """Rotary embedding of x [heads, T, head_dim] with tables [T, head_dim/2], computed in float32."""
        dtype, x = x.dtype, x.float()
        if self.config.neox_rope:
            a, b = x.chunk(2, dim=-1)
            return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(dtype)
        a, b = x[..., 0::2], x[..., 1::2]  # llama's GGUF stores q/k permuted for adjacent-pair rotation
        return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2).to(dtype)

    def _norm(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.config.rms_eps)
        return x32.to(x.dtype) * weight

    def _base(self, layer: int) -> float:
        c = self.config
        return c.rope_base_local if c.is_sliding(layer) else c.rope_base

    # ---- evaluation ---------------------------------------------------------------------------------------

    @torch.inference_mode()
    def forward(self, tokens: torch.Tensor, start: int, *, all_logits: bool = False,
                should_stop: Callable[[], bool] | None = None) -> torch.Tensor | None:
        """Evaluate `tokens` (1-D) at positions start.., writing their keys and values into the cache.

        Returns float32 logits of the last token [n_vocab] (or of every token [T, n_vocab]); None when
        `should_stop` said so between two layers (the cache past `start` then holds partial work, unused).
        """
        c = self.config
        t = tokens.shape[0]
        end = start + t
        if end > self.n_ctx:
            raise ValueError(f"positions {start}..{end} run past the cache of {self.n_ctx}")
        x = F.embedding(tokens, self.embed)
        if self.embed_scale != 1.0:
            x = x * self.embed_scale
        masks: dict[bool, torch.Tensor | None] = {}
        for i, layer in enumerate(self.layers):
            if should_stop is not None and should_stop():
                return None
            sliding = c.is_sliding(i)
            if sliding not in masks:
                masks[sliding] = self._mask(start, t, c.sliding_window if sliding else 0)
            h = self._norm(x, layer["attn_norm"])
            h = self._attention(i, layer, h, start, masks[sliding])
            if layer["post_attn_norm"] is not None:
                h = self._norm(h, layer["post_attn_norm"])
            x = x + h
            h = self._norm(x, layer["ffn_norm"])
            gate, up = layer["gate_up"](h).split(c.n_ff, dim=-1)
            gate = F.gelu(gate, approximate="tanh") if c.arch == "gemma3" else F.silu(gate)
            h = layer["down"](gate * up)
            if layer["post_ffn_norm"] is not None:
                h = self._norm(h, layer["post_ffn_norm"])
            x = x + h
        if not all_logits:
            x = x[-1:]
        logits = self.output(self._norm(x, self.output_norm)).float()
        return logits if all_logits else logits[0]

    def _mask(self, start: int, t: int, window: int) -> torch.Tensor | None:
        end = start + t
        if t == 1 and (window == 0 or end <= window):
            return None  # one token sees every earlier position
        q = torch.arange(start, end, device=self.device)[:, None]
        k = torch.arange(end, device=self.device)[None, :]
        allowed = k <= q
        if window:
            allowed &= (q - k) < window
        return allowed

    def _attention(self, index: int, layer: dict, h: torch.Tensor, start: int, mask: torch.Tensor | None) -> torch.Tensor:
        c = self.config
        t = h.shape[0]
        qkv = layer["qkv"](h)
        if layer["qkv_bias"] is not None:
            qkv = qkv + layer["qkv_bias"]
        q, k, v = qkv.split((c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim, c.n_kv_heads * c.head_dim), dim=-1)
        q = q.view(t, c.n_heads, c.head_dim).transpose(0, 1)
        k = k.view(t, c.n_kv_heads, c.head_dim).transpose(0, 1)
        v = v.view(t, c.n_kv_heads, c.head_dim).transpose(0, 1)
        if layer["q_norm"] is not None:
            q, k = self._norm(q, layer["q_norm"]), self._norm(k, layer["k_norm"])
        cos, sin = self._rope[self._base(index)]
        cos, sin = cos[start:start + t], sin[start:start + t]
        q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
        end = start + t
        self.k_cache[index][:, start:end] = k
        self.v_cache[index][:, start:end] = v
        keys, values = self.k_cache[index][:, :end], self.v_cache[index][:, :end]
        out = F.scaled_dot_product_attention(q.unsqueeze(0), keys.unsqueeze(0), values.unsqueeze(0),
                                             attn_mask=mask, enable_gqa=c.n_heads != c.n_kv_heads)
        return layer["o"](out[0].transpose(0, 1).reshape(t, c.n_heads * c.head_dim))

    @torch.inference_mode()
    def move(self, src: int, dst: int, count: int) -> None:
        """Move `count` cached positions from src.. to dst.., re-rotating their keys by the shift (dst - src).

        Keys are stored rotated, and a rotation by p then by d is a rotation by p + d: no evaluation needed.
        """
        if count <= 0 or src == dst:
            return
        delta = torch.full((count,), float(dst - src), dtype=torch.float64)
        for i in range(self.config.n_layers):
            cos, sin = self._rope_table_for(delta, self._base(i))
            k = self.k_cache[i][:, src:src + count].clone()
            v = self.v_cache[i][:, src:src + count].clone()
            self.k_cache[i][:, dst:dst + count] = self._rotate(k, cos, sin)
            self.v_cache[i][:, dst:dst + count] = v

    def _rope_table_for(self, positions: torch.Tensor, base: float) -> tuple[torch.Tensor, torch.Tensor]:
        return self._rope_table(positions, base)
