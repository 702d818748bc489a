"""Fixtures for the results-store tests: one real Harbor job (echo task, reference and nop) to ingest and damage."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

# Harbor imports LiteLLM, which otherwise fetches a price list; and no telemetry from tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HARBOR_TELEMETRY", "0")

RUN_TASKS = Path(__file__).resolve().parent.parent / "fixtures" / "run_tasks"


@pytest.fixture(scope="session")
def pristine_job(tmp_path_factory) -> Path:
    """A finished real job of 2 trials (reference: reward 1, nop: reward 0) in the local environment."""
    from ptbench.run import jobs
    from ptbench.run.preflight import preflight

    jobs_dir = tmp_path_factory.mktemp("store-jobs")
    config = jobs.build_job_config(
        job_name="echo-job",
        jobs_dir=jobs_dir,
        tasks=jobs.resolve_tasks([str(RUN_TASKS / "echo")], jobs_dir / "tasks"),
        agents=["reference", "nop"],
        seeds=1,
        environment=jobs.resolve_environment("local"),
        concurrency=2,
    )

    async def run() -> None:
        await preflight(config)
        job = await jobs.create_job(config)
        await job.run()

    asyncio.run(run())
    return jobs_dir / "echo-job"


@pytest.fixture
def job_dir(pristine_job: Path, tmp_path: Path) -> Path:
    """A private copy of the real job, free to damage."""
    return Path(shutil.copytree(pristine_job, tmp_path / "echo-job", symlinks=True))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Where this test's results store goes."""
    return tmp_path / "results.sqlite"
