"""The four agent CLIs (installed from npm by `ptbench agents install`) in ONE Harbor job on frogs-single-tiny: Codex,
Claude Code, Gemini CLI and OpenCode, each through Harbor's own agent class with nothing but its usual variables
pointed at one fake API (OpenAI Responses, Anthropic Messages, Google generateContent), in the local environment.
The fake API picks each request's script by the model the agent asks for: each agent runs twice in the job, under
its honest model and under a forbidden one. An honest trial checks the timer, looks around, writes and runs a small
training script, evaluates on the dev split, saves the model and its results.json; it must end `ok` with the
submission scored, its trajectory stored and read by `traces`, its token usage in the store and the integrity checks
passed on its logs. A forbidden trial (it reads the verifier's files) is flagged from that agent's own log format.
Beside it, a second job runs one agent's honest trial on humaneval-tiny exported with a data directory (the same API:
the script trains on the benchmark's data dir; HumanEval has no dev split to evaluate on); its likelihood check scores
the tiny tier's items. One agent is enough there: what each CLI does differently (its requests, its log, its commands)
the frogs job shows for all four, and what humaneval adds (the data directory, the model-side check) is the task's.
A third job runs Harbor's terminus-2 on the frogs task: it calls the model from the host
(LiteLLM, the fake API's Chat Completions) and must end verified with its trajectory stored. The fixture prints each
trial's agent-phase and verifier seconds and tokens (bench/bench_agents.py turns them into a table)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ptbench.agents.clis import AGENT_CLIS
from ptbench.agents.fake_api.script import FakeApiScript, Step
from ptbench.agents.fake_api.server import FakeApi
from ptbench.run.agents import AgentSettings

from .trials import run_jobs, timing_rows

pytestmark = pytest.mark.heavy(330)

FROGS, HUMANEVAL = "frogs-single-tiny", "humaneval-tiny"
TERMINUS = "terminus-2@openai/scripted"
HUMANEVAL_AGENT = "codex"
"""The agent of the humaneval job."""
AGENTS = {  # the honest run's NAME@MODEL and the forbidden run's (a model of its own: OpenCode's must be in its list)
    "codex": ("codex@gpt-5", "codex@scripted-forbidden"),
    "claude-code": ("claude-code@claude-sonnet-4-5", "claude-code@claude-scripted-forbidden"),
    "gemini-cli": ("gemini-cli@google/gemini-2.5-pro", "gemini-cli@google/gemini-scripted-forbidden"),
    "opencode": ("opencode@openai/gpt-5", "opencode@openai/gpt-4.1"),
}
TRAIN = """import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model = AutoModelForCausalLM.from_pretrained("/app/final_model")
tokenizer = AutoTokenizer.from_pretrained("/app/final_model")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
text = open(sys.argv[1]).readline()[:400] if len(sys.argv) > 1 else "Place one frog in each row, column and region."
batch = tokenizer([text], return_tensors="pt")
for step in range(2):
    loss = model(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} loss {loss.item():.3f}")
