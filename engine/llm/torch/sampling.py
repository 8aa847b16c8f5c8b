"""Sampling on the device: banned tokens, then greedy or top-k / top-p / min-p / temperature, as llama.cpp's chain."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from engine.llm.backend import GenerateRequest


class Sampler:
    """Picks the next token from a logits vector without leaving the device (the returned int is the one sync)."""

    def __init__(self, request: GenerateRequest, n_vocab: int, banned: Sequence[int], device: torch.device) -> None:
        self.request = request
        self.bias = None
        if banned:
            self.bias = torch.zeros(n_vocab, dtype=torch.float32, device=device)
            self.bias[torch.tensor(list(banned), dtype=torch.long, device=device)] = float("-inf")
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(request.seed)

    def sample(self, logits: torch.Tensor) -> int:
        """The next token id."""
        r = self.request
        logits = logits.float()
        if self.bias is not None:
            logits = logits + self.bias
        if r.temperature == 0.0:
            return int(torch.argmax(logits))
        k = r.top_k if 0 < r.top_k < logits.shape[0] else logits.shape[0]
        values, ids = torch.topk(logits, k)  # sorted, best first
        probs = torch.softmax(values, dim=-1)
        if r.top_p < 1.0:
            before = torch.cumsum(probs, dim=-1) - probs  # mass of the better candidates
            values = values.masked_fill(before >= r.top_p, float("-inf"))
        if r.min_p > 0.0:
            values = values.masked_fill(probs < r.min_p * probs[0], float("-inf"))
        probs = torch.softmax(values / r.temperature, dim=-1)
        choice = torch.multinomial(probs, 1, generator=self.generator)
        return int(ids[choice])
