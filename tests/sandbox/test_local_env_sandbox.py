"""The local environment driven directly (no Harbor job): exec semantics, isolation, users, file transfers,
start/stop and the host checks."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
from harbor.models.trial.paths import TrialPaths

import ptbench
from ptbench.sandbox.fs.disk import unmount_disk
from ptbench.sandbox.fs.files import UnsafePathError
from ptbench.sandbox.fs.layout import holder_command, root_bind
from ptbench.sandbox.fs.roots import EnvDir
from ptbench.sandbox.host import HostTools, SandboxUnavailableError, gpu_count, gpu_device_nodes
from ptbench.sandbox.local import LocalEnvironment

# Prints how many of the pids listed in /tmp/pids still run (zombies count as gone).
COUNT_ALIVE = (
    "n=0; for p in $(cat /tmp/pids); do s=$(awk '{print $3}' /proc/$p/stat 2>/dev/null); "
    '[ -n "$s" ] && [ "$s" != Z ] && n=$((n+1)); done; echo $n'
)
CAP_BITS = {
    "chown": 0,
    "dac_override": 1,
    "fowner": 3,
    "fsetid": 4,
    "kill": 5,
    "setgid": 6,
    "setuid": 7,
    "setpcap": 8,
    "net_bind_service": 10,
    "sys_chroot": 18,
    "audit_write": 29,
    "setfcap": 31,
}


def make_env(
    tmp_path: Path, *, network: NetworkMode = NetworkMode.PUBLIC, session_id: str = "unit__env", **kwargs
) -> LocalEnvironment:
    trial_paths = TrialPaths(tmp_path / "trial")
    trial_paths.mkdir()
    return LocalEnvironment(
        environment_dir=tmp_path / "environment",
        environment_name="unit",
        session_id=session_id,
        trial_paths=trial_paths,
        task_env_config=EnvironmentConfig(workdir="/app", network_mode=network),
        network_policy=NetworkPolicy(network_mode=network),
        mounts=[{"type": "bind", "source": str(trial_paths.agent_dir), "target": "/logs/agent"}],
        sandbox_dir=str(tmp_path / "sandboxes"),
        **kwargs,
    )


def in_env(env: LocalEnvironment, scenario):
    """Start env, run `await scenario(env)`, always stop it; returns the scenario's result."""

    async def main():
        await env.start(force_build=False)
        try:
            return await scenario(env)
        finally:
            await env.stop(delete=True)

    return asyncio.run(main())


async def ok(sandbox: LocalEnvironment, command: str, **kwargs) -> str:
    result = await sandbox.exec(command, **kwargs)
    assert result.return_code == 0, result.stderr
    return result.stdout


async def wait_for_file(env: LocalEnvironment, path: str) -> None:
    for _ in range(400):
        if (await env.exec(f"test -e {path}")).return_code == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def test_tmp_background_processes_and_logs_persist_across_execs(tmp_path):
    async def scenario(env):
        await ok(env, "echo kept > /tmp/note; nohup sleep 1000 >/dev/null 2>&1 & echo $! > /tmp/pids")
        await ok(env, "echo log > /logs/agent/out.txt")
        assert not (tmp_path / "trial" / "agent" / "out.txt").exists()  # a private dir, not a bind of the host's
        await env.download_dir("/logs/agent", tmp_path / "trial" / "agent")  # as Harbor does after the agent
        missing_cwd = await env.exec("true", cwd="/no/such/dir")
        return await ok(env, "cat /tmp/note"), await ok(env, COUNT_ALIVE), await ok(env, "pwd"), missing_cwd.return_code

    assert in_env(make_env(tmp_path), scenario) == ("kept\n", "1\n", "/app\n", 125)
    assert (tmp_path / "trial" / "agent" / "out.txt").read_text() == "log\n"


def test_exec_environment_is_clean_with_ptbench_first_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PTB_HOST_SECRET", "leak")

    async def scenario(env):
        return await ok(env, "env", env={"GIVEN": "1"}), await ok(env, "command -v ptbench")

    variables, ptbench = in_env(make_env(tmp_path), scenario)
    names = {line.split("=", 1)[0] for line in variables.splitlines()}
    assert "PTB_HOST_SECRET" not in names
    assert {"PATH", "HOME", "LANG", "TERM", "GIVEN"} <= names
    assert ptbench.strip() == os.path.join(sys.prefix, "bin", "ptbench")


def test_venv_console_scripts_run_inside(tmp_path):
    from ptbench.catalog.timer import stamp_command

    async def scenario(env):
        await ok(env, stamp_command(3600))
        return await ok(env, "timer"), await ok(env, "ptbench version")

    remaining, version = in_env(make_env(tmp_path), scenario)
    assert re.fullmatch(r"0:5\d|1:00", remaining.strip())
    assert version.strip() == ptbench.__version__


