"""The built-in losses, per datum, on the target tokens' log-probabilities (sums over tokens, as Tinker's are).

Each takes the training model's log-probabilities `logp` (one per position), the datum's `loss_fn_inputs`
as tensors and the request's `loss_fn_config`, and returns the loss and extra per-token outputs.
`importance_sampling`, `ppo`, `cispo` and `dro` read `logprobs` (the sampler's) and `advantages`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from ptbench.tinker_server.errors import CallError, NotImplementedCall

Inputs = Mapping[str, torch.Tensor]
Config = Mapping[str, float | str]
LossFn = Callable[[torch.Tensor, Inputs, Config], tuple[torch.Tensor, dict[str, torch.Tensor]]]


def _input(inputs: Inputs, name: str, like: torch.Tensor) -> torch.Tensor:
    if name not in inputs:
        raise CallError(f"loss_fn_inputs lacks {name!r}")
    value = inputs[name].to(like.device, torch.float32)
    if value.shape != like.shape:
        raise CallError(f"loss_fn_inputs[{name!r}] has {value.numel()} values for {like.numel()} tokens")
    return value


def _number(config: Config, name: str, default: float) -> float:
    value = config.get(name, default)
    if not isinstance(value, float | int):
        raise CallError(f"loss_fn_config[{name!r}] must be a number")
    return float(value)


def cross_entropy(logp: torch.Tensor, inputs: Inputs, config: Config) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """-sum(weights * logp); weights default to 1."""
    weights = _input(inputs, "weights", logp) if "weights" in inputs else torch.ones_like(logp)
    elementwise = -(weights * logp)
    return elementwise.sum(), {"elementwise_loss": elementwise.detach()}


def _ratio(logp: torch.Tensor, inputs: Inputs) -> tuple[torch.Tensor, torch.Tensor]:
    old = _input(inputs, "logprobs", logp)
    return torch.exp(logp - old), _input(inputs, "advantages", logp)


def importance_sampling(
    logp: torch.Tensor, inputs: Inputs, config: Config
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """-sum(p_train / p_sampler * advantages)."""
    ratio, advantages = _ratio(logp, inputs)
    return -(ratio * advantages).sum(), {}


def _clip(config: Config) -> tuple[float, float]:
    return _number(config, "clip_low_threshold", 0.8), _number(config, "clip_high_threshold", 1.2)


def ppo(logp: torch.Tensor, inputs: Inputs, config: Config) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The clipped surrogate: -sum(min(ratio * A, clip(ratio, low, high) * A))."""
    ratio, advantages = _ratio(logp, inputs)
    low, high = _clip(config)
    return -torch.minimum(ratio * advantages, ratio.clamp(low, high) * advantages).sum(), {}


def cispo(logp: torch.Tensor, inputs: Inputs, config: Config) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """-sum(stopgrad(clip(ratio)) * logp * A)."""
    ratio, advantages = _ratio(logp, inputs)
    low, high = _clip(config)
    return -(ratio.clamp(low, high).detach() * logp * advantages).sum(), {}


def dro(logp: torch.Tensor, inputs: Inputs, config: Config) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """-sum(logp * A - beta / 2 * (logp - logp_sampler)^2)."""
    old = _input(inputs, "logprobs", logp)
    advantages = _input(inputs, "advantages", logp)
    beta = _number(config, "beta", 0.05)
    return -(logp * advantages - 0.5 * beta * (logp - old) ** 2).sum(), {}


LOSSES: dict[str, LossFn] = {
    "cross_entropy": cross_entropy,
    "importance_sampling": importance_sampling,
    "ppo": ppo,
    "cispo": cispo,
    "dro": dro,
}


def get_loss(name: str) -> LossFn:
    """The loss called `name` (gspo, stable_reinforce and server-side custom losses are not implemented)."""
    if name in LOSSES:
        return LOSSES[name]
    if name in ("gspo", "stable_reinforce", "custom"):
        raise NotImplementedCall(f"forward_backward with loss_fn={name!r}")
    raise CallError(f"unknown loss_fn {name!r}")
