"""Real Harbor jobs on the local environment: the hand-off hook, turned on as `ptbench run` turns it on there
($PTBENCH_STOP_OTHERS through the job's environment, passed by the task as exported tasks pass it), stops the writer
the agent left appending to its model before the record, whatever its kind, and spares the sandbox's holder: the
trial ends, and the model arrives as recorded. With the hook off the same writer shows in the arrival check."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from ptbench.run.jobs import resolve_environment, with_stop_others
from ptbench.settings import env_name

pytestmark = [pytest.mark.slow, pytest.mark.heavy(60)]

MODEL = "/app/final_model"
RECORD = "/logs/artifacts/ptbench-handoff.json"
WRITER = f"touch {MODEL}/writer-started; while :; do printf x >> {MODEL}/weights.bin; sleep 0.01; done"
LEFT = {  # what the oracle leaves running once it wrote its model
    "nothing": "true",
    "setsid": f"setsid bash -c '{WRITER}' </dev/null >/dev/null 2>&1 &",
    "orphan": f"(bash -c '{WRITER}' </dev/null >/dev/null 2>&1 &)",
    "lookalike": (  # argv `sleep infinity`, name `sleep`, the holder's environment, reparented to pid 1
        f"mkdir -p /app/forged && cp /bin/bash /app/forged/sleep && echo '{WRITER}' > /app/forged/infinity && "
        "(cd /app/forged && exec env -i PATH=/usr/bin:/bin bash -c 'exec -a sleep ./sleep infinity' "
        "</dev/null >/dev/null 2>&1 &)"
    ),
}
CONTROL = "setsid-not-stopped"  # the setsid writer with the hook told not to stop it
STOP = env_name("stop_others")
TEST_SH = f"""#!/bin/bash
py=$(sed -n '1s/^#!//p' "$(command -v ptbench)")
"$py" - <<'EOF'
import json, pathlib
from ptbench.verify.handoff import arrival_problems
model = pathlib.Path("{MODEL}")
problems = arrival_problems(model, pathlib.Path("{RECORD}"))
pathlib.Path("/logs/verifier/problems.txt").write_text("\\n".join(problems))
started = int((model / "writer-started").exists())
pathlib.Path("/logs/verifier/reward.json").write_text(json.dumps({{"reward": int(not problems), "started": started}}))
EOF
"""


def write_task(root: Path, name: str, left: str, hook_env: str = "") -> Path:
    task = root / name
    (task / "solution").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "instruction.md").write_text("Leave your model in /app/final_model.\n")
    (task / "task.toml").write_text(
        f"""schema_version = "1.4"
artifacts = ["{MODEL}"]

[agent]
timeout_sec = 120.0

[verifier]
timeout_sec = 120.0
environment_mode = "separate"

[[verifier.collect]]
command = "{hook_env}ptbench handoff-record {MODEL} {RECORD}"
timeout_sec = 120.0
user = "root"

[environment]
workdir = "/app"

[environment.env]
{STOP} = "${{{STOP}:-}}"
"""
    )
    solve = task / "solution" / "solve.sh"
    solve.write_text(
        f"#!/bin/bash\nset -e\nmkdir -p {MODEL}\nhead -c 65536 /dev/zero > {MODEL}/weights.bin\n{left}\n"
        + ("" if left == "true" else f"until [ -e {MODEL}/writer-started ]; do sleep 0.05; done\nsleep 0.3\n")
    )
    solve.chmod(0o755)
    test_sh = task / "tests" / "test.sh"
    test_sh.write_text(TEST_SH)
    test_sh.chmod(0o755)
    return task


@pytest.fixture(scope="module")
def stop_job(tmp_path_factory, harbor_job):
    base = tmp_path_factory.mktemp("stop-job")
    tasks = [write_task(base / "tasks", name, left) for name, left in LEFT.items()]
    tasks.append(write_task(base / "tasks", CONTROL, LEFT["setsid"], hook_env=f"{STOP}= "))
    environment = with_stop_others(resolve_environment("local"))
    assert environment.env == {STOP: "1"}
    results = harbor_job(
        base / "jobs", [str(task) for task in tasks], sandbox_dir=base / "sandboxes", env=environment.env
    )
    return SimpleNamespace(results={name: trials[0] for name, trials in results.items()})


def verdict(result) -> dict:
    assert result.exception_info is None, result.exception_info
    assert result.verifier_result is not None
    return result.verifier_result.rewards


@pytest.mark.parametrize("left", sorted(LEFT))
def test_the_writer_the_agent_left_is_stopped_before_the_record_and_the_model_arrives_as_recorded(stop_job, left):
    assert verdict(stop_job.results[left]) == {"reward": 1, "started": int(left != "nothing")}


def test_a_writer_not_stopped_changes_the_model_after_its_record(stop_job):
    """The control: the same writer, the hook told not to stop it; the arrival check sees the model grown."""
    assert verdict(stop_job.results[CONTROL]) == {"reward": 0, "started": 1}


def test_ptbench_run_stops_others_only_where_the_hook_tells_the_environments_own_processes():
    for name in ("local", "docker", "podman"):
        assert with_stop_others(resolve_environment(name)).env == {STOP: "1"}, name
    for name in ("modal", "daytona", "e2b", "gke", "runloop"):
        assert STOP not in with_stop_others(resolve_environment(name)).env, name


def test_the_record_is_written_in_each_trial(stop_job):
    for name, result in stop_job.results.items():
        record = Path(result.trial_uri.removeprefix("file://")) / "artifacts" / RECORD.lstrip("/")
        assert json.loads(record.read_text())["kind"] == "dir", name
