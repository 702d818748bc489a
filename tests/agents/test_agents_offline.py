"""Real agents offline: the Codex CLI (installed from npm by `ptbench agents install`) through Harbor's own agent class,
and Harbor's terminus-2, each on the tiny frogs task in the local environment, driven by the scripted fake API. The
sandbox reaches the API through its forwarded port; each trial must end verified with its trajectory stored."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from harbor.models.trajectories import Trajectory
from harbor.models.trial.config import TaskConfig

from ptbench.agents.fake_api.script import FakeApiScript, Step
from ptbench.agents.fake_api.server import FakeApi
from ptbench.run.agents import AgentSettings
from ptbench.run.jobs import build_job_config, create_job, resolve_environment
from ptbench.run.preflight import preflight
from ptbench.store.ingest import ingest

SCRIPT = FakeApiScript(steps=[
    Step(run="timer > /app/timer.txt"),
    Step(run="ptbench models tiny --out /app/final_model"),
    Step(say="Submitted the base model as /app/final_model."),
])


@pytest.fixture(scope="module")
def task(small_frogs_task: Path) -> Path:
    """frogs-single-tiny with few held-out boards, exported (shared with the session)."""
    return small_frogs_task


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


@pytest.fixture(scope="module")
def codex(tmp_path_factory, task, codex_cli):
    base = tmp_path_factory.mktemp("codex")
    with FakeApi(SCRIPT) as api:
        settings = AgentSettings(env={"OPENAI_API_KEY": "sk-offline",
                                      "OPENAI_BASE_URL": f"http://127.0.0.1:{api.port}/v1"})
        return run_agent(base, task, "codex@gpt-5", settings, api)


@pytest.fixture(scope="module")
def terminus(tmp_path_factory, task):
    base = tmp_path_factory.mktemp("terminus")
    with FakeApi(SCRIPT) as api:
        # terminus-2 calls the model from the host (LiteLLM), with the key given per call
        settings = AgentSettings(kwargs={"api_base": f"http://127.0.0.1:{api.port}/v1",
                                         "llm_call_kwargs": {"api_key": "sk-offline"}})
        return run_agent(base, task, "terminus-2@openai/scripted", settings, api)


def instruction_sent(requests: list[tuple[str, dict]], task: Path) -> bool:
    first_line = (task / "instruction.md").read_text().strip().splitlines()[0]
    return any(first_line in json.dumps(body) for _, body in requests)


def test_codex_trial_ends_verified(codex):
    assert codex.trial.status == "ok", (codex.trial.status, codex.trial.exception_type, codex.trial.verifier_reason)
    assert codex.trial.score is not None
    # the submission was scored: Codex's `bash -lc` found `ptbench` (it once did not: the verifier scored the base)
    assert codex.trial.scored == "submission", codex.trial.verifier_reason


def test_codex_got_the_instruction_and_ran_the_scripted_commands(codex, task):
    assert instruction_sent(codex.requests, task)
    outputs = [item for _, body in codex.requests for item in body.get("input", [])
               if isinstance(item, dict) and item.get("type") == "function_call_output"]
    assert len(outputs) >= 2  # timer, then the copy of the base model


def test_codex_reached_the_api_through_its_forwarded_port_only(codex):
    forwarded = codex.config.environment.kwargs["forward_ports"]
    assert forwarded == [int(codex.config.agents[0].env["OPENAI_BASE_URL"].split(":")[2].split("/")[0])]


def test_codex_trajectory_is_stored_and_readable(codex):
    assert codex.trial.trajectory_path is not None
    trajectory = Trajectory.model_validate_json((codex.trial_dir / codex.trial.trajectory_path).read_text())
    commands = json.dumps(trajectory.model_dump(mode="json"))
    assert "ptbench models tiny --out /app/final_model" in commands


def test_terminus_trial_ends_verified(terminus, task):
    assert terminus.trial.status == "ok", (terminus.trial.status, terminus.trial.exception_type,
                                           terminus.trial.verifier_reason)
    assert terminus.trial.score is not None and terminus.trial.scored == "submission", terminus.trial.verifier_reason
    assert instruction_sent(terminus.requests, task)
    assert terminus.trial.trajectory_path is not None


@pytest.mark.parametrize("run", ["codex", "terminus"])
def test_the_verifier_checks_the_real_workspace_and_trajectory_and_flags_no_honest_agent(run, request):
    """The separate verifier gets the workspace and the agent's logs (trajectory.json included) as artifacts; a
    trajectory quoting the instruction's rules (/tests, /logs/verifier) is no forbidden read."""
    trial = request.getfixturevalue(run)
    details = json.loads((trial.trial_dir / "verifier" / "details.json").read_text())
    status = {check["name"]: check for check in details["integrity"]}
    reads = status["forbidden-reads"]
    assert reads["status"] == "passed", reads["reason"]
    assert reads["evidence"]["numbers"]["files"] >= 2 and reads["evidence"]["numbers"]["instruction_echoes"] >= 1
    assert status["tampering-protected-files"]["status"] == "passed"
    assert (trial.trial_dir / "artifacts" / "agent-logs" / "trajectory.json").is_file()
