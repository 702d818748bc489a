"""Launching a ptbench job: agents x tasks x seeds as one Harbor JobConfig, run (or resumed) with Harbor's Job."""

from __future__ import annotations

import shutil
from datetime import datetime
from itertools import count
from pathlib import Path
from uuid import UUID

from harbor.job import Job
from harbor.models.environment_type import EnvironmentType
from harbor.models.job.config import JobConfig
from harbor.models.job.lock import JobLock
from harbor.models.job.result import JobResult, JobStats
from harbor.models.task.task import Task
from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, VerifierConfig
from pydantic import BaseModel
from rich.console import Console

from ptbench.catalog.spec import TaskSpec
from ptbench.catalog.tasks import get_task
from ptbench.errors import UserError, first_line
from ptbench.files import write_atomic
from ptbench.integrity import watched_names
from ptbench.models import tiny, tiny_instruct
from ptbench.paths import cache_dir
from ptbench.run.agents import (
    AgentSettings,
    loopback_ports,
    resolve_agent,
    with_api_host,
    with_seed,
    with_settings,
)
from ptbench.run.export import export_task
from ptbench.run.local_tinker import TinkerMode, with_tinker
from ptbench.run.task_data import data_mount_tasks, data_mounts, quiet_agent_only_warning
from ptbench.run.task_specs import TaskSpecs, task_specs
from ptbench.sandbox import LocalOptions, with_options
from ptbench.settings import env_name
from ptbench.store.ingest import read_job
from ptbench.trialdir.labels import EARLIER_PATHS, LOCAL_ENVIRONMENT

CANCELLED = "CancelledError"


def resolve_environment(name: str) -> EnvironmentConfig:
    """`local`, a Harbor environment type (docker, modal, ...) or `module:Class`."""
    if name == "local":
        return EnvironmentConfig(import_path=LOCAL_ENVIRONMENT)
    if name in EARLIER_PATHS:
        raise UserError(f"{name} is an earlier path of the local environment: name it `local` or {LOCAL_ENVIRONMENT}")
    if ":" in name:
        return EnvironmentConfig(import_path=name)
    try:
        return EnvironmentConfig(type=EnvironmentType(name))
    except ValueError:
        known = ", ".join(["local", *(t.value for t in EnvironmentType)])
        raise UserError(f"unknown environment {name!r}: use one of {known} or module:Class") from None


def hands_off_by_mount(environment: EnvironmentConfig) -> bool:
    """Podman: catalog tasks are exported with `--handoff-mount` and run with Harbor's log mounts, since Harbor's
    upload into a podman-compose 1.x container holds the whole submission in the host's memory, twice
    (catalog/handoff_mount.py)."""
    return environment.type == EnvironmentType.PODMAN


def with_log_mounts(environment: EnvironmentConfig) -> EnvironmentConfig:
    """Harbor's log dirs bind-mounted from the trial dir (`--ek auto_mounting=true`): the mount route needs them."""
    return environment.model_copy(update={"kwargs": {**environment.kwargs, "auto_mounting": True}}, deep=True)


def is_local(environment: EnvironmentConfig) -> bool:
    """Whether a job runs on our local environment (named by its one import path)."""
    return environment.import_path == LOCAL_ENVIRONMENT


def resolve_tasks(
    refs: list[str],
    export_dir: Path,
    data_dir: Path | None = None,
    *,
    agent_hours: float | None = None,
    gpus: int | None = None,
    decoding: str | None = None,
    mounted: bool = False,
) -> list[TaskConfig]:
    """Task dirs as given, catalog names exported into `export_dir` (with `data_dir`'s benchmark data, under the
    budget `agent_hours` and `gpus` override, `TaskSpec.with_budget`, and the `decoding` mode, `with_decoding`;
    `mounted`: with the submission through the mount, `hands_off_by_mount`); each checked as a Harbor task. An
    override on a task dir is a UserError: it was written for its own settings."""
    if not refs:
        raise UserError("give at least one --task")
    override = agent_hours is not None or gpus is not None or decoding is not None
    configs: list[TaskConfig] = []
    for ref in dict.fromkeys(refs):
        path = Path(ref)
        if (path / "task.toml").is_file() and override:
            raise UserError(
                f"task {ref} is a task dir: --agent-hours, --gpus and --decoding apply to catalog tasks "
                "(export it again with `ptbench tasks export NAME` and those options)"
            )
        if not (path / "task.toml").is_file():
            spec = get_task_variant(ref, agent_hours, gpus, decoding)
            path = _export_catalog_task(spec, export_dir, data_dir, mounted)
        path = path.resolve()
        try:
            Task(path)
        except (OSError, ValueError, RuntimeError) as exc:
            raise UserError(f"task {ref}: not a valid Harbor task dir: {first_line(exc)}") from exc
        configs.append(TaskConfig(path=path))
    return configs