def test_root_commands_keep_only_docker_capabilities(tmp_path):
    async def scenario(env):
        status = await ok(env, "grep -E '^Cap(Bnd|Inh|Eff)' /proc/self/status")
        remount = await env.exec("mount -o remount,rw /usr && touch /usr/ptb-unit-remount")
        return status, remount

    status, remount = in_env(make_env(tmp_path), scenario)
    caps = dict(line.split(":\t") for line in status.splitlines())
    # Docker's default set without mknod and net_raw.
    expected = sum(1 << bit for bit in CAP_BITS.values())
    assert int(caps["CapBnd"], 16) == expected == int(caps["CapEff"], 16)
    assert int(caps["CapInh"], 16) == 0
    assert remount.return_code != 0
    assert not Path("/usr/ptb-unit-remount").exists()


def test_host_kernel_settings_are_read_only(tmp_path):
    async def scenario(env):
        # Writes back the current value, so even a regression changes nothing on the host.
        return await env.exec("cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern")

    result = in_env(make_env(tmp_path), scenario)
    assert result.return_code != 0 and "Read-only file system" in result.stderr


def test_no_network_mode_has_only_loopback(tmp_path):
    async def scenario(env):
        return await ok(env, "awk -F: 'NR > 2 {print $1}' /proc/net/dev")

    assert in_env(make_env(tmp_path, network=NetworkMode.NO_NETWORK), scenario).split() == ["lo"]


def test_non_root_user_gets_the_workdir(tmp_path):
    async def scenario(env):
        await ok(env, "echo before > /app/existing")
        return await ok(env, "id -u; stat -c %u /app /app/existing; touch /app/mine && echo wrote", user="nobody")

    assert in_env(make_env(tmp_path), scenario).split() == ["65534", "65534", "65534", "wrote"]


def test_unknown_user_is_refused(tmp_path):
    async def scenario(env):
        with pytest.raises(ValueError, match="unknown user"):
            await env.exec("true", user="no-such-user-ptb")

    in_env(make_env(tmp_path), scenario)


