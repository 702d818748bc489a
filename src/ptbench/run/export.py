"""Export a catalog task (TaskSpec) as a Harbor task directory that the unmodified `harbor run` accepts.

Layout of `OUT/<name>/`:
- task.toml: written by Harbor's own TaskConfig model: agent timeout = the budget, verifier timeout,
  resources, network mode, `artifacts` (the workspace without weights, the agent's logs, the submission: the
  verifier always runs in a fresh environment, never in the one the agent touched, and test.sh hands the first two
  to the integrity checks), and a healthcheck that
  sets the environment up (writes /app/task.json and the `timer` start stamp) in every Harbor
  environment type;
- instruction.md: rendered from the catalog's templates;
- environment/: the container image's build context (`run/image.py`: Dockerfile, ptbench's own wheel and its pins),
  the same for every task of a device class; the local environment ignores it; with `mounted`, also the
  docker-compose.yaml that binds the trial's agent/ dir into the verifier (catalog/handoff_mount.py);
- tests/: test.sh (runs `ptbench verify`), task.json, a copy of instruction.md and, for frogs, heldout.jsonl with
  its manifest: Harbor uploads tests/ only for the verifier, so held-out boards never enter the agent's environment;
- with a data directory (`data_dir=`): the benchmark's test side in tests/data/ (the verifier's
  `--data-dir`), its train and dev files in data/ for the agent (`run/task_data.py`);
- solution/: solve.sh (the reference recipe, or a copy of the base model until it exists) and task.json.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from harbor.models.task.config import (
    AgentConfig,
    EnvironmentConfig,
    HealthcheckConfig,
    TaskConfig,
    VerifierCollectConfig,
    VerifierConfig,
)

from ptbench import __version__
from ptbench.benchmarks.registry import BENCHMARKS
from ptbench.catalog import handoff_mount
from ptbench.catalog.heldout import resolve_heldout_seed, write_heldout
from ptbench.catalog.instructions import INSTRUCTION_FILE, render_instruction
from ptbench.catalog.spec import TaskSpec
from ptbench.catalog.submission import (
    AGENT_LOGS,
    FINAL_MODEL,
    PARTS_DIR,
    TASK_JSON,
    WORKDIR,
    artifacts,
    is_frogs,
    submission_path,
)
from ptbench.catalog.templating import render
from ptbench.catalog.timer import stamp_command
from ptbench.errors import UserError
from ptbench.files import staged_dir, write_atomic
from ptbench.run.image import write_image_context
from ptbench.run.task_data import VERIFIER_DATA, agent_data_path, copy_task_data
from ptbench.settings import env_name
from ptbench.verify.handoff import RECORD_PATH as HANDOFF_RECORD
from ptbench.verify.judges import INTEGRITY_JUDGE_ENV, JUDGE_ENV

MIN_VERIFIER_SEC = 15 * 60
MAX_VERIFIER_SEC = 3 * 3600
JUDGE_KEY = "OPENAI_API_KEY"
TINKER_ENV = ("TINKER_API_KEY", "TINKER_BASE_URL")
"""What a Tinker task's agent and verifier get from the host: the service's key and, for a local server
(`ptbench run` sets both for its local mode), its address; empty = the real service."""
"""Passed with the judge-model choices to the verifier (empty when unset): the benchmark's judges where it has any,
the integrity checks' optional judge everywhere."""


def export_task(
    spec: TaskSpec,
    out: Path,
    *,
    heldout_seed: int | None = None,
    replace: bool = False,
    data_dir: Path | None = None,
    in_parts: bool = False,
    mounted: bool = False,
) -> Path:
    """Write `out/<spec.name>/` and return it. An existing directory is a UserError unless `replace`.

    `data_dir` (a data directory from `ptbench data build`) puts the benchmark's data in the task:
    train and dev files for the agent, the test side for the verifier; frogs tasks need none. `in_parts` hands the
    submission to the verifier in parts of at most 4 GiB (verify/parts.py), for environments that cap one transfer;
    `mounted` through the trial's agent/ dir, bind-mounted into the verifier (catalog/handoff_mount.py), for compose
    environments, where Harbor's upload holds the artifact in memory.

    The directory is built beside its destination and moved into place, so a crash never leaves a
    half-written task where Harbor would find it.
    """
    if in_parts and mounted:
        raise UserError("--handoff-parts and --handoff-mount are two ways to hand the model over: choose one")
    dest = out / spec.name
    if (dest.exists() or dest.is_symlink()) and not replace:
        raise UserError(f"{dest} exists; pass --force to replace it")
    with staged_dir(dest) as staging:
        _write_task(spec, staging, heldout_seed, data_dir, in_parts, mounted)
    return dest


HANDOFF_TIMEOUT_SEC = 1800.0
"""The collect hook hashes the submission once (an 8 GB model: about a minute on one core) and, when `mounted`, copies
it once (about as long), far inside this."""


