"""One agent's trial through ptbench's job builder, preflight and Harbor's Job in the local environment, ingested
into a store: what the agent tests run against the fake API."""

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


def run_agent(base: Path, task: Path, agent: str, settings: AgentSettings, api: FakeApi) -> SimpleNamespace:
    """One trial of `agent` through ptbench's job builder, preflight and Harbor's Job; ingested into a store."""
    environment = resolve_environment("local")
    environment = environment.model_copy(update={"kwargs": {"sandbox_dir": str(base / "sandboxes")},
                                                  "env": {"PTBENCH_VERIFY_MAX_TOKENS": "64"}})
    config = build_job_config(job_name="job", jobs_dir=base / "jobs", tasks=[TaskConfig(path=task)], agents=[agent],
                              seeds=1, environment=environment, concurrency=1, settings=settings)

    async def main() -> None:
        await preflight(config)
        job = await create_job(config)
        await job.run()

    asyncio.run(main())
    record, _ = ingest(base / "jobs" / "job", base / "results.sqlite")
    (trial,) = [r.trial for r in record.trials]
    return SimpleNamespace(trial=trial, config=config, requests=list(api.requests),
                           trial_dir=base / "jobs" / "job" / trial.trial_name)
