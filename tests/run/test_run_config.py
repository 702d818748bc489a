"""How `ptbench run` arguments become a Harbor JobConfig: agent names, seeds, environments (in-process)."""

from __future__ import annotations

import shutil
from pathlib import Path
from uuid import uuid4

import pytest
from harbor.job_plan import JobPlan
from harbor.models.trial.config import EnvironmentConfig

from ptbench.catalog.tasks import get_task
from ptbench.errors import UserError
from ptbench.run import jobs
from ptbench.run.agents import resolve_agent
from ptbench.trialdir.labels import seed_of

RUN_TASKS = Path(__file__).resolve().parent.parent / "fixtures" / "run_tasks"


def test_agent_names():
    assert resolve_agent("reference").name == "oracle"
    claude = resolve_agent("claude-code@anthropic/claude-sonnet-4-5")
    assert (claude.name, claude.model_name) == ("claude-code", "anthropic/claude-sonnet-4-5")
    assert resolve_agent("harbor.agents.nop:NopAgent").import_path == "harbor.agents.nop:NopAgent"


@pytest.mark.parametrize("spec", ["gpt-agent", "harbor.agents.nop:Missing", "os.path:join", "@model"])
def test_unknown_agents_are_user_errors(spec):
    with pytest.raises(UserError):
        resolve_agent(spec)


def test_every_seed_is_its_own_trial_config(tmp_path):
    config = jobs.build_job_config(
        job_name="j",
        jobs_dir=tmp_path,
        tasks=jobs.resolve_tasks([str(RUN_TASKS / "echo"), str(RUN_TASKS / "broken")], tmp_path / "tasks"),
        agents=["reference", "nop"],
        seeds=3,
        environment=jobs.resolve_environment("local"),
        concurrency=4,
    )
    trials = JobPlan.build_trial_configs(config, config.tasks, job_id=uuid4())
    keys = sorted((t.task.path.name, t.agent.name, seed_of(t.agent)) for t in trials)
    assert keys == sorted(
        (task, agent, seed) for task in ("echo", "broken") for agent in ("oracle", "nop") for seed in range(3)
    )
    assert config.jobs_dir.is_absolute() and config.environment.import_path == jobs.LOCAL_ENVIRONMENT
    from ptbench.integrity.checks.heldout_sources import (
        watched_names,  # the activity record keeps the benchmarks' files apart
    )

    assert config.environment.kwargs["activity_names"] == watched_names()
    assert (
        "activity_names"
        not in jobs.build_job_config(
            job_name="j",
            jobs_dir=tmp_path,
            tasks=config.tasks,
            agents=["nop"],
            seeds=1,
            environment=jobs.resolve_environment("docker"),
            concurrency=1,
        ).environment.kwargs
    )


