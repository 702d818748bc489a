"""Hostile agents against the host side of a trial: planted links in the log dirs, forged rewards, floods,
trees too deep for recursion, a hijacked sandbox base dir, a killed sandbox."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_local_env_sandbox import in_env, make_env

from ptbench.sandbox.fs.roots import EnvDir, UnsafeBaseDirError, base_dir, sweep_stale
from ptbench.sandbox.local import LocalEnvironment

VICTIM = "precious host data\n"


def trial_dir(result) -> Path:
    return Path(result.trial_uri.removeprefix("file://"))


@pytest.fixture(scope="module")
def trap_job(tmp_path_factory, harbor_job):
    """One oracle job over the log-trap fixtures, with a host dir the agent aims its links at."""
    base = tmp_path_factory.mktemp("trap-job")
    trap = base / "trap"
    trap.mkdir()
    (trap / "victim.txt").write_text(VICTIM)
    (trap / "forged.json").write_text(json.dumps({"reward": 1}))
    results = harbor_job(
        base / "jobs", ["logtrap", "prewrite", "linger"], sandbox_dir=base / "sandboxes", env={"HOST_TRAP": str(trap)}
    )
    return SimpleNamespace(results={name: trials[0] for name, trials in results.items()}, trap=trap, jobs=base / "jobs")


def test_harbor_host_writes_never_follow_links_planted_in_the_log_dirs(trap_job):
    assert (trap_job.trap / "victim.txt").read_text() == VICTIM
    result = trap_job.results["logtrap"]
    assert (trial_dir(result) / "agent" / "exit-code.txt").read_text() == "3"


def test_a_reward_linked_to_a_host_file_is_not_read(trap_job):
    result = trap_job.results["logtrap"]
    assert result.verifier_result is not None, result.exception_info
    assert result.verifier_result.rewards == {"reward": 0}


def test_a_reward_written_by_the_agent_before_the_verifier_is_discarded(trap_job):
    result = trap_job.results["prewrite"]
    assert result.verifier_result is not None, result.exception_info
    assert result.verifier_result.rewards == {"reward": 0}


def test_a_process_the_agent_left_running_cannot_rewrite_the_reward(trap_job):
    result = trap_job.results["linger"]
    assert result.verifier_result is not None, result.exception_info
    assert result.verifier_result.rewards == {"reward": 0}


def test_the_verifier_phase_starts_with_no_process_of_the_agent_and_empty_logs(tmp_path, loopback_server):
    """Uploading /tests (the verifier is next) ends every process of the agent's phase, setsid'd ones and
    children of the sandbox's init included, and empties /logs/verifier; forwarded ports still work after it."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text("echo 0 > /logs/verifier/reward.txt\n")
    left = (
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt; "
        "setsid nohup sleep 600 </dev/null >/dev/null 2>&1 & "
        "(nohup sleep 600 </dev/null >/dev/null 2>&1 &) ; sleep 600 </dev/null >/dev/null 2>&1 & echo started"
    )
    listing = 'for p in /proc/[0-9]*; do [ "$(cat $p/comm)" = sleep ] && echo ${p#/proc/}; done; ls -A /logs/verifier'

    with loopback_server(meet=1) as forwarded:

        async def scenario(sandbox: LocalEnvironment):
            await sandbox.exec(left)
            before = (await sandbox.exec(listing)).stdout.split()
            await sandbox.upload_dir(tests, "/tests")
            after = (await sandbox.exec(listing)).stdout.split()
            reach = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {forwarded.port}), 5)\""
            return before, after, (await sandbox.exec(reach)).return_code, await sandbox.exec("cat /tests/test.sh")

        before, after, reached, uploaded = in_env(make_env(tmp_path, forward_ports=str(forwarded.port)), scenario)
    assert len(before) == 5 and before[-1] == "reward.txt"  # pid 2 (the holder's sleep), the agent's three
    assert after == ["2"]  # a fresh holder's sleep only; nothing in /logs/verifier
    assert reached == 0 and forwarded.connections == 1
    assert uploaded.stdout.startswith("echo 0")


def test_no_planted_link_reaches_the_job_dir(trap_job):
    links = [path for path in trap_job.jobs.rglob("*") if path.is_symlink()]
    assert links == []


def test_a_flood_of_output_is_capped(tmp_path):
    env = make_env(tmp_path)

    async def scenario(sandbox: LocalEnvironment):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = await sandbox.exec("head -c 300000000 /dev/zero | tr '\\0' A; echo done >&2")
        grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        return result, grown_mib

    result, grown_mib = in_env(env, scenario)
    assert result.return_code == 0
    assert len(result.stdout) < 64 << 20
    assert "bytes of output cut" in result.stdout
    assert result.stderr.strip() == "done"
    assert grown_mib < 200  # 300 MB of output never sat in memory at once


