"""The base models the server trains and samples: `tiny` (built and cached by ptbench) and local HF model dirs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ptbench.tinker_server.errors import CallError

TINY = "tiny"


@dataclass(frozen=True)
class BaseModelRef:
    """A base model: the name clients use and the local directory it loads from."""

    name: str
    path: Path


def resolve_base(name: str) -> BaseModelRef:
    """The base model a client names: `tiny`, or an absolute path to a local HF model directory (config.json)."""
    if name == TINY:
        from ptbench.models.tiny import ensure_tiny

        return BaseModelRef(TINY, ensure_tiny())
    path = Path(name)
    if not path.is_absolute() or not (path / "config.json").is_file():
        raise CallError(
            f"unknown base model {name!r}: this server serves {TINY!r} and absolute paths of local HF model dirs"
        )
    return BaseModelRef(name, path.resolve())


def context_length(path: Path) -> int | None:
    """The model's context length from its config.json, if it says."""
    import json

    try:
        value = json.loads((path / "config.json").read_text()).get("max_position_embeddings")
    except (OSError, ValueError):
        return None
    return value if isinstance(value, int) else None
