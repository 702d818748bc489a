"""The `--handoff-mount` route in Harbor's real podman environment: a model written in the agent's container reaches
a separate verifier's container through the trial's agent/ dir (Harbor's log mount, bound read-only into the
verifier by the compose file exported tasks carry), not through Harbor's artifact upload, which on podman-compose
1.x holds the whole artifact in the host's memory (bench/README.md). Without Harbor's log mounts the environment
does not start, and says what to pass. A small task on the container test's base image (no ptbench inside: the
collect hook is the route's copy, the verifier checks SHA-256 sums), so it costs seconds on top of that test."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.catalog import handoff_mount
from ptbench.catalog.submission import FINAL_MODEL

pytestmark = [pytest.mark.slow, pytest.mark.heavy(60)]  # 51 s and 7 s alone (2026-12-02)

ROOT = Path(__file__).resolve().parents[2]
BASE_IMAGE = ROOT / "scripts" / "podman" / "base-image"
DEPS_IMAGE = "localhost/ptbench-python-deps:3.12"

SOLVE = f"""#!/bin/bash
set -e
mkdir -p {FINAL_MODEL}
head -c 3145728 /dev/urandom > {FINAL_MODEL}/model-00001-of-00002.safetensors
head -c 1048577 /dev/urandom > {FINAL_MODEL}/model-00002-of-00002.safetensors
echo '{{}}' > {FINAL_MODEL}/config.json
cd {FINAL_MODEL} && sha256sum * > /tmp/sums && mv /tmp/sums SHA256SUMS
"""

TEST = f"""#!/bin/bash
reward=0
if cd {handoff_mount.verifier_path(FINAL_MODEL)} && sha256sum -c --quiet SHA256SUMS && [ ! -e {FINAL_MODEL} ]; then
  reward=1
fi
echo "{{\\"reward\\": $reward}}" > /logs/verifier/reward.json
"""


def write_task(root: Path) -> Path:
    task = root / "mounted"
    for sub in ("environment", "solution", "tests"):
        (task / sub).mkdir(parents=True)
    (task / "task.toml").write_text(f"""schema_version = "1.4"
artifacts = []

[agent]
timeout_sec = 600.0

[verifier]
timeout_sec = 600.0
environment_mode = "separate"

[[verifier.collect]]
command = "{handoff_mount.copy_command(FINAL_MODEL)}"
timeout_sec = 600.0
user = "root"

[environment]
workdir = "/app"
""")
    (task / "instruction.md").write_text("Write the model.\n")
    (task / "environment" / "Dockerfile").write_text(f"FROM {DEPS_IMAGE}\nWORKDIR /app\n")
    (task / "environment" / "docker-compose.yaml").write_text(handoff_mount.COMPOSE)
    for path, text in ((task / "solution" / "solve.sh", SOLVE), (task / "tests" / "test.sh", TEST)):
        path.write_text(text)
        path.chmod(0o755)
    return task


@pytest.fixture(scope="module")
def base_image(engine: None) -> None:
    """The container test's base image (built early in the session, conftest.py; up to date in seconds after)."""
    subprocess.run([str(BASE_IMAGE), "--from-venv", sys.prefix], check=True, capture_output=True)


def run_trial(task: Path, jobs: Path, auto_mounting: bool) -> tuple[Path, dict]:
    from harbor.job import Job
    from harbor.models.job.config import JobConfig
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig

    config = JobConfig(
        job_name="mounted",
        jobs_dir=jobs,
        n_attempts=1,
        n_concurrent_trials=1,
        quiet=True,
        agents=[AgentConfig(name="oracle")],
        tasks=[TaskConfig(path=task)],
        environment=EnvironmentConfig(type="podman", kwargs={"auto_mounting": auto_mounting}),
    )

    async def run() -> None:
        job = await Job.create(config)
        await job.run()

    asyncio.run(run())
    [result] = (jobs / "mounted").glob("*/result.json")
    return result.parent, json.loads(result.read_text())


def test_the_model_reaches_the_verifier_through_the_mount_and_no_artifact_carries_it(base_image, tmp_path):
    trial_dir, result = run_trial(write_task(tmp_path), tmp_path / "jobs", auto_mounting=True)
    assert result["exception_info"] is None, result["exception_info"]
    assert result["verifier_result"]["rewards"]["reward"] == 1  # every sum checked, read from the mount
    copy = trial_dir / "agent" / handoff_mount.SUBMISSION_NAME / "final_model"
    assert "SHA256SUMS" in {p.name for p in copy.iterdir()}  # the one copy, on the host
    assert not (trial_dir / "artifacts" / "app").exists()  # never collected, staged or uploaded by Harbor


def test_without_harbors_log_mounts_the_environment_says_what_to_pass(base_image, tmp_path):
    _, result = run_trial(write_task(tmp_path), tmp_path / "jobs", auto_mounting=False)
    assert result["verifier_result"] is None
    assert "--ek auto_mounting=true" in result["exception_info"]["exception_message"]