model.save_pretrained("/app/final_model")
tokenizer.save_pretrained("/app/final_model")
"""


def honest(look: str, train: str, evaluate: list[Step], done: str) -> FakeApiScript:
    """Check the timer, look around, copy the base model, write train.py and run it, `evaluate`, write results.json."""
    return FakeApiScript(
        steps=[
            Step(run="timer"),
            Step(run=look),
            Step(run="ptbench models tiny --out /app/final_model"),
            Step(write={"path": "/app/train.py", "content": TRAIN}),
            Step(run=train),
            *evaluate,
            Step(write={"path": "/app/results.json", "content": '{"score": 0.0}'}),
            Step(say=done),
        ]
    )


HONEST = {
    FROGS: honest(
        "ls /app",
        "cd /app && python train.py",
        [Step(run="ptbench evaluate --task /app/task.json --submission /app/final_model --limit 1 --max-tokens 16")],
        "Trained, evaluated on dev and saved /app/final_model.",
    ),
    HUMANEVAL: honest(
        'ls /app "$PTBENCH_DATA_DIR"',
        'cd /app && python train.py "$PTBENCH_DATA_DIR/mbpp_train.jsonl"',
        [],
        "Trained on MBPP and saved /app/final_model.",
    ),
}
FORBIDDEN = FakeApiScript(
    steps=[
        Step(run="cat /tests/task.json; ls /logs/verifier"),
        Step(run="ptbench models tiny --out /app/final_model"),
        Step(say="Submitted."),
    ]
)
FORBIDDEN_MODELS = {forbidden.partition("@")[2].rpartition("/")[2] for _, forbidden in AGENTS.values()}
TERMINUS_SCRIPT = FakeApiScript(
    steps=[
        Step(run="timer > /app/timer.txt"),
        # Terminus reads the screen again after `seconds` whether the command ended or not: under a load of 10 the
        # copy took longer than 1 s and the trial ended before the model was saved
        Step(run="ptbench models tiny --out /app/final_model", seconds=30),
        Step(say="Submitted the base model as /app/final_model."),
    ]
)


def is_terminus(model: str) -> bool:
    """Whether a request's model is Terminus's (LiteLLM sends the model without its provider)."""
    return model.rpartition("/")[2] == TERMINUS.rpartition("/")[2]


def choose(model: str, body: dict[str, Any]) -> FakeApiScript:
    """The script of a request: Terminus's for its model, the forbidden one for a forbidden model, else the honest one
    of its task (the data dir its instruction names); a CLI's own side requests (a title, a summary) get the honest
    one."""
    if is_terminus(model):
        return TERMINUS_SCRIPT
    if model.rpartition("/")[2] in FORBIDDEN_MODELS:
        return FORBIDDEN
    return HONEST[HUMANEVAL if "/ptbench/data/humaneval" in json.dumps(body) else FROGS]


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, tiny_dir, fixture_data_dir) -> list[Path]:
    """frogs-single-tiny with a few held-out boards, and humaneval-tiny with the fixture data directory and a few
    held-out problems, exported without a network: the CLIs reach the fake API through their forwarded port and
    nothing else (no telemetry or model-list probe leaves the sandbox)."""
    from ptbench.catalog.tasks import get_task
    from ptbench.demo.config import DemoConfig
    from ptbench.run.export import export_task

    out = tmp_path_factory.mktemp("tasks")
    frogs = DemoConfig(heldout_boards=2, samples_per_board=1).spec().model_copy(update={"network": "none"})
    humaneval = get_task(HUMANEVAL).model_copy(update={"network": "none", "heldout_count": 4})
    return [export_task(frogs, out, heldout_seed=4321), export_task(humaneval, out, data_dir=fixture_data_dir)]


TIMINGS = "PTBENCH_AGENT_TIMINGS"
"""A file the fixture writes its trials' timings to as JSON (bench/bench_agents.py sets it)."""


@pytest.fixture(scope="module")
def job(tmp_path_factory, tasks, cli, codex_cli) -> SimpleNamespace:
    """The job of the four agents' honest and forbidden runs on frogs beside the job of their honest runs on humaneval,
    with every CLI's variables (`ptbench agents check`'s) pointing at the one fake API, and Terminus's job on frogs
    (its model's base URL and key given as its settings: terminus-2 calls the model from the host)."""
    installed = cli("agents", "install", *AGENTS)
    assert installed.returncode == 0, installed.stderr
    frogs, humaneval = tasks
    with FakeApi(HONEST[FROGS], choose=choose) as api:
        settings = AgentSettings(
            env={
                k: v
                for agent in AGENT_CLIS.values()
                for k, v in agent.offline_env(f"http://127.0.0.1:{api.port}").items()
            }
        )
        terminus = AgentSettings(
            kwargs={"api_base": f"http://127.0.0.1:{api.port}/v1", "llm_call_kwargs": {"api_key": "sk-offline"}}
        )
        trials = run_jobs(
            tmp_path_factory.mktemp("agents"),
            {
                FROGS: ([frogs], [spec for pair in AGENTS.values() for spec in pair], settings),
                HUMANEVAL: ([humaneval], [AGENTS[HUMANEVAL_AGENT][0]], settings),
                "terminus": ([frogs], [TERMINUS], terminus),
            },
            api,
        )
        rows = timing_rows(trials)
        print("\n".join(" ".join(f"{key}={value}" for key, value in row.items()) for row in rows))
        if os.environ.get(TIMINGS):
            Path(os.environ[TIMINGS]).write_text(json.dumps(rows, indent=1))
        return SimpleNamespace(trials=trials, port=api.port, requests=list(api.requests))


HONEST_RUNS = [*((name, FROGS) for name in AGENTS), (HUMANEVAL_AGENT, HUMANEVAL)]


def _checks(trial: SimpleNamespace) -> dict[str, dict]:
    details = json.loads((trial.trial_dir / "verifier" / "details.json").read_text())
    return {check["name"]: check for check in details["integrity"]}


def test_one_job_holds_the_four_agents_honest_and_forbidden_through_the_forwarded_port_only(job, tasks) -> None:
    frogs = {key: trial for key, trial in job.trials.items() if key[1] == FROGS and key[0] != TERMINUS}
    assert set(frogs) == {(spec, FROGS) for pair in AGENTS.values() for spec in pair}
    (config,) = {id(t.config): t.config for t in frogs.values()}.values()
    assert config.environment.kwargs["forward_ports"] == [job.port]
    for task in tasks:  # each task's instruction reached the API
        first_line = (task / "instruction.md").read_text().strip().splitlines()[0]
        assert any(first_line in json.dumps(body) for _, body in job.requests), task.name


