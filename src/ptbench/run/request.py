"""One `ptbench run` as a request: the CLI parses its arguments into a `RunRequest`; here it is validated (a resumed
job takes no new settings), resolved into a Harbor job config (each task spec read once: `task_specs`), launched,
ingested into the store and summarised. The CLI only prints what `RunOutcome` says."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from harbor.models.job.config import JobConfig
from rich.console import Console

from ptbench.errors import UserError, VerifierError
from ptbench.paths import work_dir
from ptbench.run import jobs
from ptbench.run.agents import agent_settings
from ptbench.run.launch import interrupts_as_sigint, launch
from ptbench.run.local_tinker import TinkerMode
from ptbench.store.ingest import ingest
from ptbench.store.models import TRIAL_STATUSES, JobRecord
from ptbench.store.schema import open_store
from ptbench.store.writer import SaveStats

TINKER_MODES: tuple[TinkerMode, ...] = ("auto", "local", "service")


@dataclass
class RunRequest:
    """`ptbench run`'s arguments as given (None: not given, so a resumed job keeps its own)."""

    tasks: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    seeds: int | None = None
    env: str | None = None
    concurrency: int | None = None
    job_name: str | None = None
    resume: str | None = None
    data_dir: Path | None = None
    agent_kwargs: list[str] = field(default_factory=list)
    agent_env: list[str] = field(default_factory=list)
    agent_config: Path | None = None
    tinker: str | None = None
    baseline: bool = False
    agent_hours: float | None = None
    gpus: int | None = None
    decoding: str | None = None
    store: Path = Path("results.sqlite")

    def new_settings(self) -> list[str]:
        """The flags that set up a new job, as given (a resumed job refuses them)."""
        given = {
            "--task": self.tasks or None,
            "--agent": self.agents or None,
            "--seeds": self.seeds,
            "--env": self.env,
            "--concurrency": self.concurrency,
            "--job-name": self.job_name,
            "--data-dir": self.data_dir,
            "--agent-kwarg": self.agent_kwargs or None,
            "--agent-env": self.agent_env or None,
            "--agent-config": self.agent_config,
            "--tinker": self.tinker,
            "--baseline": self.baseline or None,
            "--agent-hours": self.agent_hours,
            "--gpus": self.gpus,
            "--decoding": self.decoding,
        }
        return [flag for flag, value in given.items() if value is not None]


@dataclass(frozen=True)
class PreparedRun:
    """A job ready to launch: its config and dir, and the store it goes to."""

    config: JobConfig
    job_dir: Path
    store: Path
    resuming: bool


@dataclass(frozen=True)
class RunOutcome:
    """What the run left in the store: the job's record, the ingest's counts, and a summary line."""

    record: JobRecord
    stats: SaveStats
    summary: str
    not_ok: str | None
    """One line when some trial did not end ok (the CLI then exits 1), else None."""


def prepare(request: RunRequest, console: Console) -> PreparedRun:
    """Validate and resolve the request into a job (new, or the one it resumes); UserError for bad input."""
    jobs_dir = (work_dir() / "jobs").resolve()
    if request.resume is not None:
        if given := request.new_settings():
            raise UserError(f"--resume continues a job with its own settings; drop {', '.join(given)}")
        job_dir = Path(request.resume) if Path(request.resume).is_dir() else jobs_dir / request.resume
        config = jobs.load_job_config(job_dir)
    else:
        name = request.job_name or jobs.new_job_name(jobs_dir)
        job_dir = jobs_dir / name
        if job_dir.exists():
            raise UserError(f"job {name} already exists at {job_dir}; continue it with --resume {name}")
        environment = jobs.resolve_environment(request.env or "local")
        mounted = jobs.hands_off_by_mount(environment)
        config = jobs.build_job_config(
            job_name=name,
            jobs_dir=jobs_dir,
            tasks=jobs.resolve_tasks(
                request.tasks,
                work_dir().resolve() / "tasks" / name,
                request.data_dir,
                agent_hours=request.agent_hours,
                gpus=request.gpus,
                decoding=request.decoding,
                mounted=mounted,
            ),
            agents=request.agents,
            seeds=1 if request.seeds is None else request.seeds,
            environment=jobs.with_log_mounts(environment) if mounted else environment,
            concurrency=4 if request.concurrency is None else request.concurrency,
            console=console,
            settings=agent_settings(request.agent_config, request.agent_kwargs, request.agent_env),
            tinker=tinker_mode(request.tinker),
        )
    _check_store(request.store)  # an old store is refused before the job runs, not after
    return PreparedRun(config, job_dir, request.store, resuming=request.resume is not None)


def tinker_mode(value: str | None) -> TinkerMode:
    """--tinker's value, checked."""
    for mode in TINKER_MODES:
        if (value or "auto") == mode:
            return mode
    raise UserError(f"--tinker must be one of {', '.join(TINKER_MODES)}, not {value!r}")


def measure_baselines(prepared: PreparedRun, console: Console) -> None:
    """The base model of each task scored and kept as its benchmark's baseline (beside the store), before the job."""
    from ptbench.verify.base_baseline import measure_task_baselines  # heavy: the verifier (torch, inspect)

    config = prepared.config
    task_dirs = [Path(task.path) for task in config.tasks if task.path is not None]
    try:
        measure_task_baselines(
            task_dirs,
            prepared.store.parent / "baselines",
            work_dir() / "base-scores" / config.job_name,
            f"ptbench run --baseline, job {config.job_name}",
            console,
        )
    except VerifierError as exc:
        raise UserError(f"--baseline: scoring a base model failed: {exc}") from None


def execute(prepared: PreparedRun) -> None:
    """Run the job (KeyboardInterrupt when it was interrupted: what ran is kept, and the job resumes)."""
    with interrupts_as_sigint():
        asyncio.run(launch(prepared.config, resuming=prepared.resuming))


def gather(prepared: PreparedRun) -> RunOutcome | None:
    """Ingest the job into the store and summarise it (None when the job never started)."""
    if not prepared.job_dir.is_dir():
        return None
    record, stats = ingest(prepared.job_dir, prepared.store)
    trials = [r.trial for r in record.trials]
    counts = {status: n for status in TRIAL_STATUSES if (n := sum(t.status == status for t in trials))}
    summary = (
        f"job {record.job.name}: {len(trials)} trials "
        f"({', '.join(f'{n} {s}' for s, n in counts.items()) or 'none'}) "
        f"in {prepared.job_dir}; store {prepared.store}: {stats.added} added, {stats.updated} updated, "
        f"{stats.removed} removed"
    )
    not_ok = [t for t in trials if t.status != "ok"]
    line = None
    if not_ok:
        kinds = ", ".join(f"{n} {s}" for s, n in counts.items() if s != "ok")
        unscored = sum(t.score is None for t in trials)
        line = (
            f"{len(not_ok)} of {len(trials)} trials did not end ok ({kinds}), {unscored} without a verified score; "
            f"see ptbench runs show TRIAL"
        )
    return RunOutcome(record, stats, summary, line)


def _check_store(store: Path) -> None:
    """Refuse a store this ptbench cannot write (another schema version, not a store) before anything runs."""
    if store.exists():
        open_store(store, create=False).close()
