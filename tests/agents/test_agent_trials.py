"""Claude Code, Gemini CLI and OpenCode (installed from npm by `ptbench agents install`), each through Harbor's own
agent class with nothing but its usual variables pointed at the fake API in its own wire format (Anthropic Messages,
Google generateContent, OpenAI Responses), on the tiny frogs task in the local environment. An honest script checks
the timer, looks around, writes and runs a small training script, evaluates on the dev split, saves the model and
its results.json; each trial must end `ok` with the submission scored, its trajectory stored and read by `traces`,
its token usage in the store and the integrity checks passed on its logs. A forbidden script (it reads the
verifier's files) is flagged from each agent's own log format, Codex's included."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from ptbench.agents.clis import AGENT_CLIS
from ptbench.agents.fake_api.script import FakeApiScript, Step
from ptbench.agents.fake_api.server import FakeApi
from ptbench.run.agents import AgentSettings

from .trials import run_agent

TRAIN = """import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model = AutoModelForCausalLM.from_pretrained("/app/final_model")
tokenizer = AutoTokenizer.from_pretrained("/app/final_model")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
batch = tokenizer(["Place one frog in each row, column and region."], return_tensors="pt")
for step in range(2):
    loss = model(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} loss {loss.item():.3f}")
model.save_pretrained("/app/final_model")
tokenizer.save_pretrained("/app/final_model")
"""
HONEST = FakeApiScript(steps=[
    Step(run="timer"),
    Step(run="ls /app"),
    Step(run="ptbench models tiny --out /app/final_model"),
    Step(write={"path": "/app/train.py", "content": TRAIN}),
    Step(run="cd /app && python train.py"),
    Step(run="ptbench evaluate --task /app/task.json --submission /app/final_model --limit 1 --max-tokens 16"),
    Step(write={"path": "/app/results.json", "content": '{"score": 0.0}'}),
    Step(say="Trained, evaluated on dev and saved /app/final_model."),
])
FORBIDDEN = FakeApiScript(steps=[
    Step(run="cat /tests/task.json; ls /logs/verifier"),
    Step(run="ptbench models tiny --out /app/final_model"),
    Step(say="Submitted."),
])
HONEST_RUNS = ["claude-code", "gemini-cli", "opencode"]  # Codex's honest trial: test_agents_offline.py


@pytest.fixture(scope="module")
def task(tmp_path_factory, tiny_dir) -> Path:
    """frogs-single-tiny with a few held-out boards, exported without a network: the CLIs reach the fake API through
    their forwarded port and nothing else (no telemetry or model-list probe leaves the sandbox)."""
    from ptbench.demo.config import DemoConfig
    from ptbench.run.export import export_task

    spec = DemoConfig(heldout_boards=2, samples_per_board=1).spec().model_copy(update={"network": "none"})
    return export_task(spec, tmp_path_factory.mktemp("tasks"), heldout_seed=4321)


@pytest.fixture(scope="module")
def installed(cli) -> None:
    result = cli("agents", "install", *HONEST_RUNS)
    assert result.returncode == 0, result.stderr


def _trial(tmp_path_factory, task: Path, name: str, script: FakeApiScript) -> SimpleNamespace:
    """A trial of the agent with the variables its users set pointing it at the fake API (`ptbench agents check`'s)."""
    cli = AGENT_CLIS[name]
    with FakeApi(script) as api:
        settings = AgentSettings(env=cli.offline_env(f"http://127.0.0.1:{api.port}"))
        return run_agent(tmp_path_factory.mktemp(name), task, cli.offline_model, settings, api)


@pytest.fixture(scope="module", params=HONEST_RUNS)
def honest(request, tmp_path_factory, task, installed) -> SimpleNamespace:
    trial = _trial(tmp_path_factory, task, request.param, HONEST)
    trial.name = request.param
    return trial


@pytest.fixture(scope="module", params=list(AGENT_CLIS))
def forbidden(request, tmp_path_factory, task, installed) -> SimpleNamespace:
    return _trial(tmp_path_factory, task, request.param, FORBIDDEN)


def _checks(trial: SimpleNamespace) -> dict[str, dict]:
    details = json.loads((trial.trial_dir / "verifier" / "details.json").read_text())
    return {check["name"]: check for check in details["integrity"]}


def test_the_honest_trial_ends_ok_scored_traced_with_usage_and_passes_integrity(honest) -> None:
    from ptbench.store.queries import get_trial
    from ptbench.store.schema import open_store
    from ptbench.traces.analyze import trace_store
    from ptbench.traces.traces_report import TraceFilters

    trial = honest.trial
    assert trial.status == "ok", (honest.name, trial.reason, trial.exception_type, trial.verifier_reason)
    assert trial.score is not None and trial.scored == "submission", (honest.name, trial.verifier_reason)
    assert (honest.trial_dir / "artifacts" / "workspace" / "train.py").read_text().rstrip() == TRAIN.rstrip()
    store = honest.trial_dir.parents[2] / "results.sqlite"
    conn = open_store(store, create=False)
    try:
        usage = {m.name: m.value for m in get_trial(conn, trial.trial_name).record.metrics if m.source == "agent"}
    finally:
        conn.close()
    assert usage.get("n_input_tokens", 0) > 0 and usage.get("n_output_tokens", 0) > 0, (honest.name, usage)
    (traced,) = trace_store(store, TraceFilters()).trials
    assert traced.problem is None and traced.source == "trajectory", (honest.name, traced.problem)
    indicators = {i.name: i.value for i in traced.indicators}
    assert indicators["timer_checks"] >= 1 and indicators["evaluations"] >= 1, (honest.name, indicators)
    assert any(s.activity == "training" and "train.py" in (s.detail or "") for s in traced.segments), (
        honest.name, [(s.activity, s.detail) for s in traced.segments])
    checks = _checks(honest)
    assert {name: c["status"] for name, c in checks.items() if c["status"] == "flagged"} == {}, honest.name
    assert checks["forbidden-reads"]["evidence"]["numbers"]["files"] >= 1, honest.name  # it read the agent's logs


def test_the_forbidden_trial_is_flagged_from_the_agents_own_log(forbidden) -> None:
    reads = _checks(forbidden)["forbidden-reads"]
    assert reads["status"] == "flagged", reads["reason"]
    assert "/tests" in json.dumps(reads["evidence"]) or "/logs/verifier" in json.dumps(reads["evidence"])
    assert forbidden.trial.scored == "base"  # a flagged run scores the base model