def get_task_variant(
    name: str, agent_hours: float | None = None, gpus: int | None = None, decoding: str | None = None
) -> TaskSpec:
    """The catalog task `name` under a budget and decoding override (None: its own): the one lookup `run` and
    campaign files share. UserError for an unknown name or a bad override."""

    return get_task(name).with_budget(agent_hours, gpus).with_decoding(decoding)


def _export_catalog_task(spec: TaskSpec, export_dir: Path, data_dir: Path | None, mounted: bool) -> Path:
    # replace: leftovers of a run never started
    return export_task(spec, export_dir, replace=True, data_dir=data_dir, mounted=mounted)


def build_job_config(
    *,
    job_name: str,
    jobs_dir: Path,
    tasks: list[TaskConfig],
    agents: list[str],
    seeds: int,
    environment: EnvironmentConfig,
    concurrency: int,
    console: Console | None = None,
    settings: AgentSettings | None = None,
    tinker: TinkerMode = "auto",
) -> JobConfig:
    """One Harbor job: every agent on every task, once per seed; each seed its own tagged agent config, every agent
    with the run's `settings` (kwargs and environment).

    When a task starts from the locally built tiny model, it is built (or found in the cache) now,
    before any trial's budget runs, and the local environment sees it read-only (`with_tiny_model`). Tasks exported
    with benchmark data get their agent files bound into the agent's environment (`with_task_data`). A model API on
    this host's loopback that an agent's variables name is forwarded into local sandboxes (`forward_ports`). Tasks
    that train through the Tinker API use the service or, by `tinker` mode, a local server (`local_tinker`). The
    hand-off hook stops the agent's leftover processes where that is safe (`with_stop_others`).
    """
    if seeds < 1:
        raise UserError("--seeds must be at least 1")
    if concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    if not agents:
        raise UserError("give at least one --agent")
    resolved: list[AgentConfig] = [
        with_api_host(with_settings(resolve_agent(spec), settings or AgentSettings())) for spec in dict.fromkeys(agents)
    ]
    if is_local(environment) and (ports := loopback_ports(resolved)):
        environment = environment.model_copy(update={"kwargs": with_options(environment.kwargs, forward_ports=ports)})
    if is_local(environment):  # the sandbox's activity record keeps the benchmarks' own files apart
        environment = environment.model_copy(
            update={"kwargs": with_options(environment.kwargs, activity_names=watched_names())}
        )
    specs = task_specs(tasks)  # read once; everything below asks this map
    environment = _share_tiny_model(environment, specs, console or Console(stderr=True))
    environment = with_task_data(environment, specs)
    environment, verifier_env = with_tinker(environment, specs, tinker, is_local(environment))
    environment = with_stop_others(environment)
    return JobConfig(
        verifier=VerifierConfig(env=verifier_env),
        job_name=job_name,
        jobs_dir=jobs_dir.resolve(),
        n_attempts=1,
        n_concurrent_trials=concurrency,
        quiet=True,
        environment=environment,
        agents=[with_seed(agent, seed) for seed in range(seeds) for agent in resolved],
        tasks=tasks,
    )


STOPS_OTHERS = (EnvironmentType.DOCKER, EnvironmentType.PODMAN)
"""Harbor's environments where the hand-off hook tells the environment's own processes from the agent's (with the
local one; verify/leftovers.py): a cloud's own daemons in the container would be stopped with the agent's."""


def with_stop_others(environment: EnvironmentConfig) -> EnvironmentConfig:
    """The environment config with $PTBENCH_STOP_OTHERS set where the hand-off hook may stop the agent's leftover
    processes (the local environment, docker, podman); elsewhere unchanged (the host's own variable, if any, reaches
    exported tasks as it is)."""
    if not (is_local(environment) or environment.type in STOPS_OTHERS):
        return environment
    return environment.model_copy(update={"env": {**environment.env, env_name("stop_others"): "1"}}, deep=True)


def uses_tiny_model(spec: TaskSpec | None) -> bool:
    """Whether a task starts from the locally built tiny base model (asked of its spec and the model registry).

    A Harbor task dir without a ptbench spec (tests/task.json) does not.
    """
    return spec is not None and spec.model.local_build is not None


def with_tiny_model(environment: EnvironmentConfig, *model_dirs: Path) -> EnvironmentConfig:
    """A copy of a local environment config in which the cached tiny model (and its instruct-like sibling, which
    the verifier's model-substitution check compares with) is found instead of rebuilt.

    The model dirs are bound read-only at their host paths (`ro_paths`, kept first) and `PTBENCH_CACHE`
    names the host cache in `EnvironmentConfig.env`, which reaches every command of the agent's and
    the verifier's environment; `ensure_tiny()` inside then finds the model. Idempotent.
    """
    given = LocalOptions.split(environment.kwargs)[0].ro_paths
    models = [str(model_dir.resolve()) for model_dir in model_dirs]
    kwargs = with_options(environment.kwargs, ro_paths=[*models, *(p for p in given if p not in models)])
    env = {**environment.env, env_name("cache"): str(cache_dir().resolve())}
    return environment.model_copy(update={"kwargs": kwargs, "env": env}, deep=True)


