"""The base models the server trains and samples: the registry's Tinker models that it was started with (a job's
server serves the models its tasks name), named by registry key or by the name a Tinker service knows them by.
A client never names a path: nothing of the host's disk is loaded or probed on a client's behalf."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ptbench.errors import UserError
from ptbench.models.loading import ModelSource, base_source, load_config
from ptbench.models.registry import BASE_MODELS, get_base_model
from ptbench.tinker_server.errors import CallError

TINY = "tiny"


@dataclass(frozen=True)
class BaseModelRef:
    """A base model: the name clients use and checkpoints record, its registry key and where it loads from."""

    name: str
    key: str
    source: ModelSource


class Bases:
    """The base models one server serves."""

    def __init__(self, keys: Iterable[str] = (TINY,)) -> None:
        self.keys = sorted(set(keys))
        self._infos = [get_base_model(key) for key in self.keys]
        for key, info in zip(self.keys, self._infos, strict=True):
            if not info.tinker:
                tinker_keys = ", ".join(k for k, m in BASE_MODELS.items() if m.tinker)
                raise UserError(f"base model {key!r} is not a Tinker model (those are: {tinker_keys})")
        self._refs: dict[str, BaseModelRef] = {}

    def resolve(self, name: str) -> BaseModelRef:
        """The served base model a client names (by registry key or Tinker name); anything else is refused alike."""
        for key, info in zip(self.keys, self._infos, strict=True):
            if name in (key, info.tinker_name):
                if key not in self._refs:
                    self._refs[key] = BaseModelRef(info.tinker_name, key, base_source(info))
                return self._refs[key]
        served = ", ".join(info.tinker_name for info in self._infos)
        raise CallError(f"unknown base model {name[:100]!r}: this server serves {served}")

    def capabilities(self) -> list[dict[str, object]]:
        """The SDK's supported_models entries."""
        return [
            {"model_name": ref.name, "max_context_length": context_length(ref), "trainable": True, "sampleable": True}
            for ref in (self.resolve(key) for key in self.keys)
        ]


def context_length(base: BaseModelRef) -> int | None:
    """The model's context length from its config, if it says."""
    try:
        value = getattr(load_config(base.source), "max_position_embeddings", None)
    except (OSError, ValueError, UserError):
        return None
    return value if isinstance(value, int) else None
