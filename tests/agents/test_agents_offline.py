"""Harbor's terminus-2 offline (it calls the model from the host, through LiteLLM) on the tiny frogs task in the local
environment, driven by the scripted fake API's Chat Completions; the trial must end verified with its trajectory
stored. (The four agent CLIs' trials, Codex's included, run in one job: test_agent_trials.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.agents.fake_api.script import FakeApiScript, Step
from ptbench.agents.fake_api.server import FakeApi
from ptbench.run.agents import AgentSettings

from .trials import run_agent

pytestmark = pytest.mark.heavy(80)

BOARDS, K, HELDOUT_SEED = 4, 2, 4321
SCRIPT = FakeApiScript(steps=[
    Step(run="timer > /app/timer.txt"),
    # Terminus reads the screen again after `seconds` whether the command ended or not: under a load of 10 the
    # copy took longer than 1 s and the trial ended before the model was saved
    Step(run="ptbench models tiny --out /app/final_model", seconds=30),
    Step(say="Submitted the base model as /app/final_model."),
])


@pytest.fixture(scope="module")
def task(tmp_path_factory, tiny_dir) -> Path:
    """frogs-single-tiny with few held-out boards, exported."""
    from ptbench.demo.config import DemoConfig
    from ptbench.run.export import export_task

    spec = DemoConfig(heldout_boards=BOARDS, samples_per_board=K).spec().model_copy(update={"network": "none"})
    return export_task(spec, tmp_path_factory.mktemp("tasks"), heldout_seed=HELDOUT_SEED)


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


def test_terminus_trial_ends_verified(terminus, task):
    assert terminus.trial.status == "ok", (terminus.trial.status, terminus.trial.exception_type,
                                           terminus.trial.verifier_reason)
    assert terminus.trial.score is not None and terminus.trial.scored == "submission", terminus.trial.verifier_reason
    assert instruction_sent(terminus.requests, task)
    assert terminus.trial.trajectory_path is not None


def test_the_verifier_checks_the_real_workspace_and_trajectory_and_flags_no_honest_agent(terminus):
    """The separate verifier gets the workspace and the agent's logs (trajectory.json included) as artifacts; a
    trajectory quoting the instruction's rules (/tests, /logs/verifier) is no forbidden read."""
    trial = terminus
    details = json.loads((trial.trial_dir / "verifier" / "details.json").read_text())
    status = {check["name"]: check for check in details["integrity"]}
    reads = status["forbidden-reads"]
    assert reads["status"] == "passed", reads["reason"]
    assert reads["evidence"]["numbers"]["files"] >= 2 and reads["evidence"]["numbers"]["instruction_echoes"] >= 1
    assert status["tampering-protected-files"]["status"] == "passed"
    assert (trial.trial_dir / "artifacts" / "agent-logs" / "trajectory.json").is_file()