class ListHandler(logging.Handler):
    """Keeps every message logged to it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def listed_logger(name: str) -> tuple[logging.Logger, ListHandler]:
    logger = logging.getLogger(f"ptbench-test.{name}")
    logger.setLevel(logging.DEBUG)
    handler = ListHandler()
    logger.addHandler(handler)
    return logger, handler


def test_timeout_kills_the_group_and_children_that_left_it_and_logs_them_first(tmp_path):
    logger, handler = listed_logger("timeout")

    async def scenario(env):
        with pytest.raises(RuntimeError, match="timed out"):
            await env.exec(
                "sleep 1000 & echo $! >> /tmp/pids; setsid sleep 1000 & echo $! >> /tmp/pids; "
                "echo $$ >> /tmp/pids; sleep 1000",
                timeout_sec=1,
            )
        return await ok(env, "wc -l < /tmp/pids"), await ok(env, COUNT_ALIVE)

    assert in_env(make_env(tmp_path, logger=logger), scenario) == ("3\n", "0\n")
    # what each process was doing when it was killed: the nsenter first, then bash and its three sleeps
    [report] = [message for message in handler.messages if "before the kill" in message]
    assert "timed out after 1 seconds" in report
    lines = report.splitlines()[1:]
    assert "name 'nsenter'" in lines[0]
    sleeping = [line for line in lines if "name 'sleep'" in line]
    assert len(sleeping) == 3
    assert all(re.search(r"state S wchan [a-z_]+", line) for line in sleeping), report


def test_cancellation_kills_the_command_and_logs_it_first(tmp_path):
    logger, handler = listed_logger("cancel")

    async def scenario(env):
        task = asyncio.create_task(
            env.exec("setsid sleep 1000 & echo $! >> /tmp/pids; echo $$ >> /tmp/pids; touch /tmp/ready; sleep 1000")
        )
        await wait_for_file(env, "/tmp/ready")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await ok(env, COUNT_ALIVE)

    assert in_env(make_env(tmp_path, logger=logger), scenario) == "0\n"
    [report] = [message for message in handler.messages if "before the kill" in message]
    assert "interrupted (CancelledError)" in report
    assert sum("name 'sleep'" in line for line in report.splitlines()) == 2


def test_downloads_refuse_planted_symlinks_on_the_way_and_copy_those_inside_as_links(tmp_path):
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    (host_dir / "secret").write_text("host secret\n")
    out = tmp_path / "out"
    logs = tmp_path / "trial" / "agent"

    async def scenario(env):
        await ok(
            env,
            f"mkdir -p /app/d/sub && echo hi > /app/d/sub/f && ln -s /etc /app/d/etc-link && "
            f"ln -s {host_dir}/secret /app/d/host-file && mkfifo /app/d/fifo && "
            f"ln -s {host_dir} /app/linkdir && ln -s {host_dir}/secret /app/linkfile",
        )
        await env.download_dir("/app/d", out)
        await env.download_dir("/app/d", logs)  # Harbor's own trial files, which it reads by path: no links
        for bad in ("/app/linkdir", "/app/linkdir/secret"):
            with pytest.raises(UnsafePathError):
                await env.download_dir(bad, tmp_path / "never")
        for bad in ("/app/linkfile", "/app/d/fifo", "/app/linkdir/secret"):
            with pytest.raises(UnsafePathError):
                await env.download_file(bad, tmp_path / "never.txt")

    in_env(make_env(tmp_path), scenario)
    # As Docker's copy (Harbor's fidelity test): links arrive as links, with their targets, never followed.
    assert sorted(str(path.relative_to(out)) for path in out.rglob("*")) == ["etc-link", "host-file", "sub", "sub/f"]
    assert os.readlink(out / "etc-link") == "/etc" and os.readlink(out / "host-file") == f"{host_dir}/secret"
    assert sorted(str(path.relative_to(logs)) for path in logs.rglob("*")) == ["sub", "sub/f"]
    assert not (tmp_path / "never").exists() and not (tmp_path / "never.txt").exists()


def test_uploads_replace_planted_symlinks_and_refuse_read_only_paths(tmp_path):
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    source = tmp_path / "payload.txt"
    source.write_text("payload\n")
    tree = tmp_path / "tree"
    (tree / "lib").mkdir(parents=True)
    (tree / "lib" / "x.sh").write_text("echo x\n")

    async def scenario(env):
        await ok(
            env,
            f"ln -s {host_dir} /app/linkdir && ln -s {host_dir}/file /app/linkfile && "
            f"mkdir /app/tree && ln -s {host_dir} /app/tree/lib",
        )
        await env.upload_file(source, "/app/linkdir/file")
        await env.upload_file(source, "/app/linkfile")
        await env.upload_dir(tree, "/app/tree")
        for read_only in ("/usr/ptb-unit-upload", sys.prefix + "/ptb-unit-upload", "/proc/ptb-unit-upload"):
            with pytest.raises(UnsafePathError):
                await env.upload_file(source, read_only)
        return await ok(
            env,
            "cat /app/linkdir/file /app/linkfile /app/tree/lib/x.sh; "
            "test ! -L /app/linkdir && test ! -L /app/tree/lib && echo real",
        )

    assert in_env(make_env(tmp_path), scenario) == "payload\npayload\necho x\nreal\n"
    assert list(host_dir.iterdir()) == []
    assert not Path("/usr/ptb-unit-upload").exists()


def test_extra_read_only_paths_are_visible_but_not_writable(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "model.txt").write_text("weights\n")
    (tmp_path / "unshared.txt").write_text("no\n")

    async def scenario(env):
        read = await ok(env, f"cat {shared}/model.txt")
        write = await env.exec(f"touch {shared}/new")
        hidden = await env.exec(f"cat {tmp_path}/unshared.txt")
        return read, write.return_code, hidden.return_code

    read, write_rc, hidden_rc = in_env(make_env(tmp_path, ro_paths=str(shared)), scenario)
    assert (read, write_rc != 0, hidden_rc != 0) == ("weights\n", True, True)
    assert not (shared / "new").exists()


def test_roots_removed_on_stop_kept_on_request_and_stale_ones_swept(tmp_path):
    sandboxes = tmp_path / "sandboxes"
    dead_owner = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; from pathlib import Path;"
            "from ptbench.sandbox.fs.roots import EnvDir;"
            "d = EnvDir(Path(sys.argv[1]), 'dead'); d.root.mkdir(); print(d.path); os._exit(0)",
            str(sandboxes),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = Path(dead_owner.stdout.strip())
    # Stands in for a holder that outlived its owner: same root bind on its command line.
    leftover = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *root_bind(dead / "root")])
    kept = EnvDir(sandboxes, "kept")
    kept.keep()

    async def scenario(env):
        return await ok(env, "true")

    try:
        in_env(make_env(tmp_path), scenario)
        assert leftover.wait(timeout=60) == -9
    finally:
        leftover.kill()
    assert not dead.exists()
    assert sorted(sandboxes.iterdir()) == [kept.path]
    kept.remove()
    assert not sandboxes.exists()

    async def keep_it():
        env = make_env(tmp_path)
        await env.start(force_build=False)
        await ok(env, "echo evidence > /app/e")
        await env.stop(delete=False)

    asyncio.run(keep_it())
    (kept_root,) = sandboxes.glob("unit__env-*/root")
    assert (kept_root / "app" / "e").read_text() == "evidence\n"
    unmount_disk(kept_root)
    (kept_root.parent / "disk.img").unlink()  # a kept disk holds its preallocated blocks until removed


def test_missing_bubblewrap_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SystemExit) as stopped:
        LocalEnvironment.preflight()
    message = str(stopped.value.code)
    assert "apt-get install bubblewrap" in message and "\n" not in message
    # Every sandbox needs nft for its table: refused when built (support checks report it), not at start.
    with pytest.raises(RuntimeError, match="apt-get install nftables"):
        make_env(tmp_path, network=NetworkMode.NO_NETWORK)
    for tool in ("nft", "ip"):
        (tmp_path / tool).symlink_to(shutil.which(tool, path=os.defpath + ":/usr/sbin:/sbin"))
    with pytest.raises(SandboxUnavailableError, match="apt-get install bubblewrap"):
        asyncio.run(make_env(tmp_path, network=NetworkMode.NO_NETWORK).start(force_build=False))


def test_gpus_declared_absent_without_device_nodes_and_passed_through_with_them(tmp_path):
    if gpu_device_nodes():
        pytest.skip("this host has GPUs")
    assert make_env(tmp_path).capabilities.gpus is False
    trial_paths = TrialPaths(tmp_path / "trial")
    with pytest.raises(RuntimeError, match="GPU"):
        LocalEnvironment(
            environment_dir=tmp_path,
            environment_name="gpu",
            session_id="gpu",
            trial_paths=trial_paths,
            task_env_config=EnvironmentConfig(gpus=1),
        )
    fake_dev = tmp_path / "dev"
    fake_dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "null"):
        (fake_dev / name).touch()
    nodes = gpu_device_nodes(fake_dev)
    assert gpu_count(nodes) == 2
    tools = HostTools(bwrap="bwrap", nsenter="nsenter", setpriv="setpriv", bash="bash")
    argv = holder_command(tools, tmp_path / "root", [], nodes, info_fd=3, seccomp_fd=4, caps=[])
    assert argv.count("--dev-bind") == 4 and str(fake_dev / "nvidiactl") in argv


def test_a_command_whose_exit_wakeup_is_lost_still_returns_and_says_so(tmp_path):
    # The event loop loses the registration of every pidfd, as it did when a neighbour's closed fd left a stale key
    # in its selector under the pidfd's number: the command's exit is never reported by the loop.
    logger, handler = listed_logger("lost")

    async def scenario(env):
        loop = asyncio.get_running_loop()
        add_reader = loop.add_reader

        def losing(fd, callback, *args):
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:[pidfd]":
                add_reader(fd, callback, *args)

        loop.add_reader = losing  # type: ignore[assignment, method-assign]  # a stand-in of the same shape
        try:  # the command outlives the first look at its exit (which would find it with no pidfd involved)
            return await asyncio.wait_for(env.exec("sleep 1; exit 3"), 30)
        finally:
            loop.add_reader = add_reader  # type: ignore[method-assign]

    assert in_env(make_env(tmp_path, logger=logger), scenario).return_code == 3
    assert any("found by the periodic check" in message for message in handler.messages), handler.messages


def test_a_holder_that_fails_to_start_is_started_again_and_the_sandbox_works(tmp_path, monkeypatch, caplog):
    """bubblewrap reads the host's mount table while other sandboxes change it: once in a full suite run it did not
    find its own bind there, and a campaign's trial failed as the machine's. A failed start leaves nothing behind,
    so the holder is started again, up to HOLDER_STARTS times; then the failure is the machine's (not a score).
    Here the first starts fail as that one did (a bind bubblewrap cannot find), then the real holder starts."""
    from ptbench.errors import InfrastructureError
    from ptbench.sandbox import local
    from ptbench.sandbox.proc.process import Holder, HolderStartError

    real_start = Holder.start
    failures = {"left": local.HOLDER_STARTS - 1}

    async def flaky_start(*args, **kwargs):
        if failures["left"] > 0:
            failures["left"] -= 1
            raise HolderStartError('bubblewrap failed to start the sandbox: Unable to find "/newroot/x" in mount table')
        return await real_start(*args, **kwargs)

    monkeypatch.setattr(Holder, "start", flaky_start)
    with caplog.at_level(logging.WARNING):
        assert in_env(make_env(tmp_path), lambda env: ok(env, "echo started")).strip() == "started"
    assert failures["left"] == 0 and sum("starting it again" in r.message for r in caplog.records) == 2

    failures["left"] = local.HOLDER_STARTS  # every start fails: the machine's failure, and nothing is left
    with pytest.raises(InfrastructureError, match="mount table"):
        in_env(make_env(tmp_path / "again"), lambda env: ok(env, "true"))
    assert list((tmp_path / "again" / "sandboxes").glob("*")) == []
