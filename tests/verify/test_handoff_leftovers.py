"""The hand-off hook's `--stop-others` tells the environment's own processes from the agent's leftovers by how the
kernel made them, never by when: a sandbox holder that started late (as under load in the cold CI) is spared, and
every leftover writer (a setsid'd daemon, an orphan reparented to pid 1, a look-alike of the holder) is stopped
before the record. The decision over process tables of the local sandbox, podman and docker as measured (the
module docstring of ptbench.verify.leftovers), then in a real PID namespace made like the sandbox's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ptbench.verify import leftovers
from ptbench.verify.handoff import arrival_problems
from ptbench.verify.leftovers import Process, environment_own, read_processes

# Process tables as each environment showed them (pid: parent, session), the hook's own process last; the agent's
# leftovers of each kind beside them. Measured: the local sandbox in a real Harbor trial, podman 4.3 with runc.
LOCAL_SANDBOX = {1: Process(0, 0), 2: Process(1, 0)}  # bwrap's init, the holder; both sessions outside
LOCAL_HOOK = {68: Process(0, 0), 70: Process(68, 0)}  # bash -c from nsenter, then ptbench
PODMAN = {1: Process(0, 1), 6: Process(1, 1)}  # sh -c "sleep infinity" and its sleep (2-5: the engine's, gone)
PODMAN_INIT = {1: Process(0, 1), 6: Process(1, 1), 7: Process(6, 1)}  # catatonit, sh, sleep
DOCKER_INIT_CMD_IS_2 = {1: Process(0, 1), 2: Process(1, 1)}  # docker-init (tini) and an exec'ing CMD
CONTAINER_HOOK = {40: Process(0, 40), 41: Process(40, 40)}  # an exec is a session of its own

ENVIRONMENTS = {
    "local sandbox": (LOCAL_SANDBOX, LOCAL_HOOK),
    "podman": (PODMAN, CONTAINER_HOOK),
    "podman --init": (PODMAN_INIT, CONTAINER_HOOK),
    "docker --init": (DOCKER_INIT_CMD_IS_2, CONTAINER_HOOK),
}
LEFTOVERS = {  # in the local sandbox (sessions outside are 0), and in a container
    "an orphan reparented to pid 1": ({10: Process(1, 0)}, {20: Process(1, 13)}),
    "a setsid'd daemon": ({8: Process(1, 8)}, {18: Process(1, 18)}),
    "a daemon still under the agent's command": ({5: Process(4, 0), 4: Process(0, 0)}, {14: Process(13, 13)}),
    "a look-alike of the holder, orphaned": ({3: Process(1, 0)}, {21: Process(1, 21)}),
    "a child of a leftover": ({11: Process(10, 0), 10: Process(1, 0)}, {22: Process(20, 13), 20: Process(1, 13)}),
}


@pytest.mark.parametrize("environment", sorted(ENVIRONMENTS))
@pytest.mark.parametrize("leftover", [None, *sorted(LEFTOVERS)])
def test_the_environments_own_are_spared_and_every_leftover_is_not(environment, leftover):
    own, hook = ENVIRONMENTS[environment]
    left = {} if leftover is None else LEFTOVERS[leftover][environment != "local sandbox"]
    table = {**own, **left, **hook}
    kept = environment_own(table, max(hook))
    assert kept & set(table) == set(own) | set(hook)


def test_pid_2_is_the_environments_only_when_pid_1_made_it():
    """A container's pid 2 that entered from outside (parent 0: the engine's exec, or the agent's first command) is
    not the environment's; only pid 1's own child is."""
    table = {1: Process(0, 0), 2: Process(0, 2), 9: Process(0, 9)}
    assert environment_own(table, 9) == {1, 9}


def test_session_1_counts_only_where_pid_1_leads_it():
    table = {1: Process(0, 0), 2: Process(1, 0), 7: Process(1, 1), 9: Process(0, 0)}  # no session 1 here
    assert environment_own(table, 9) == {1, 2, 9}


def test_the_process_table_is_read_from_proc_stat_lines(tmp_path):
    """Names with spaces and parentheses, zombies, entries gone or unreadable, and what is not a pid."""
    lines = {
        "1": "1 (bwrap) S 0 1 0 0 -1",
        "2": "2 (sleep) S 1 1 0 0 -1",
        "7": "7 (a) b) (c) S 1 7 7 0 -1",  # a name the agent chose
        "8": "8 (dead) Z 1 8 8 0 -1",
        "9": "9 (cut",  # a line that does not parse: gone meanwhile
        "self": "12 (me) R 0 0 0 0 -1",
    }
    for name, line in lines.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "stat").write_text(line)
    (tmp_path / "10").mkdir()  # no stat: gone meanwhile
    assert read_processes(tmp_path) == {1: Process(0, 0), 2: Process(1, 0), 7: Process(1, 7)}


def test_stop_others_refuses_in_the_hosts_own_pid_namespace(monkeypatch):
    monkeypatch.setattr(leftovers, "_pid_namespace", lambda: leftovers.INIT_PID_NAMESPACE)
    assert leftovers.stop_other_processes() is None


# A real PID namespace made as the local sandbox makes its own: pid 1 (here a Python standing in for bwrap's init)
# starts the holder, pid 2, and commands enter with nsenter from a session of their own (parent and session 0).
INIT = """
import subprocess, sys, time
time.sleep(float(sys.argv[1]))  # the holder starts this late after pid 1, as it did under load
holder = subprocess.Popen(["sleep", "infinity"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
print("ready", flush=True)
holder.wait()
"""
WRITER = "touch {model}/writer-started; while :; do printf x >> {model}/weights.bin; sleep 0.01; done"
needs_namespaces = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("nsenter")),
    reason="needs root, unshare(1) and nsenter(1)",
)


class Namespace:
    """The namespace's pid 1 and holder by their host pids; `run` enters it as a sandbox command does."""

    def __init__(self, init: int, holder: int) -> None:
        self.init, self.holder = init, holder

    def run(self, script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["nsenter", "-t", str(self.init), "-p", "-m", "--", "bash", "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )

    def holder_alive(self) -> bool:
        try:
            return Path(f"/proc/{self.holder}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except OSError:
            return False


def children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@contextmanager
def namespace(holder_delay: float) -> Iterator[Namespace]:
    unshare = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", sys.executable, "-c", INIT, str(holder_delay)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert unshare.stdout is not None and unshare.stdout.readline() == "ready\n"
        (init,) = children(unshare.pid)
        (holder,) = children(init)
        yield Namespace(init, holder)
    finally:
        unshare.kill()  # and with it pid 1 (--kill-child) and so every process of the namespace
        unshare.wait()


def bash_look_alike(writer: str, tmp_path: Path) -> str:
    """A writer that reads as the holder: argv `sleep infinity`, name `sleep`, the holder's environment, orphaned."""
    forged = tmp_path / "forged"
    forged.mkdir()
    shutil.copy("/bin/bash", forged / "sleep")
    (forged / "infinity").write_text(writer)
    holder_like = "exec -a sleep ./sleep infinity"
    return f"(cd {forged} && exec env -i PATH=/usr/bin:/bin bash -c '{holder_like}' </dev/null >/dev/null 2>&1 &)"


AGENTS_LEFT = {
    "nothing": lambda writer, tmp: "true",
    "a setsid'd daemon": lambda writer, tmp: f"setsid bash -c '{writer}' </dev/null >/dev/null 2>&1 &",
    "an orphan reparented to pid 1": lambda writer, tmp: f"(bash -c '{writer}' </dev/null >/dev/null 2>&1 &)",
    "a look-alike of the holder": bash_look_alike,
}


@needs_namespaces
@pytest.mark.parametrize("left", sorted(AGENTS_LEFT))
@pytest.mark.parametrize("holder_delay", [0.0, 1.0])
def test_a_late_holder_is_spared_and_the_agents_writer_stopped_before_the_record(left, holder_delay, tmp_path):
    """The cold CI's failure: the holder started a second after pid 1 (the start-time rule's quarter second) and was
    killed, ending the namespace and the hook with it. Now it is spared; whatever the agent left is stopped."""
    model = tmp_path / "final_model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"w" * 4096)
    record = tmp_path / "record.json"
    with namespace(holder_delay) as space:
        agent = space.run(AGENTS_LEFT[left](WRITER.format(model=model), tmp_path))
        assert agent.returncode == 0, agent.stderr
        if left != "nothing":
            deadline = time.monotonic() + 60
            while not (model / "writer-started").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert (model / "writer-started").exists()
        hook = space.run(
            f"{sys.executable} -m ptbench.cli.main handoff-record {model} {record}; echo rc=$?",
            env={"PTBENCH_STOP_OTHERS": "1"},
        )
        assert "rc=0" in hook.stdout, hook.stderr
        time.sleep(0.3)  # what a writer still running would append meanwhile
        assert space.holder_alive()
    assert arrival_problems(model, record) == []