def with_task_data(environment: EnvironmentConfig, specs: TaskSpecs) -> EnvironmentConfig:
    """The tasks' agent data (`data/` of a task exported with a data directory) bound read-only into the agent's
    environment only, at `/ptbench/data/<benchmark>` (Harbor's `mounts`); on the local environment each benchmark's
    data reaches only its own tasks (`mount_tasks`). Unchanged when no task carries data. (The test data of
    installed packages the local environment hides itself, on every path: sandbox/fs/masks.py.)"""

    mounts = data_mounts(specs)
    if not mounts:
        return environment
    update: dict = {}
    if is_local(environment):
        update["kwargs"] = with_options(environment.kwargs, mount_tasks=data_mount_tasks(specs))
    quiet_agent_only_warning()
    targets = {mount["target"] for mount in mounts}
    kept = [mount for mount in environment.mounts or [] if mount["target"] not in targets]
    return environment.model_copy(update={**update, "mounts": [*kept, *mounts]}, deep=True)


def _share_tiny_model(environment: EnvironmentConfig, specs: TaskSpecs, console: Console) -> EnvironmentConfig:
    """Build the tiny model now and bind it when a task needs it; other environments are told where it comes from."""
    names = [path.name for path, spec in specs.items() if uses_tiny_model(spec)]
    if not names:
        return environment

    if not is_local(environment):
        console.print(
            f"note: tasks {', '.join(names)} start from the tiny base model: the image their "
            "environment/Dockerfile builds carries it; an environment that ignores the Dockerfile builds it "
            "in each trial's agent and verifier (minutes of pretraining, within their time limits)",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        return environment
    if not (tiny.tiny_dir() / tiny.REPORT_FILE).is_file():
        console.print("building the tiny base model once, before the job (cached for every trial)")
    model = tiny.ensure_tiny(console=console)
    if tiny_instruct.cached_tiny_instruct() is None:
        console.print(
            "building the tiny model's instruct-like sibling once (~20 s, for the substitution check)", highlight=False
        )
    return with_tiny_model(environment, model, tiny_instruct.ensure_tiny_instruct())


def new_job_name(jobs_dir: Path) -> str:
    """A job name from the current time, made unique in `jobs_dir` with a counter if needed."""
    stem = datetime.now().strftime("%Y-%m-%d__%H-%M-%S")
    return next(name for n in count(1) if not (jobs_dir / (name := stem if n == 1 else f"{stem}-{n}")).exists())


def load_job_config(job_dir: Path) -> JobConfig:
    """The config a job was started with, to resume it unchanged."""
    config_path = job_dir / "config.json"
    if not config_path.is_file():
        raise UserError(f"no job to resume at {job_dir} (config.json missing)")
    try:
        config = JobConfig.model_validate_json(config_path.read_text())
    except ValueError as exc:  # pydantic ValidationError included
        raise UserError(f"{config_path} is not a Harbor job config: {first_line(exc)}") from exc
    if (config.jobs_dir / config.job_name).resolve() != job_dir.resolve():
        raise UserError(f"job {job_dir} was started as {config.jobs_dir / config.job_name}; resume it from there")
    return config


def prepare_resume(job_dir: Path) -> list[str]:
    """Make an interrupted or killed job resumable; returns the trials that will run again.

    `kill -9` can cut Harbor's non-atomic writes short: a torn job result.json (Harbor then refuses
    the job) is rewritten with the job's id, a torn lock.json is dropped (Harbor rewrites it), and a
    trial whose result.json is missing or torn is removed, like trials cancelled by Ctrl-C (what
    `harbor job resume` does), so that each runs again exactly once.
    """
    record = read_job(job_dir)
    trials = [r.trial for r in record.trials]
    if not _valid(job_dir / "result.json", JobResult):
        starts = [t.started_at for t in trials if t.started_at is not None]
        stand_in = JobResult(
            id=UUID(record.job.job_id),
            started_at=min(starts, default=datetime.now()),
            n_total_trials=0,
            stats=JobStats(),
        )
        write_atomic(job_dir / "result.json", stand_in.model_dump_json(indent=4))
    if (job_dir / "lock.json").exists() and not _valid(job_dir / "lock.json", JobLock):
        (job_dir / "lock.json").unlink()
    rerun = [t.trial_name for t in trials if t.status == "unknown" or t.exception_type == CANCELLED]
    for name in rerun:
        shutil.rmtree(job_dir / name)
    return rerun


def _valid(path: Path, model: type[BaseModel]) -> bool:
    try:
        model.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return False
    return True


async def create_job(config: JobConfig) -> Job:
    """Harbor's Job for a config (resuming when the job dir holds one); Harbor's refusals become UserErrors."""
    try:
        return await Job.create(config)
    except (ValueError, TypeError, FileExistsError, FileNotFoundError, ImportError) as exc:
        raise UserError(f"harbor refused the job: {first_line(exc)}") from exc
