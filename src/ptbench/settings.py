"""Every PTBENCH_* environment variable, typed, in one pydantic-settings object: the one reader of them.

Read them with `settings()` (the environment as it is at each call, so tests can monkeypatch; parsed again only when a
PTBENCH_* variable changed): each field is
already of its type (a Path, an int, one of a few words), so no caller parses a value again. A bad value is a
one-line `UserError` that names the variable. Name a variable with `env_name("field")` when it has to be set for a
child process or given to a CLI option. An empty variable counts as unset.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from ptbench.errors import UserError

ENV_PREFIX = "PTBENCH_"
CodeSandboxMode = Literal["bwrap", "landlock", "auto"]


class Settings(BaseSettings):
    """The PTBENCH_* variables (field `cache` is $PTBENCH_CACHE, and so on); None when unset or empty."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, case_sensitive=False, env_ignore_empty=True, extra="ignore", frozen=True
    )

    cache: Path | None = Field(
        None,
        description="Per-user cache dir (built tiny models, the held-out secret); "
        "default ~/.cache/ptbench. Set inside sandboxes to the host cache, bound read-only.",
    )
    workdir: Path | None = Field(
        None, description="Per-project work dir (Harbor jobs, the results store, exported tasks); default ./.ptbench."
    )
    heldout_seed: int | None = Field(
        None,
        description="Seed of the frogs held-out boards (an integer); default this user's secret seed in the cache.",
    )
    timer_stamp: Path | None = Field(
        None, description="Path of the agent's start stamp read by `timer`; default /ptbench/agent_start.json."
    )
    reference_config: Path | None = Field(
        None, description="Recipe config file for `ptbench reference` (its --config option)."
    )
    reference_max_steps: int | None = Field(
        None,
        ge=1,
        description="At most this many SFT steps and GRPO steps a stage in `ptbench reference` (its --max-steps: "
        "a smoke run of a campaign's reference trials, whatever their budget).",
    )
    verify_max_tokens: int | None = Field(
        None, gt=0, description="--max-tokens of `ptbench verify` (the demo sets it for the verifier)."
    )
    judge_model: str | None = Field(
        None, description="Inspect model name for every judge role not given with --judge; default openai/gpt-5-mini."
    )
    integrity_judge_model: str | None = Field(
        None,
        description="Inspect model name of the integrity checks' "
        "optional LLM judge when --judge integrity=... is not given; unset: "
        "no judge. Exported tasks pass it to their verifier.",
    )
    tinker_url: str | None = Field(
        None,
        description="Base URL of the Tinker service whose path.txt checkpoints the "
        "verifier samples (a `ptbench tinker serve`); unset: the real service "
        "(TINKER_API_KEY).",
    )
    sandbox_dir: Path | None = Field(
        None,
        description="Base dir of the local sandboxes (read by sandbox.fs.roots); default <tmp>/ptbench-sandboxes.",
    )
    sandbox_storage_mb: int | None = Field(
        None,
        gt=0,
        description="The disk of a local sandbox whose task sets no storage_mb, preallocated on the host "
        "in MiB (read by ptbench.sandbox.fs.disk); default 10240. Tests set it smaller.",
    )
    data_dir: Path | None = Field(
        None,
        description="The agent's benchmark data (training files and the dev "
        "split; read-only), set in tasks exported with --data-dir: the default --data-dir "
        "of `ptbench evaluate` and `ptbench reference`.",
    )
    dev_dir: Path | None = Field(
        None,
        description="Where the local sandbox looks for GPU device nodes "
        "(/dev/nvidia*); default /dev. Tests point it at fake nodes.",
    )
    slurm_partition: str | None = Field(
        None,
        description="The Slurm partition of the shipped example campaign "
        "(examples/campaigns/tiny-slurm.toml); unset: the cluster's default.",
    )
    seed: int | None = Field(
        None, ge=0, description="An agent run's seed, set by ptbench.run.agents in the agent's environment."
    )
    code_sandbox: CodeSandboxMode = Field(
        "auto",
        description="The verifier's code sandbox (sandbox/code/launch.py): bwrap, landlock, or auto (bwrap where it "
        "starts, else landlock).",
    )
    stop_others: bool = Field(
        False,
        description="`ptbench handoff-record` first stops the agent's leftover processes (its --stop-others): set by "
        "`ptbench run` on the local environment, docker and podman, passed from the host by exported tasks.",
    )
    scan_memory_mb: int | None = Field(
        None, gt=0, description="Memory limit (MiB) of each integrity check's child; default 2048."
    )


def settings() -> Settings:
    """The PTBENCH_* variables as they are now; UserError (one line, naming the variable) for a bad value."""
    return _parsed(tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(ENV_PREFIX))))


@functools.lru_cache(maxsize=16)
def _parsed(variables: tuple[tuple[str, str], ...]) -> Settings:
    """Settings for these variables (a frozen object, shared): parsing them costs 3-6 ms, and a trial asks a dozen
    times. A bad value is not cached: it raises each time."""
    del variables  # the key: Settings reads the same environment
    try:
        return Settings()
    except ValidationError as error:
        raise UserError(_bad_value(error)) from None


def _bad_value(error: ValidationError) -> str:
    """`PTBENCH_SEED='x': Input should be a valid integer` for the first bad variable of `error`."""
    first = error.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    name = env_name(field) if field in Settings.model_fields else "a PTBENCH_* variable"
    shown = repr(first.get("input"))[:80]
    message = first["msg"].splitlines()[0] if first["msg"] else "invalid"
    return f"{name}={shown}: {message}"


def env_name(field: str) -> str:
    """The environment variable behind a Settings field: env_name("cache") == "PTBENCH_CACHE"."""
    if field not in Settings.model_fields:
        raise KeyError(field)
    return ENV_PREFIX + field.upper()
