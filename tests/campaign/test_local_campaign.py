"""A campaign on this machine: submitted, a trial's processes SIGKILLed mid-agent and retried, every trial once in
the store after gathering (twice), a cancelled trial never rerun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import (
    HELLO,
    NAPPING,
    campaign_cli,
    descendants,
    kill_all,
    running_attempt_pid,
    status,
    store_trials,
    submit,
    wait_for,
    write_campaign,
)

pytestmark = pytest.mark.heavy(60)


def test_a_local_campaign_survives_a_killed_trial_and_lands_once_in_the_store(tmp_path: Path) -> None:
    file = write_campaign(tmp_path, "loc", [NAPPING, HELLO], seeds=2, concurrency=2, stagger=1)
    directory = submit(file, tmp_path)
    assert directory == tmp_path / ".ptbench" / "campaigns" / "loc"
    record = json.loads((directory / "campaign.json").read_text())
    victim = record["trials"][0]["id"]
    pid = wait_for(lambda: running_attempt_pid(directory, victim), "trial 0's agent to nap")
    kill_all(descendants(pid))  # the run-trial process and everything below it, as an OOM killer would
    done = campaign_cli("wait", str(directory), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    view = status(directory, tmp_path)
    assert view["counts"]["done"] == 4 and view["counts"]["failed"] == 0
    by_id = {t["id"]: t for t in view["trials"]}
    assert [a["status"] for a in by_id[victim]["attempts"]] == ["lost", "ok"]
    assert all(t["score"] == 1.0 for t in view["trials"])
    store = tmp_path / "store.sqlite"
    for _ in range(2):
        gathered = campaign_cli("gather", str(directory), "--store", str(store), cwd=tmp_path)
        assert gathered.returncode == 0, gathered.stderr
    trials = store_trials(store)
    assert len(trials) == 4 and len({name for name, _, _ in trials}) == 4
    assert {status for _, status, _ in trials} == {"ok"}
    table = campaign_cli("status", str(directory), cwd=tmp_path)
    assert "lost" in table.stdout and "4 done" in table.stdout.splitlines()[-1]


def test_cancel_stops_a_trial_for_good(tmp_path: Path) -> None:
    file = write_campaign(tmp_path, "can", [NAPPING], seeds=1, stagger=1)
    directory = submit(file, tmp_path)
    trial = json.loads((directory / "campaign.json").read_text())["trials"][0]["id"]
    wait_for(lambda: running_attempt_pid(directory, trial), "the agent to nap")
    cancelled = campaign_cli("cancel", str(directory), "--trial", trial, cwd=tmp_path)
    assert cancelled.returncode == 0, cancelled.stderr
    done = campaign_cli("wait", str(directory), "--quiet", cwd=tmp_path)
    assert done.returncode == 1  # a trial failed for good
    (view,) = status(directory, tmp_path)["trials"]
    assert view["state"] == "failed" and view["status"] == "cancelled" and not view["will_retry"]
    assert len(view["attempts"]) == 1
    store = tmp_path / "s.sqlite"
    assert campaign_cli("gather", str(directory), "--store", str(store), cwd=tmp_path).returncode == 0
    assert store_trials(store) == []
