"""A campaign on this machine: submitted, a trial's processes SIGKILLed mid-agent and retried, every trial once in
the store after gathering (twice), a cancelled trial never rerun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campaign_helpers import (
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

pytestmark = pytest.mark.heavy(120)


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


def test_a_campaign_whose_driver_died_resumes_from_its_directory(tmp_path: Path) -> None:
    import re

    file = write_campaign(tmp_path, "resume", [NAPPING], seeds=2, concurrency=2, stagger=1)
    done = campaign_cli("submit", str(file), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    directory = Path(done.stdout.strip().splitlines()[-1])
    driver = int(re.search(r"local driver started \(pid (\d+)\)", done.stderr).group(1))  # type: ignore[union-attr]
    trial = json.loads((directory / "campaign.json").read_text())["trials"][0]["id"]
    wait_for(lambda: running_attempt_pid(directory, trial), "the agent to nap")
    kill_all(descendants(driver))  # the login node rebooted: the driver and every trial it ran are gone
    again = campaign_cli("submit", str(file), cwd=tmp_path)  # the same file again: the same campaign, resumed
    assert again.returncode == 0, again.stderr
    assert Path(again.stdout.strip().splitlines()[-1]) == directory
    assert campaign_cli("wait", str(directory), "--quiet", cwd=tmp_path).returncode == 0
    view = status(directory, tmp_path)
    assert view["counts"]["done"] == 2
    assert "lost" in [a["status"] for a in {t["id"]: t for t in view["trials"]}[trial]["attempts"]]
    changed = file.read_text().replace("seeds = 2", "seeds = 3")
    file.write_text(changed)
    other = campaign_cli("submit", str(file), cwd=tmp_path)
    assert other.returncode == 2 and "already exists" in other.stderr and "with another plan" in other.stderr