def test_a_tree_too_deep_for_recursion_is_removed(tmp_path):
    env = make_env(tmp_path)

    async def scenario(sandbox: LocalEnvironment):
        deep = "import os\nfor _ in range(3000):\n    os.mkdir('d'); os.chdir('d')\nopen('leaf', 'w').close()"
        result = await sandbox.exec(f"cd /app && python3 -c {shlex.quote(deep)}")
        assert result.return_code == 0, result.stderr
        (tmp_path / "out").mkdir()
        await sandbox.download_dir("/app", tmp_path / "out")  # deep trees are cut, not a RecursionError

    in_env(env, scenario)
    assert list((tmp_path / "sandboxes").glob("*")) == []


def test_stale_roots_with_deep_trees_are_swept(tmp_path):
    base = tmp_path / "sandboxes"
    env_dir = EnvDir(base_dir(str(base)), "dead")
    node = env_dir.root
    node.mkdir()
    fd = os.open(node, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    assert sweep_stale(base) == [] and env_dir.path.exists()  # its owner holds the lock: alive, left alone
    env_dir._unlock()  # as if its owner had died
    assert sweep_stale(base) == [env_dir.path]
    assert not env_dir.path.exists()


def test_a_base_dir_owned_by_someone_else_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    with pytest.raises(UnsafeBaseDirError, match="0700"):
        base_dir(str(shared))
    os.chown(shared, 12345, 12345)
    os.chmod(shared, 0o700)
    with pytest.raises(UnsafeBaseDirError, match="owned by uid 12345"):
        base_dir(str(shared))


def test_a_base_dir_that_is_a_symlink_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(UnsafeBaseDirError, match="symlink"):
        base_dir(str(tmp_path / "link"))


def test_a_base_dir_under_a_dir_others_can_write_is_refused(tmp_path):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)  # world-writable, not sticky: anyone could swap the base dir
    with pytest.raises(UnsafeBaseDirError, match="writable by others"):
        base_dir(str(open_dir / "sandboxes"))


def test_a_new_base_dir_is_root_only(tmp_path):
    made = base_dir(str(tmp_path / "fresh" / "sandboxes"))
    info = made.lstat()
    assert (info.st_uid, info.st_mode & 0o777) == (0, 0o700)


def test_a_dead_sandbox_is_reported_as_dead(tmp_path):
    env = make_env(tmp_path)

    async def scenario(sandbox: LocalEnvironment):
        await sandbox.exec("(sleep 0.3; kill -9 $(cat /proc/1/task/1/children) 1) >/dev/null 2>&1 &")
        await asyncio.sleep(1.5)
        with pytest.raises(RuntimeError, match="sandbox .* died"):
            await sandbox.exec("true")

    in_env(env, scenario)


def test_a_sandbox_killed_during_a_command_is_reported_as_dead(tmp_path):
    env = make_env(tmp_path)

    async def scenario(sandbox: LocalEnvironment):
        with pytest.raises(RuntimeError, match="sandbox .* died"):
            await sandbox.exec("kill -9 $(cat /proc/1/task/1/children) 1 2>/dev/null; sleep 5")

    in_env(env, scenario)


def test_a_sweep_races_owners_that_create_and_remove_their_dirs(tmp_path):
    """Another run's sandboxes come and go while a sweep looks at them (the cold CI: a sweep's lstat of a lock that
    its owner had just removed failed a verifier's environment start): every step a sweep takes on a candidate may
    find it gone, and none of them may raise. Owners in a thread make and remove their dirs as fast as they can;
    the sweep passes over them until 300 candidates were seen going (the old code failed within them)."""
    import threading

    base = base_dir(str(tmp_path / "sandboxes"))
    stop = threading.Event()
    made = [0]

    def owners() -> None:
        while not stop.is_set():
            env_dir = EnvDir(base, "racing")
            env_dir.remove()
            made[0] += 1

    thread = threading.Thread(target=owners, daemon=True)
    thread.start()
    try:
        while made[0] < 300:
            assert sweep_stale(base, min_age=30.0) == []  # the owners are alive and young: nothing is removed
    finally:
        stop.set()
        thread.join()


def test_a_sweep_never_makes_again_a_base_whose_run_is_removing_it(tmp_path):
    """Every base dir a sandbox used is listed host-wide, and each start sweeps them all: a listed base that its run
    is removing (a test's temp tree, a job dir) is looked at as it is, never created again under that run's rmtree.
    Runs in a thread register their base and remove their whole tree as fast as they can while sweeps pass."""
    import shutil
    import threading

    from ptbench.sandbox.fs.roots import sweep_every_base

    current = base_dir(str(tmp_path / "current"))
    stop = threading.Event()
    runs = [0]
    failures: list[BaseException] = []

    def runs_that_come_and_go() -> None:
        while not stop.is_set():
            tree = tmp_path / f"run{runs[0]}"
            try:
                sweep_every_base(base_dir(str(tree / "sandboxes")))
                shutil.rmtree(tree)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                failures.append(exc)
                return
            runs[0] += 1

    thread = threading.Thread(target=runs_that_come_and_go, daemon=True)
    thread.start()
    try:
        while runs[0] < 60 and not failures:
            sweep_every_base(current)
    finally:
        stop.set()
        thread.join()
    assert failures == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current"]  # no run's tree was made again
