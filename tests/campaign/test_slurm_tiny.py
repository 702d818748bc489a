"""The shipped tiny campaign (examples/campaigns/tiny-slurm.toml: frogs-single-tiny and gsm8k-tiny, the reference
agent, gsm8k's data built from the fixtures) on a real single-node Slurm, from `ptbench campaign submit` to
`ptbench report`; cut to a smoke run by the campaign's own budget override, and to one seed of its two: a second
seed runs the same path twice more, at twice the CPU (the plan's seeds x tasks matrix is test_campaign_plan's)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from campaign_helpers import campaign_cli, status, store_trials, submit
from slurm_cluster import SlurmCluster
from tests.conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.heavy(150)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "campaigns"


def test_the_tiny_campaign_runs_on_slurm_from_submit_to_report(
    slurm: SlurmCluster, tmp_path: Path, tiny_dir: Path
) -> None:
    folder = tmp_path / "examples" / "campaigns"
    folder.mkdir(parents=True)
    shutil.copytree(
        EXAMPLES.parents[1] / "tests" / "fixtures" / "benchmarks", tmp_path / "tests" / "fixtures" / "benchmarks"
    )
    text = (EXAMPLES / "tiny-slurm.toml").read_text()
    assert re.search(r"^\[budget\]", text, re.M) is None
    text, seeds = re.subn(r"^seeds = 2$", "seeds = 1", text, flags=re.M)
    assert seeds == 1, "the shipped campaign's seeds line changed"
    # a smoke run of the real matrix: the reference recipe cut to two steps a stage (it would train until its
    # deadline), the agent's hours cut to a bound it stays far inside, and the verifier's answers capped (the tiny
    # model never stops on its own; it scores 0 either way)
    text += (
        "\n[budget]\nagent_hours = 0.04\nverifier_hours = 0.25\n\n[environment]\n"
        'env = { PTBENCH_VERIFY_MAX_TOKENS = "16", PTBENCH_REFERENCE_MAX_STEPS = "2" }\n'
    )
    (folder / "tiny-slurm.toml").write_text(text)
    env = {**slurm.env, "PTBENCH_SLURM_PARTITION": "debug"}
    directory = submit(folder / "tiny-slurm.toml", tmp_path, env)
    assert (directory / "data" / "manifest.json").is_file()  # built from the fixtures when missing
    done = campaign_cli("wait", str(directory), "--poll", "2", cwd=tmp_path, env=env, timeout=1500)
    view = status(directory, tmp_path, env)
    assert done.returncode == 0, json.dumps(view, indent=1)[-4000:]
    assert view["counts"]["done"] == 2
    gathered = campaign_cli("gather", str(directory), cwd=tmp_path, env=env)
    assert gathered.returncode == 0, gathered.stderr
    trials = store_trials(tmp_path / ".ptbench" / "results.sqlite")
    assert len(trials) == 2 and len({name for name, _, _ in trials}) == 2
    assert all(score is not None for _, _, score in trials), trials
    report = run_cli("report", "--out", str(tmp_path / "report"), cwd=tmp_path, timeout=600)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "index.html").is_file()
