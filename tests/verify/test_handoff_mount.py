"""The submission through a host directory for compose environments (`ptbench tasks export --handoff-mount`): the
collect hook copies it into the trial's agent/ dir (Harbor's /logs/agent bind mount), the task's compose file binds
that dir read-only into the separate verifier, and no artifact carries it (Harbor's podman upload holds an artifact
in memory, twice). Where the mount is not there, or the copy is not whole, the hand-off check names what is missing:
a verifier error, never a score of the base."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path, PurePosixPath

import pytest
import yaml
from harbor.models.task.config import TaskConfig

from ptbench.catalog import handoff_mount
from ptbench.catalog.submission import AGENT_LOGS, FINAL_MODEL, PATH_TXT, RESULTS_JSON
from ptbench.catalog.tasks import get_task
from ptbench.errors import UserError, VerifierError
from ptbench.run.export import export_task
from ptbench.verify.handoff import write_record
from ptbench.verify.pipeline import verify

from .conftest import quiet
from .test_handoff import SHARDS, request_for, sharded_copy

TASKS = {
    "aime2025-qwen3-4b": FINAL_MODEL,  # a model directory
    "frogs-single-tiny": FINAL_MODEL,  # and a self-report beside it
    "frogs-single-tinker-tiny": PATH_TXT,  # a Tinker checkpoint's path.txt
}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_exported_task_sends_the_submission_through_the_mount_never_as_an_artifact(name, tmp_path):
    task_dir = export_task(get_task(name), tmp_path, mounted=True)
    submission = TASKS[name]
    config = TaskConfig.model_validate_toml((task_dir / "task.toml").read_text())
    sources = {str(artifact.source): artifact for artifact in config.artifacts}
    assert str(submission) not in sources and not any(s.startswith(f"{submission}/") for s in sources)
    assert list(sources[str(AGENT_LOGS)].exclude) == [f"./{handoff_mount.SUBMISSION_NAME}"]
    assert (str(RESULTS_JSON) in sources) == name.startswith("frogs")  # the self-report still travels
    (hook,) = config.verifier.collect
    record, copy = hook.command.split(" && ", 1)
    assert record.startswith(f"ptbench handoff-record {submission} ") and hook.user == "root"
    assert copy == handoff_mount.copy_command(submission)
    compose = yaml.safe_load((task_dir / "environment" / "docker-compose.yaml").read_text())
    (volume,) = compose["services"]["main"]["volumes"]
    source, target, mode = volume.rsplit(":", 2)
    assert source.startswith("${HOST_VERIFIER_LOGS_PATH:?") and source.endswith("}/../agent")
    assert "auto_mounting=true" in source  # what the run must pass, named when it is missing
    assert (target, mode) == (str(handoff_mount.VERIFIER_MOUNT), "ro")
    test_sh = (task_dir / "tests" / "test.sh").read_text()
    on_the_mount = handoff_mount.VERIFIER_MOUNT / handoff_mount.SUBMISSION_NAME / submission.name
    assert f"--submission {on_the_mount} " in test_sh
    assert tomllib.loads((task_dir / "task.toml").read_text())["verifier"]["environment_mode"] == "separate"


def test_the_default_export_has_no_compose_file_and_sends_the_model_as_an_artifact(tmp_path):
    task_dir = export_task(get_task("aime2025-qwen3-4b"), tmp_path)
    assert not (task_dir / "environment" / "docker-compose.yaml").exists()
    config = TaskConfig.model_validate_toml((task_dir / "task.toml").read_text())
    assert str(FINAL_MODEL) in {str(artifact.source) for artifact in config.artifacts}
    assert f"--submission {FINAL_MODEL} " in (task_dir / "tests" / "test.sh").read_text()


def test_parts_and_mount_together_are_refused(tmp_path):
    with pytest.raises(UserError, match="choose one"):
        export_task(get_task("aime2025-qwen3-4b"), tmp_path, in_parts=True, mounted=True)


def run_copy(root: Path, submission: PurePosixPath) -> None:
    """The hook's copy command, run with / moved to `root` (the paths are the container's)."""
    command = handoff_mount.copy_command(submission).replace(" /", f" {root}/")
    subprocess.run(["bash", "-c", command], check=True)


def test_the_hooks_copy_replaces_what_the_agent_left_there_and_keeps_links_as_links(tiny_dir, tmp_path):
    model = sharded_copy(tiny_dir, tmp_path / "app" / "final_model")
    (model / "link").symlink_to("/etc/passwd")
    planted = tmp_path / "logs" / "agent" / handoff_mount.SUBMISSION_NAME / "final_model"
    planted.mkdir(parents=True)
    (planted / "planted.safetensors").write_bytes(b"the agent's")
    run_copy(tmp_path, FINAL_MODEL)
    copied = tmp_path / str(handoff_mount.SUBMISSION_DIR).lstrip("/") / "final_model"
    assert sorted(p.name for p in copied.iterdir()) == sorted(p.name for p in model.iterdir())
    assert (copied / "link").is_symlink() and str((copied / "link").readlink()) == "/etc/passwd"
    assert (copied / SHARDS[0]).read_bytes() == (model / SHARDS[0]).read_bytes()


def test_no_submission_copies_nothing_and_the_hook_still_succeeds(tmp_path):
    (tmp_path / "app").mkdir()
    run_copy(tmp_path, FINAL_MODEL)  # check=True: a missing model is the agent's failure, not the hook's
    assert list((tmp_path / str(handoff_mount.SUBMISSION_DIR).lstrip("/")).iterdir()) == []


LOSSES = {
    "the mount absent (an environment that ignores the compose file)": (
        lambda copy: shutil.rmtree(copy.parent),
        "final_model is missing",
    ),
    "the hook's copy cut short": (lambda copy: (copy / SHARDS[1]).unlink(), f"{SHARDS[1]} is missing"),
}


@pytest.mark.parametrize("case", sorted(LOSSES))
def test_a_submission_the_mount_did_not_bring_whole_is_a_verifier_error_naming_it(case, tiny_dir, tmp_path, workdir):
    model = sharded_copy(tiny_dir, tmp_path / "app" / "final_model")
    record = tmp_path / "logs-artifacts" / "ptbench-handoff.json"
    write_record(model, record)
    run_copy(tmp_path, FINAL_MODEL)
    copy = tmp_path / str(handoff_mount.SUBMISSION_DIR).lstrip("/") / "final_model"
    lose, named = LOSSES[case]
    lose(copy)
    with pytest.raises(VerifierError, match="the submission did not arrive whole") as failed:
        verify(request_for(tmp_path, copy, record), quiet())
    assert named in str(failed.value)
    assert not (tmp_path / "verifier" / "reward.json").exists()


def test_the_cli_exports_the_mount_route_and_refuses_both_routes_in_one_line(cli, tmp_path):
    done = cli("tasks", "export", "aime2025-qwen3-4b", "--out", str(tmp_path), "--handoff-mount")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "aime2025-qwen3-4b" / "environment" / "docker-compose.yaml").read_text() == handoff_mount.COMPOSE
    both = cli("tasks", "export", "gsm8k-qwen3-1.7b", "--out", str(tmp_path), "--handoff-mount", "--handoff-parts")
    assert both.returncode != 0 and "choose one" in both.stderr and "Traceback" not in both.stderr
