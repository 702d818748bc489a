"""How much memory a forward/backward pass needs, and how much the device has for it.

With activation checkpointing at every decoder layer and log-probabilities computed from the final hidden states
in chunks of LOGIT_CHUNK positions, a micro-batch of R rows padded to W positions (T = R * W tokens) needs about

    activations(R, W) = T * b * (L * H + 2 * (8 * H + 4 * I))      checkpointed layer inputs + one layer recomputed
                      + 3 * LOGIT_CHUNK * V * 4                      one chunk's float32 logits, log-softmax and grad
                      + R * A * W * W * b   (eager attention only)  the attention scores of one layer

bytes, with b the bytes of the model's dtype, L its layers, H its hidden size, I its MLP width, A its attention
heads and V its vocabulary (Qwen3-8B shape in bf16: ~0.62 MB a token, so 16k tokens ~10 GB beside 15.3 GiB of
weights; measured 26.2 GiB in all). The server cuts a request into micro-batches that fit the budget and refuses
(a 400) a datum that alone does not fit.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

LOGIT_CHUNK = 1024  # positions whose full-vocabulary logits exist at once
HEADROOM = 0.9  # of the device's memory; the rest is for the allocator's fragmentation and the runtime


@dataclass(frozen=True)
class Shape:
    """What the formula needs of a model."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    vocab: int
    dtype_bytes: int
    eager_attention: bool

    @classmethod
    def of(cls, model: Any) -> Shape:
        """The shape of a loaded transformers model."""
        config = model.config
        return cls(
            layers=int(config.num_hidden_layers),
            hidden=int(config.hidden_size),
            intermediate=int(getattr(config, "intermediate_size", 4 * config.hidden_size)),
            heads=int(config.num_attention_heads),
            vocab=int(model.get_input_embeddings().weight.shape[0]),
            dtype_bytes=int(next(model.parameters()).element_size()),
            eager_attention=getattr(config, "_attn_implementation", "eager") == "eager",
        )

    def activations(self, rows: int, width: int) -> int:
        """Bytes one forward/backward of `rows` x `width` tokens needs beyond the weights (the formula above)."""
        per_token = self.dtype_bytes * (self.layers * self.hidden + 2 * (8 * self.hidden + 4 * self.intermediate))
        attention = rows * self.heads * width * width * self.dtype_bytes if self.eager_attention else 0
        return rows * width * per_token + 3 * min(LOGIT_CHUNK, rows * width) * self.vocab * 4 + attention


def resident_bytes(modules: Sequence[torch.nn.Module], optimizers: Sequence[torch.optim.Optimizer]) -> int:
    """Bytes held by loaded models and optimizer states."""
    total = sum(p.numel() * p.element_size() for m in modules for p in m.parameters())
    for optimizer in optimizers:
        for state in optimizer.state.values():
            total += sum(v.numel() * v.element_size() for v in state.values() if isinstance(v, torch.Tensor))
    return total


def device_bytes(device: str) -> int:
    """The device's memory: the GPU's, or this host's RAM for the CPU."""
    if device.startswith("cuda"):
        return int(torch.cuda.mem_get_info(torch.device(device))[1])
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def activation_budget(device: str, resident: int) -> int:
    """Bytes left for one pass's activations on `device` once `resident` bytes of models are loaded."""
    return max(0, int(device_bytes(device) * HEADROOM) - resident)