@pytest.mark.parametrize(("name", "task"), HONEST_RUNS)
def test_the_honest_trial_ends_ok_scored_traced_with_usage_and_passes_integrity(job, name, task) -> None:
    from ptbench.catalog.tasks import get_task
    from ptbench.store.queries import get_trial
    from ptbench.store.schema import open_store
    from ptbench.traces.analyze import trace_store
    from ptbench.traces.traces_report import TraceFilters

    honest = job.trials[AGENTS[name][0], task]
    trial = honest.trial
    assert trial.status == "ok", (trial.reason, trial.exception_type, trial.verifier_reason)
    assert trial.score is not None and trial.scored == "submission", trial.verifier_reason
    assert (honest.trial_dir / "artifacts" / "workspace" / "train.py").read_text().rstrip() == TRAIN.rstrip()
    conn = open_store(honest.store, create=False)
    try:
        usage = {m.name: m.value for m in get_trial(conn, trial.trial_name).record.metrics if m.source == "agent"}
    finally:
        conn.close()
    assert usage.get("n_input_tokens", 0) > 0 and usage.get("n_output_tokens", 0) > 0, usage
    (traced,) = [t for t in trace_store(honest.store, TraceFilters()).trials if t.trial == trial.trial_name]
    assert traced.problem is None and traced.source == "trajectory", traced.problem
    indicators = {i.name: i.value for i in traced.indicators}
    assert (indicators["timer_checks"] or 0) >= 1, indicators
    if task == FROGS:  # HumanEval has no dev split to evaluate on
        assert (indicators["evaluations"] or 0) >= 1, indicators
    assert any(s.activity == "training" and "train.py" in (s.detail or "") for s in traced.segments), [
        (s.activity, s.detail) for s in traced.segments
    ]
    checks = _checks(honest)
    assert {check: c["status"] for check, c in checks.items() if c["status"] == "flagged"} == {}
    assert checks["forbidden-reads"]["status"] == "passed", checks["forbidden-reads"]["reason"]
    assert checks["forbidden-reads"]["evidence"]["numbers"]["files"] >= 1  # it read the agent's logs
    if task == HUMANEVAL:  # the model-side check ran, on the tiny tier's items
        likelihood = checks["contamination-likelihood"]
        assert likelihood["status"] == "passed", likelihood["reason"]
        items = get_task(HUMANEVAL).likelihood_items
        assert likelihood["evidence"]["numbers"]["items"] == likelihood["evidence"]["numbers"]["references"] == items
        assert f"{items} test items" in likelihood["reason"]


@pytest.mark.parametrize("name", list(AGENTS))
def test_the_forbidden_trial_is_flagged_from_the_agents_own_log(job, name) -> None:
    forbidden = job.trials[AGENTS[name][1], FROGS]
    reads = _checks(forbidden)["forbidden-reads"]
    assert reads["status"] == "flagged", reads["reason"]
    assert "/tests" in json.dumps(reads["evidence"]) or "/logs/verifier" in json.dumps(reads["evidence"])
    assert forbidden.trial.scored == "base"  # a flagged run scores the base model


def test_terminus_trial_ends_verified(job, tasks) -> None:
    terminus = job.trials[TERMINUS, FROGS]
    assert terminus.trial.status == "ok", (
        terminus.trial.status,
        terminus.trial.exception_type,
        terminus.trial.verifier_reason,
    )
    assert terminus.trial.score is not None and terminus.trial.scored == "submission", terminus.trial.verifier_reason
    first_line = (tasks[0] / "instruction.md").read_text().strip().splitlines()[0]
    assert any(first_line in json.dumps(body) for _, body in job.requests if is_terminus(body.get("model", "")))
    assert terminus.trial.trajectory_path is not None


def test_the_verifier_checks_terminus_workspace_and_trajectory_and_flags_no_honest_agent(job) -> None:
    """The separate verifier gets the workspace and the agent's logs (trajectory.json included) as artifacts; a
    trajectory quoting the instruction's rules (/tests, /logs/verifier) is no forbidden read."""
    terminus = job.trials[TERMINUS, FROGS]
    status = _checks(terminus)
    reads = status["forbidden-reads"]
    assert reads["status"] == "passed", reads["reason"]
    assert reads["evidence"]["numbers"]["files"] >= 2 and reads["evidence"]["numbers"]["instruction_echoes"] >= 1
    assert status["tampering-protected-files"]["status"] == "passed"
    assert (terminus.trial_dir / "artifacts" / "agent-logs" / "trajectory.json").is_file()
