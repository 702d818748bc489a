"""The hand-off hook's `--stop-others` in real podman containers, with and without an init (`--init`: catatonit), as
Harbor's compose files start them (`sh -c "sleep infinity"`): the container's own processes (pid 1 and its session)
are spared, and the writers an agent's `exec` left (a setsid'd daemon, an orphan, a look-alike of the keepalive)
are stopped before the record, so the model stays as recorded. ptbench runs from this checkout, bound read-only into
the image of ptbench's pinned dependencies (the podman test's base image)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "localhost/ptbench-python-deps:3.12"
MODEL = "/app/final_model"
WRITER = "touch {model}/{name}.started; while :; do printf x >> {model}/{name}.bin; sleep 0.01; done"
LEFT = {
    "setsid": "setsid bash -c '{writer}' </dev/null >/dev/null 2>&1 &",
    "orphan": "(bash -c '{writer}' </dev/null >/dev/null 2>&1 &)",
    "lookalike": (  # argv `sleep infinity`, name `sleep`, a bare environment, reparented to pid 1
        "mkdir -p /app/forged && cp /bin/bash /app/forged/sleep && echo '{writer}' > /app/forged/infinity && "
        "(cd /app/forged && exec env -i PATH=/usr/bin:/bin bash -c 'exec -a sleep ./sleep infinity' "
        "</dev/null >/dev/null 2>&1 &)"
    ),
}
CHECK = f"""
import pathlib
from ptbench.verify.handoff import arrival_problems
print(arrival_problems(pathlib.Path("{MODEL}"), pathlib.Path("/tmp/record.json")))
"""


@pytest.fixture(scope="module")
def image() -> Iterator[None]:
    if os.geteuid() != 0 or not all(shutil.which(tool) for tool in ("podman", "debootstrap", "runc", "flock")):
        pytest.skip("needs root, podman, runc and debootstrap (scripts/setup-venv installs them as root)")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CONTAINERS_CONF", str(ROOT / "scripts" / "podman" / "containers.conf"))
        subprocess.run([str(ROOT / "scripts" / "podman" / "base-image"), "--from-venv", sys.prefix], check=True)
        yield


def podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=300)


def tree(pid: int) -> set[int]:
    """`pid` and its descendants, by host pid (read from the host: no process of the container's is started)."""
    found, queue = set(), [pid]
    while queue:
        found.add(current := queue.pop())
        for task in Path(f"/proc/{current}/task").iterdir():
            queue += [int(child) for child in (task / "children").read_text().split()]
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.parametrize("init", [False, True], ids=["no-init", "init"])
def test_the_containers_own_are_spared_and_the_agents_writers_stopped(image, init):
    name = f"ptbench-stop-{uuid.uuid4().hex[:8]}"
    started = podman(
        "run", "-d", "--rm", "--name", name, *(["--init"] if init else []),
        "-v", f"{ROOT / 'src'}:/ptbench-src:ro", IMAGE, "sh", "-c", "sleep infinity",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    try:
        own = tree(int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout))  # pid 1 and what it started
        assert len(own) == (3 if init else 2)  # catatonit, sh, sleep
        podman("exec", name, "sh", "-c", f"mkdir -p {MODEL} && head -c 65536 /dev/zero > {MODEL}/weights.bin")
        for kind, left in LEFT.items():
            agent = podman("exec", name, "bash", "-c", left.format(writer=WRITER.format(model=MODEL, name=kind)))
            assert agent.returncode == 0, agent.stderr
        deadline = time.monotonic() + 60
        while podman("exec", name, "sh", "-c", f"ls {MODEL}/*.started | wc -l").stdout.strip() != str(len(LEFT)):
            assert time.monotonic() < deadline, "the writers did not start"
            time.sleep(0.2)
        hook = podman(
            "exec", "-e", "PTBENCH_STOP_OTHERS=1", "-e", "PYTHONPATH=/ptbench-src", name,
            "python", "-m", "ptbench.cli.main", "handoff-record", MODEL, "/tmp/record.json",
        )  # fmt: skip
        assert hook.returncode == 0, hook.stderr
        time.sleep(0.3)  # what a writer still running would append meanwhile
        assert all(alive(pid) for pid in own)  # the container still runs as it started
        check = podman("exec", "-e", "PYTHONPATH=/ptbench-src", name, "python", "-c", CHECK)
        assert check.stdout.strip() == "[]", (check.stdout, check.stderr)
    finally:
        podman("rm", "-f", "-t", "0", name)
