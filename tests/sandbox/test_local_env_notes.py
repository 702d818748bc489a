"""The local environment says which install steps of a task's Dockerfile it ignored: in the trial dir (shown by
`ptbench runs show`), and once on the console however many trials use that Dockerfile."""

from __future__ import annotations

from ptbench.sandbox.notes import ignored_installs, read_notes


def test_ignored_install_steps_are_in_each_trial_and_said_once(tmp_path, harbor_job, harbor_tasks, capfd):
    results = harbor_job(tmp_path / "jobs", ["installs"], sandbox_dir=tmp_path / "sandboxes", n_attempts=2)
    trials = results["installs"]
    assert len(trials) == 2
    for result in trials:
        assert result.verifier_result is not None and result.verifier_result.rewards["reward"] == 1
        notes = read_notes(tmp_path / "jobs" / "job" / result.trial_name)
        assert notes is not None
        assert notes.ignored_installs == ["RUN apt-get update && apt-get install -y ripgrep",
                                          "RUN pip install requests==2.32.3"]
    warnings = [line for line in capfd.readouterr().err.splitlines() if "ignores 2 install step(s)" in line]
    assert len(warnings) == 1 and "installs's environment/Dockerfile" in warnings[0]


def test_a_dockerfile_without_installs_has_no_notes(harbor_tasks):
    assert ignored_installs(harbor_tasks / "hello" / "environment" / "Dockerfile") == []