def test_a_cli_agents_own_model_api_host_is_declared_for_the_record(tmp_path, monkeypatch):
    """The run declares each agent CLI's own model API host (Harbor's `agent.extra_allowed_hosts`): the egress proxy
    tags those connections `agent-api` and forbidden-network exempts them; a base URL on this host's loopback (the
    fake API) is forwarded instead, another base URL is the host declared; agents that are not CLIs declare none."""
    from ptbench.run.agents import AgentSettings

    for variable in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)

    def hosts(agent: str, env: dict[str, str] | None = None) -> list[str]:
        config = jobs.build_job_config(
            job_name="j",
            jobs_dir=tmp_path,
            tasks=jobs.resolve_tasks([str(RUN_TASKS / "echo")], tmp_path / "tasks"),
            agents=[agent],
            seeds=1,
            environment=jobs.resolve_environment("local"),
            concurrency=1,
            settings=AgentSettings(env=env or {}),
        )
        return config.agents[0].extra_allowed_hosts

    assert hosts("claude-code@claude-sonnet-4-5") == ["api.anthropic.com"]
    assert hosts("codex@gpt-5") == ["api.openai.com"]
    assert hosts("gemini-cli@google/gemini-2.5-pro") == ["generativelanguage.googleapis.com"]
    assert hosts("opencode@openai/gpt-5") == ["api.openai.com"]
    assert hosts("claude-code@m", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123"}) == []
    assert hosts("codex@m", {"OPENAI_BASE_URL": "https://llm.example.test/v1"}) == ["llm.example.test"]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example.test")
    assert hosts("claude-code@m") == ["gateway.example.test"]
    assert hosts("reference") == [] and hosts("nop") == []


def test_environments():
    assert jobs.resolve_environment("docker").type.value == "docker"
    assert jobs.resolve_environment("pkg.mod:Env").import_path == "pkg.mod:Env"
    with pytest.raises(UserError, match="unknown environment 'moon'"):
        jobs.resolve_environment("moon")


def test_the_local_environment_has_one_import_path_and_earlier_ones_are_named_in_one_line():
    """`--env local`, README and Harbor configs all name `ptbench.sandbox:LocalEnvironment`; the paths earlier
    versions wrote are refused at launch naming the new one, and read back as `local` in stored records. Nothing is
    imported to tell: any other path, even one that resolves to the same class, is another environment."""
    import importlib

    from ptbench.sandbox import LocalEnvironment
    from ptbench.trialdir.labels import EARLIER_PATHS, environment_label

    assert jobs.resolve_environment("local").import_path == jobs.LOCAL_ENVIRONMENT == "ptbench.sandbox:LocalEnvironment"
    module, _, name = jobs.LOCAL_ENVIRONMENT.partition(":")
    assert getattr(importlib.import_module(module), name) is LocalEnvironment
    config = jobs.resolve_environment(jobs.LOCAL_ENVIRONMENT)
    assert jobs.is_local(config) and environment_label(config) == "local"
    for path in sorted(EARLIER_PATHS):
        with pytest.raises(UserError, match=f"earlier path of the local environment: name it `local` or {module}"):
            jobs.resolve_environment(path)
        assert environment_label(EnvironmentConfig(import_path=path)) == "local", path
    for path in ("ptbench.sandbox:Nothing", "ptbench.nowhere:LocalEnvironment", "pkg.mod:LocalEnvironment"):
        config = jobs.resolve_environment(path)
        assert not jobs.is_local(config) and environment_label(config) == path, path


@pytest.fixture
def cached_tiny(tmp_path, monkeypatch):
    """A stand-in for the cached tiny model and its sibling (no build): ensure_tiny returns the model and records each
    call; the sibling is found at `SIBLING` beside it."""
    from ptbench.models import tiny, tiny_instruct

    cache = tmp_path / "cache"
    model = cache / "models" / tiny.TINY_NAME / "key"
    sibling = cache / "models" / tiny_instruct.NAME / SIBLING
    for path in (model, sibling):
        path.mkdir(parents=True)
    monkeypatch.setenv("PTBENCH_CACHE", str(cache))
    calls: list[Path] = []

    def ensure_tiny(*args, **kwargs):
        calls.append(model)
        return model

    monkeypatch.setattr(tiny, "ensure_tiny", ensure_tiny)
    monkeypatch.setattr(tiny_instruct, "ensure_tiny_instruct", lambda *args, **kwargs: sibling)
    monkeypatch.setattr(tiny_instruct, "cached_tiny_instruct", lambda: sibling)
    return model, calls


SIBLING = "sibling-key"


def tiny_job(tmp_path, environment, tasks=("frogs-single-tiny",)):
    return jobs.build_job_config(
        job_name="j",
        jobs_dir=tmp_path / "jobs",
        tasks=jobs.resolve_tasks(list(tasks), tmp_path / "tasks"),
        agents=["reference"],
        seeds=2,
        environment=environment,
        concurrency=1,
    )


def test_a_tiny_task_sees_the_cached_model_read_only(tmp_path, cached_tiny):
    model, calls = cached_tiny
    config = tiny_job(tmp_path, jobs.resolve_environment("local"))
    assert calls  # built (or found) before the job starts, not inside a trial's budget
    sibling = model.parents[1] / "tiny-instruct-v1" / SIBLING  # the substitution check compares with it
    assert config.environment.kwargs["ro_paths"] == [str(model.resolve()), str(sibling.resolve())]
    # EnvironmentConfig.env reaches the agent's and the verifier's environment alike
    assert config.environment.env["PTBENCH_CACHE"] == str(model.parents[2].resolve())


def test_jobs_without_a_tiny_task_are_unchanged(tmp_path, cached_tiny):
    _, calls = cached_tiny
    plain = shutil.copytree(RUN_TASKS / "echo", tmp_path / "plain")
    (plain / "tests" / "task.json").unlink()  # a Harbor task, not a ptbench one: no base model
    config = tiny_job(tmp_path, jobs.resolve_environment("local"), tasks=[str(plain)])
    assert not calls and "ro_paths" not in config.environment.kwargs
    assert config.environment.env == {"PTBENCH_STOP_OTHERS": "1"}  # the hand-off hook's, on every local job


def test_other_environments_are_warned_that_the_sandbox_builds_the_tiny_model(tmp_path, cached_tiny, capsys):
    _, calls = cached_tiny
    config = tiny_job(tmp_path, jobs.resolve_environment("docker"))
    err = capsys.readouterr().err
    assert not calls and config.environment.env == {"PTBENCH_STOP_OTHERS": "1"}  # no cache; the hook's as locally
    assert len(err.strip().splitlines()) == 1 and "tiny" in err and "frogs-single-tiny" in err


def test_the_demo_binds_the_tiny_model_with_the_same_function(tmp_path, cached_tiny, monkeypatch):
    from ptbench.demo.config import DemoPaths
    from ptbench.demo.job import job_config
    from ptbench.run.export import export_task

    model, _ = cached_tiny
    used = []
    shared = jobs.with_tiny_model
    monkeypatch.setattr(jobs, "with_tiny_model", lambda *a, **k: used.append(a) or shared(*a, **k))  # type: ignore[func-returns-value]  # the call's value is not used
    task_dir = export_task(get_task("frogs-single-tiny"), tmp_path / "tasks")
    extra = tmp_path / "recipe.json"
    config = job_config(DemoPaths(work_dir=tmp_path, run="demo"), task_dir, model, {"X": "1"}, [extra])
    assert used
    sibling = model.parents[1] / "tiny-instruct-v1" / SIBLING
    assert config.environment.kwargs["ro_paths"] == [str(model.resolve()), str(sibling.resolve()), str(extra)]
    assert config.environment.env == {
        "PTBENCH_CACHE": str(model.parents[2].resolve()),
        "X": "1",
        "PTBENCH_STOP_OTHERS": "1",
    }


@pytest.mark.parametrize("env", ["podman", "local", "docker", "modal"])
def test_a_podman_run_hands_the_submission_over_by_the_mount_with_harbors_log_mounts(env, tmp_path, monkeypatch):
    """On podman, Harbor's upload into the verifier holds the whole model in the host's memory (twice): `ptbench run
    --env podman` exports its catalog tasks with the mount route and turns on the log mounts that route reads."""
    from rich.console import Console

    from ptbench.catalog import handoff_mount
    from ptbench.run.request import RunRequest, prepare

    monkeypatch.setenv("PTBENCH_WORKDIR", str(tmp_path / "work"))
    request = RunRequest(tasks=["aime2025-qwen3-4b"], agents=["nop"], env=env, store=tmp_path / "r.sqlite")
    config = prepare(request, Console(stderr=True)).config
    [task] = config.tasks
    compose = Path(task.path) / "environment" / "docker-compose.yaml"
    if env == "podman":
        assert compose.read_text() == handoff_mount.COMPOSE
        assert config.environment.kwargs["auto_mounting"] is True
    else:
        assert not compose.exists() and "auto_mounting" not in config.environment.kwargs
