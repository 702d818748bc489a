"""How `ptbench run` arguments become a Harbor JobConfig: agent names, seeds, environments (in-process)."""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

import pytest
from harbor.job_plan import JobPlan

from ptbench.errors import UserError
from ptbench.run import jobs
from ptbench.run.agents import resolve_agent, seed_of

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
        job_name="j", jobs_dir=tmp_path, tasks=jobs.resolve_tasks([str(RUN_TASKS / "echo"), str(RUN_TASKS / "broken")],
                                                                   tmp_path / "tasks"),
        agents=["reference", "nop"], seeds=3, environment=jobs.resolve_environment("local"), concurrency=4,
    )
    trials = JobPlan.build_trial_configs(config, config.tasks, job_id=uuid4())
    keys = sorted((t.task.path.name, t.agent.name, seed_of(t.agent)) for t in trials)
    assert keys == sorted((task, agent, seed) for task in ("echo", "broken") for agent in ("oracle", "nop")
                          for seed in range(3))
    assert config.jobs_dir.is_absolute() and config.environment.import_path == jobs.LOCAL_ENVIRONMENT


def test_environments():
    assert jobs.resolve_environment("docker").type.value == "docker"
    assert jobs.resolve_environment("pkg.mod:Env").import_path == "pkg.mod:Env"
    with pytest.raises(UserError, match="unknown environment 'moon'"):
        jobs.resolve_environment("moon")