def _write_task(
    spec: TaskSpec,
    root: Path,
    heldout_seed: int | None,
    data_dir: Path | None,
    in_parts: bool = False,
    mounted: bool = False,
) -> None:
    agent_files = None if data_dir is None or spec.is_frogs else copy_task_data(data_dir, spec.benchmark, root)
    agent_data = str(agent_data_path(spec.benchmark)) if agent_files is not None else None
    write_atomic(root / "task.toml", task_toml(spec, agent_data, in_parts, mounted))
    instruction = render_instruction(spec, agent_data, agent_files or [])
    write_atomic(root / INSTRUCTION_FILE, instruction)
    write_image_context(root / "environment", spec.device)
    if mounted:
        write_atomic(root / "environment" / "docker-compose.yaml", handoff_mount.COMPOSE)
    tests = root / "tests"
    _write(
        tests / "test.sh",
        _render(
            "test.sh.jinja",
            name=spec.name,
            submission=handoff_mount.verifier_path(submission_path(spec)) if mounted else submission_path(spec),
            workspace=WORKDIR,
            agent_logs=AGENT_LOGS,
            handoff=HANDOFF_RECORD,
            parts=PARTS_DIR if in_parts else None,
            data_dir=VERIFIER_DATA if agent_files is not None else None,
        ),
        0o755,
    )
    spec.dump(tests / "task.json")
    write_atomic(tests / INSTRUCTION_FILE, instruction)
    if is_frogs(spec):
        write_heldout(spec, tests, resolve_heldout_seed(heldout_seed))
    _write(
        root / "solution" / "solve.sh",
        _render(
            "solve.sh.jinja",
            name=spec.name,
            fallback=base_model_copy_command(spec),
        ),
        0o755,
    )
    spec.dump(root / "solution" / "task.json")


def task_toml(spec: TaskSpec, agent_data: str | None = None, in_parts: bool = False, mounted: bool = False) -> str:
    """task.toml for a spec, serialised by Harbor's own TaskConfig (so Harbor reads back what we meant);
    `agent_data`, where the agent finds its benchmark data, becomes $PTBENCH_DATA_DIR."""

    budget_sec = round(spec.budget_hours * 3600)
    tinker = TINKER_ENV if spec.backend == "tinker" else ()
    # the hand-off hook stops the agent's leftover processes where the host says that is safe (verify/leftovers.py)
    env = {key: f"${{{key}:-}}" for key in (*tinker, env_name("stop_others"))}
    verifier_env = (JUDGE_KEY, *((JUDGE_ENV,) if _judged(spec) else ()), INTEGRITY_JUDGE_ENV, *tinker)
    if agent_data is not None:
        env[env_name("data_dir")] = agent_data
    config = TaskConfig(
        metadata={
            "ptbench_task": spec.name,
            "benchmark": spec.benchmark,
            "base_model": spec.base_model,
            "budget_hours": spec.budget_hours,
            "backend": spec.backend,
            "hinted": spec.hinted,
            "spec_schema_version": spec.schema_version,
            "exported_by": f"ptbench {__version__}",
        },
        agent=AgentConfig(timeout_sec=float(budget_sec), **_agent_network(spec)),
        verifier=VerifierConfig(
            timeout_sec=float(verifier_timeout_sec(spec)),
            environment_mode="separate",
            env={key: f"${{{key}:-}}" for key in verifier_env},
            # the submission as it leaves the agent's environment, for the verifier to check it arrived whole
            collect=[
                VerifierCollectConfig(
                    # no --stop-others: $PTBENCH_STOP_OTHERS, from the host, turns it on where it is safe
                    command=f"ptbench handoff-record {submission_path(spec)} {HANDOFF_RECORD}"
                    + (f" --parts {PARTS_DIR}" if in_parts else "")
                    + (f" && {handoff_mount.copy_command(submission_path(spec))}" if mounted else ""),
                    timeout_sec=HANDOFF_TIMEOUT_SEC,
                    user="root",
                )
            ],
        ),
        environment=EnvironmentConfig(
            cpus=spec.cpus,
            memory_mb=spec.memory_mb,
            gpus=spec.gpus,
            network_mode="public" if spec.network == "public" else "no-network",
            workdir=str(WORKDIR),
            build_timeout_sec=1800.0,
            env=env,
            healthcheck=HealthcheckConfig(
                command=setup_command(spec, budget_sec),
                interval_sec=1.0,
                timeout_sec=30.0,
                retries=2,
            ),
        ),
        artifacts=handoff_mount.mounted_artifacts(spec) if mounted else artifacts(spec, in_parts),
    )
    return config.model_dump_toml()


def _agent_network(spec: TaskSpec) -> dict[str, object]:
    """The agent phase's own policy where the spec gives it one (the environment's, and so the verifier's, stay as
    they are: the verifier reaches its judge and the Tinker API whatever the agent may)."""
    if spec.agent_allowed_hosts is None:
        return {}
    return {"network_mode": "allowlist", "allowed_hosts": list(spec.agent_allowed_hosts)}


def setup_command(spec: TaskSpec, budget_sec: int) -> str:
    """The healthcheck: put the agent-visible task.json in place, then write the timer's start stamp once."""
    spec_json = spec.model_dump_json()
    return (
        f"mkdir -p {WORKDIR} && printf '%s\\n' {shlex.quote(spec_json)} > {TASK_JSON} && "
        f"{{ {stamp_command(budget_sec)}; }}"
    )


def verifier_timeout_sec(spec: TaskSpec) -> int:
    """A quarter of the budget, within [15 min, 3 h]: the final evaluation must fit, not the training."""
    return int(min(MAX_VERIFIER_SEC, max(MIN_VERIFIER_SEC, spec.budget_hours * 3600 / 4)))


def base_model_copy_command(spec: TaskSpec) -> str:
    """Shell that submits an untouched copy of the base model (solve.sh's fallback); '' for Tinker tasks."""
    if spec.backend == "tinker":
        return ""
    model = spec.model
    if model.hub_id is None:
        return f"{model.local_build} --out {FINAL_MODEL}"
    revision = f" --revision {shlex.quote(model.revision)}" if model.revision else ""
    return f"hf download {shlex.quote(model.hub_id)}{revision} --local-dir {FINAL_MODEL}"


def _judged(spec: TaskSpec) -> bool:
    definition = BENCHMARKS.get(spec.benchmark)
    return definition is not None and bool(definition.judge_roles)


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text, mode)


def _render(template: str, **values: object) -> str:
    return render("ptbench.run", template, **values).rstrip("\n") + "\n"
