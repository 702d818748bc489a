"""Agents' trials through ptbench's job builder, preflight and Harbor's Job in the local environment, ingested into a
store: what the agent tests run against the fake API (one job holds every agent on every task)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from harbor.models.trial.config import TaskConfig

from ptbench.agents.fake_api.server import FakeApi
from ptbench.run.agents import AgentSettings
from ptbench.run.jobs import build_job_config, create_job, resolve_environment
from ptbench.run.preflight import preflight
from ptbench.store.ingest import ingest


def run_job(base: Path, tasks: list[Path], agents: list[str], settings: AgentSettings,
            api: FakeApi) -> dict[tuple[str, str], SimpleNamespace]:
    """One job of every agent (`NAME@MODEL`, each MODEL its own) on every task, one trial each, ingested into
    base/results.sqlite; the trials by (agent spec, task name)."""
    environment = resolve_environment("local")
    environment = environment.model_copy(update={"kwargs": {"sandbox_dir": str(base / "sandboxes")},
                                                  "env": {"PTBENCH_VERIFY_MAX_TOKENS": "64"}})
    config = build_job_config(job_name="job", jobs_dir=base / "jobs", tasks=[TaskConfig(path=t) for t in tasks],
                              agents=agents, seeds=1, environment=environment, concurrency=1, settings=settings)

    async def main() -> None:
        await preflight(config)
        job = await create_job(config)
        await job.run()

    asyncio.run(main())
    record, _ = ingest(base / "jobs" / "job", base / "results.sqlite")
    by_model = {agent.partition("@")[2]: agent for agent in agents}  # each agent with a model of its own
    trials = {}
    for trial in (r.trial for r in record.trials):
        trials[by_model[trial.model_name or ""], trial.task_name] = SimpleNamespace(
            trial=trial, config=config, requests=list(api.requests), store=base / "results.sqlite",
            trial_dir=base / "jobs" / "job" / trial.trial_name)
    return trials


def run_agent(base: Path, task: Path, agent: str, settings: AgentSettings, api: FakeApi) -> SimpleNamespace:
    """One trial of `agent` on `task` (a job of its own)."""
    (trial,) = run_job(base, [task], [agent], settings, api).values()
    return trial
