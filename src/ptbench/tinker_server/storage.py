"""Checkpoints on disk, named by `tinker://` paths that resolve inside the server's storage directory.

`tinker://<run>/weights/<name>` is a training state (LoRA adapter + optimizer state),
`tinker://<run>/sampler_weights/<name>` weights for sampling (the adapter). Each checkpoint dir holds the
adapter as PEFT writes it (safetensors), `optimizer.safetensors` for training states, and `checkpoint.json`
(`CheckpointMeta`). The run is the training client's model id.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ptbench.files import read_untrusted, write_model_json
from ptbench.tinker_server.errors import CallError

META_FILE = "checkpoint.json"
OPTIMIZER_FILE = "optimizer.safetensors"
Kind = Literal["training", "sampler"]
_SEGMENT = {"training": "weights", "sampler": "sampler_weights"}
_KIND = {segment: kind for kind, segment in _SEGMENT.items()}
_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._-]{0,199}$")


class LoraShape(BaseModel):
    """The LoRA configuration a checkpoint was trained with (a loading model must match it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rank: int = Field(ge=1)
    train_attn: bool
    train_mlp: bool
    train_unembed: bool


class CheckpointMeta(BaseModel):
    """checkpoint.json: what a stored checkpoint is."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    kind: Kind
    base_model: str = Field(description="the base model's name as clients give it")
    lora: LoraShape
    created_at: float
    has_optimizer: bool = False


def tinker_path(run: str, kind: Kind, name: str) -> str:
    """The `tinker://` path of a checkpoint."""
    return f"tinker://{run}/{_SEGMENT[kind]}/{name}"


class Storage:
    """The server's checkpoint directory."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def new_dir(self, run: str, kind: Kind, name: str) -> Path:
        """A fresh, empty directory for a checkpoint (an existing one with that name is replaced)."""
        for part in (run, name):
            if not _PART.match(part):
                raise CallError(f"invalid checkpoint name {part!r}")
        path = self.root / run / _SEGMENT[kind] / name
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        return path

    def write_meta(self, path: Path, meta: CheckpointMeta) -> None:
        """Record what the checkpoint in `path` is (last, so a half-written checkpoint has no metadata)."""
        write_model_json(path / META_FILE, meta)

    def resolve(self, path: str, kind: Kind | None = None) -> tuple[Path, CheckpointMeta]:
        """The directory and metadata of the checkpoint a `tinker://` path names (of `kind`, if given)."""
        if not path.startswith("tinker://"):
            raise CallError(f"not a tinker:// path: {path!r}")
        parts = path.removeprefix("tinker://").split("/")
        if len(parts) != 3 or parts[1] not in _KIND or not all(_PART.match(p) for p in (parts[0], parts[2])):
            raise CallError(f"invalid tinker:// path {path!r} (want tinker://<run>/weights|sampler_weights/<name>)")
        found = _KIND[parts[1]]
        if kind is not None and found != kind:
            raise CallError(f"{path} is a {found} checkpoint; this call needs a {kind} checkpoint")
        directory = self.root / parts[0] / parts[1] / parts[2]
        if directory.is_symlink() or not (directory / META_FILE).is_file():
            raise CallError(f"no checkpoint at {path}")
        meta = CheckpointMeta.model_validate_json(read_untrusted(directory / META_FILE, 1 << 20))
        return directory, meta

    @staticmethod
    def now() -> float:
        """A creation time for metadata."""
        return time.time()
