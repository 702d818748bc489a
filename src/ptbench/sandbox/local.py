"""`LocalEnvironment`: Harbor environment type "local", running a task as processes in a bubblewrap sandbox.

Use it with `harbor run -e ptbench.sandbox:LocalEnvironment` (its one import path) or `import_path` in a JobConfig.
Options (`--ek key=value` or `environment.kwargs`): `sandbox_dir` (base dir of environment roots,
default $PTBENCH_SANDBOX_DIR or <tmp>/ptbench-sandboxes; root's alone), `ro_paths` (extra host paths
bound read-only, comma-separated or a list), `pids_limit`, `disk` ("image": the sandbox's writable root is a
loop-mounted ext4 image of the task's storage_mb, default 10 GiB; "host": a plain host dir, no cap),
`max_download_files` / `max_download_mib` (what the downloads out of the sandbox may bring to the host: entries per
download, and apparent bytes of all of them together, default the sandbox's storage), `host_disk_reserve_mib` (what
the host's filesystem keeps free beside the preallocated sandbox disks: a sandbox that does not fit does not start,
default 1024; disk.py), `forward_ports` (ports of the host's 127.0.0.1 the
sandbox reaches at the same port of its own 127.0.0.1, e.g. a model API; see forward.py), `forward_tasks` and
`mount_tasks` (a port, a mount target -> the task dirs whose trials get it; the others do not), `egress_hosts`
(name=address pairs a sandbox's egress proxy resolves itself, as /etc/hosts would; egress.py), `rootless` (true
forces the mode chosen when not root: rootless.py), `activity_names` (a
regex of the benchmarks' file names and hub ids the activity record keeps apart: recorder.py; `ptbench run` passes
the integrity checks' own). Of the
task's Dockerfile, WORKDIR, ENV, USER, COPY and the users it creates are honoured, RUN steps are not run, and what
cannot be honoured is refused (image.py); the sandbox offers the host's /usr, /etc, /opt, ptbench's own Python
environment and the agent CLIs of `ptbench agents install` (on PATH), read-only, less the benchmark test data
packages ship (hidden from every environment but a separate verifier's: masks.py), in the agent's environment
behind decoy files whose opens the host records (decoys.py).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities, EnvironmentResourceCapabilities
from harbor.models.task.config import EnvironmentConfig, NetworkPolicy
from harbor.models.trial.config import ResourceMode
from harbor.models.trial.paths import EnvironmentPaths, TrialPaths
from harbor.utils.path_filter import filter_paths_by_patterns

from ptbench.files import write_model_json
from ptbench.sandbox.fs import collection
from ptbench.sandbox.fs import files as sandbox_files
from ptbench.sandbox.fs.decoys import RECORD_FILE, DecoyWatch, write_record
from ptbench.sandbox.fs.disk import DEFAULT_HOST_RESERVE, check_room, find_disk_tools, mount_disk, storage_bytes
from ptbench.sandbox.fs.layout import (
    READY,
    Bind,
    holder_command,
    login_profile,
    prepare_root,
    read_only_binds,
)
from ptbench.sandbox.fs.masks import is_separate_verifier, masked_dirs
from ptbench.sandbox.fs.roots import EnvDir, base_dir, sweep_every_base
from ptbench.sandbox.guarantees import table as guarantee_table
from ptbench.sandbox.host import (
    HostTools,
    SandboxUnavailableError,
    find_tools,
    gpu_count,
    gpu_device_nodes,
    is_within,
    ptbench_paths,
    sandbox_path,
)
from ptbench.sandbox.image.image import copy_into, load_image
from ptbench.sandbox.net.egress import SandboxEgress, hand_to_verifier
from ptbench.sandbox.net.firewall import filter_tool
from ptbench.sandbox.net.forward import FORWARD_DIR, HostRelay
from ptbench.sandbox.net.network import SandboxNetwork, route_tool
from ptbench.sandbox.options import LocalOptions
from ptbench.sandbox.proc import gpus
from ptbench.sandbox.proc import seccomp as sandbox_seccomp
from ptbench.sandbox.proc.exec import (
    DEFAULT_PATH,
    HolderBoundingSet,
    SandboxUser,
    capability_set,
    clean_environment,
    exec_command,
)
from ptbench.sandbox.proc.limits import EnforcedLimits, enforced_controllers, task_limits
from ptbench.sandbox.proc.process import Holder, HolderStartError, run_command
from ptbench.sandbox.proc.spawn import Preexec, Spawner
from ptbench.sandbox.proc.usage import write_usage
from ptbench.sandbox.record.activity import VERIFIER_PLACES
from ptbench.sandbox.record.notes import note_ignored_installs
from ptbench.sandbox.record.recorder import ActivityRecorder
from ptbench.sandbox.record.recorder import hand_to_verifier as hand_activity
from ptbench.sandbox.record.recorder import write_record as write_activity
from ptbench.sandbox.rootless import (
    DiskWatch,
    check_user,
    is_rootless,
    no_new_privs,
    pids_prologue,
    user_problem,
)
from ptbench.tinker_meter import RELAY_FILE, RelayRecord

ENVIRONMENT_TYPE = "local"
HOLDER_STARTS = 3
"""Starts of a sandbox's holder before its failure is the machine's, for the trial to be retried: bubblewrap reads
the mount table while other sandboxes mount and unmount their disks, and once in a full suite run it did not find
its own bind there ("Unable to find .../etc/passwd in mount table")."""


def _chain(*steps: Preexec) -> Preexec:
    """Several pre-exec steps as one."""

    def run_steps() -> None:
        for step in steps:
            step()

    return run_steps


class LocalEnvironment(BaseEnvironment):
    """A Harbor environment backed by a bubblewrap sandbox with a private root on this machine."""

    _persistent_env: dict[str, str]  # BaseEnvironment's: every command's variables

    def __init__(
        self,
        environment_dir: Path,
        environment_name: str,
        session_id: str,
        trial_paths: TrialPaths,
        task_env_config: EnvironmentConfig,
        **kwargs: Any,
    ) -> None:
        options, kwargs = LocalOptions.split(kwargs)  # the local environment's own options (options.py), once
        # Read by the capability validators inside BaseEnvironment.__init__.
        self._gpu_nodes = gpu_device_nodes()
        self._given_gpus = options.gpu_indices  # an allocation (Slurm's, a campaign's), else the pool's
        self._gpus: list[str] = []  # this sandbox's GPUs while it runs
        self._rootless = is_rootless(options.rootless)  # rootless.py: no loop-mounted image, a disk watch instead
        self._disk_image = options.disk == "image" and not self._rootless
        self._watch_disk = options.disk == "image" and self._rootless
        self._disk_watch: DiskWatch | None = None
        self._max_download_files = options.max_download_files
        self._sandbox_base = base_dir(options.sandbox_dir)
        self._ro_binds = read_only_binds(ptbench_paths() + options.ro_paths)
        self._path_first = sandbox_path()
        self._image = load_image(environment_dir, self._ro_binds, {"PATH": ":".join([*self._path_first, DEFAULT_PATH])})
        # A job's kwargs reach every trial; `forward_tasks` (port -> the task dirs that may reach it) narrows a port
        # to its own tasks, e.g. a job's local Tinker to its Tinker tasks.
        task_dir = os.path.realpath(environment_dir.parent)
        self._forward_ports = [
            port
            for port in options.forward_ports
            if task_dir in _real_paths(options.forward_tasks.get(str(port), [task_dir]))
        ]
        super().__init__(
            environment_dir=environment_dir,
            environment_name=environment_name,
            session_id=session_id,
            trial_paths=trial_paths,
            task_env_config=task_env_config,
            **kwargs,
        )
        filter_tool()  # every sandbox's connections go through the egress proxy (network.py)
        route_tool()
        if self._rootless and (problem := user_problem(self._image.user)) is not None:
            raise ValueError(problem)  # the Dockerfile's USER
        self._workdir = task_env_config.workdir or self._image.workdir
        self._persistent_env = {**self._image.env, **self._persistent_env}  # the task's and job's variables win
        # Harbor's log mounts (sources in the trial dir) are never bound: a host dir the sandbox can write is a
        # host dir it can plant symlinks in for Harbor's own host-side writes and reads. They are private dirs
        # of the sandbox instead, which Harbor downloads (`mounted=False`) through the no-follow copies.
        trial_dir = os.path.abspath(trial_paths.trial_dir)
        log_mounts = [mount for mount in self._mounts if is_within(os.path.abspath(mount["source"]), trial_dir)]
        self._log_dirs = sorted({mount["target"] for mount in log_mounts})
        # A job's mounts reach every trial (Harbor mounts per job); `mount_tasks` (mount target -> the task dirs that
        # may have it) narrows one to its own tasks, e.g. a benchmark's agent data to that benchmark's tasks.
        mine = [
            mount
            for mount in self._mounts
            if mount not in log_mounts and task_dir in _real_paths(options.mount_tasks.get(mount["target"], [task_dir]))
        ]
        self._binds = self._ro_binds + [self._mount_bind(mount) for mount in mine]
        for bind in self._ro_binds:
            if is_within(self._workdir, bind.target):
                raise ValueError(
                    f"the workdir {self._workdir} lies in {bind.target}, read-only in the local environment"
                )
            if is_within(str(self._sandbox_base), bind.target):
                raise ValueError(
                    f"sandbox_dir {self._sandbox_base} must not lie inside {bind.target}, which sandboxes see"
                )
        self._env_dir: EnvDir | None = None
        self._holder: Holder | None = None
        self._network: SandboxNetwork | None = None  # the egress proxy's listeners in the holder's namespace
        self._egress = SandboxEgress(self.network_policy, options.egress_hosts)
        self._relay: HostRelay | None = None  # the host side of forwarded ports
        self._tools: HostTools | None = None
        self._paths: sandbox_files.PathMap | None = None
        self._claimed_uids: set[int] = set()
        self._spawner: Spawner | None = None  # the confined thread that starts every command
        self._holder_binds: list[Bind] = []
        self._decoys: DecoyWatch | None = None  # the agent phase's decoys (decoys.py)
        self._activity: ActivityRecorder | None = None  # the agent phase's opens, execs and writes (recorder.py)
        self._activity_names = options.activity_names
        self._fresh = False  # no command has run since the holder started (then no process of the agent is left)
        # CPU and memory as Harbor resolves them (limit mode unless ignored), checked against what the host has.
        self._limits = task_limits(
            memory_mb=self._resource_limit_value("memory", auto_mode=ResourceMode.LIMIT),
            cpus=self._resource_limit_value("cpu", auto_mode=ResourceMode.LIMIT),
            storage_mb=self._effective_storage_mb,
            pids=options.pids_limit,
        )
        self._enforced: EnforcedLimits | None = None
        self._usage_recorded = False  # the agent phase's CPU seconds are in the trial dir (usage.py)
        self._storage = storage_bytes(self._effective_storage_mb)
        # One allowance for every download of this environment: its copies on the host never pass storage_mb.
        self._host_copies = sandbox_files.HostCopies(
            options.max_download_mib << 20 if options.max_download_mib is not None else self._storage
        )
        self._host_reserve = (
            options.host_disk_reserve_mib << 20 if options.host_disk_reserve_mib is not None else DEFAULT_HOST_RESERVE
        )

    @staticmethod
    def type() -> str:
        """Harbor's name for this environment type."""
        return ENVIRONMENT_TYPE

    @classmethod
    def preflight(cls, kwargs: dict[str, Any] | None = None) -> None:
        """Harbor's CLI calls this before queueing trials: stop at once when bubblewrap is missing."""
        super().preflight(kwargs)
        try:
            rootless = is_rootless(None)
            find_tools(rootless)
            sandbox_seccomp.program()
        except SandboxUnavailableError as exc:
            raise SystemExit(str(exc)) from None
        if rootless:  # what holds here differs from root mode's: say so before any trial
            print(guarantee_table(rootless), file=sys.stderr)

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        """No-network; allowlists of names, wildcards and IPv4 addresses and ranges; switching policies between
        phases (every phase runs behind the egress proxy); logs are downloaded, never mounted; GPUs only when this
        host has NVIDIA device nodes."""
        return EnvironmentCapabilities(
            gpus=gpu_count(self._gpu_nodes) > 0,
            disable_internet=True,
            mounted=False,
            network_allowlist=True,
            network_allowlist_hostnames=True,
            network_allowlist_wildcard_hostnames=True,
            network_allowlist_ipv4_addresses=True,
            network_allowlist_ipv4_cidrs=True,
            dynamic_network_policy=True,
        )

    async def _apply_network_policy(self, network_policy: NetworkPolicy) -> None:
        """A phase's policy (Harbor switches before the agent and the verifier run): the proxy decides by it."""
        self._egress.apply(network_policy)

    @classmethod
    def resource_capabilities(cls) -> EnvironmentResourceCapabilities:
        """CPU and memory limits where this host lets us create cgroups for them; never reservations."""
        enforced = enforced_controllers()
        return EnvironmentResourceCapabilities(cpu_limit="cpu" in enforced, memory_limit="memory" in enforced)

    def _validate_definition(self) -> None:
        """Nothing is required (a Dockerfile is optional, and what of it cannot be honoured is refused in the
        constructor), but multi-container tasks cannot be honoured."""
        if (self.environment_dir / "docker-compose.yaml").exists():
            raise ValueError("the local environment cannot run multi-container tasks (environment/docker-compose.yaml)")

    def _validate_gpu_support(self) -> None:
        super()._validate_gpu_support()
        available = gpu_count(self._gpu_nodes) if self._given_gpus is None else len(self._given_gpus)
        if self._effective_gpus > available:
            raise RuntimeError(f"Task requires {self._effective_gpus} GPU(s) but this host has {available}")

    @staticmethod
    def _mount_bind(mount: dict[str, Any]) -> Bind:
        if mount.get("type") != "bind":
            raise ValueError(f"the local environment supports only bind mounts, not {mount.get('type')!r}")
        return Bind(os.path.abspath(mount["source"]), mount["target"], bool(mount.get("read_only")))

    async def start(self, force_build: bool) -> None:
        """Create the private root and start the holder process; force_build has nothing to rebuild."""
        tools = find_tools(self._rootless)
        disk_tools = find_disk_tools() if self._disk_image else None
        seccomp = sandbox_seccomp.program()
        await asyncio.to_thread(sweep_every_base, self._sandbox_base)
        env_dir = await asyncio.to_thread(EnvDir, self._sandbox_base, self.session_id)
        binds = self._binds
        try:
            await self._take_gpus()
            if not is_separate_verifier(self.session_id, self.trial_paths.trial_dir):  # the agent's: see masks.py
                self._decoys = await asyncio.to_thread(DecoyWatch, env_dir.path, masked_dirs(binds), binds)
                if self._decoys.fd >= 0:
                    asyncio.get_running_loop().add_reader(self._decoys.fd, self._decoys.drain)
                binds = [*binds, *self._decoys.binds]
                decoy_dirs = [bind.target for bind in self._decoys.binds]
                self._activity = ActivityRecorder(
                    [*VERIFIER_PLACES, *decoy_dirs], held=decoy_dirs, names=self._activity_names
                )
            if disk_tools is not None:
                await asyncio.to_thread(
                    mount_disk, disk_tools, env_dir.path, env_dir.root, self._storage, self._host_reserve
                )
            elif self._watch_disk:  # no image to preallocate: the room is checked, not promised
                check_room(self._storage, self._host_reserve, env_dir.base)
            if self._forward_ports:
                self._relay = HostRelay(env_dir.path / "forward", self._forward_ports)
                await self._relay.start()
                if not is_separate_verifier(self.session_id, self.trial_paths.trial_dir):  # the agent's address
                    write_model_json(
                        Path(self.trial_paths.trial_dir) / RELAY_FILE,
                        RelayRecord(source=self._relay.source, ports=self._forward_ports),
                    )
                binds = [*binds, Bind(str(self._relay.directory), FORWARD_DIR, read_only=True)]
            profile = login_profile(env_dir.path, self._path_first)
            binds = [*binds, profile] if profile is not None else binds
            binds = [*binds, *self._image.users.files(env_dir.path)]
            prepare_root(env_dir.root, self._workdir, self._log_dirs, [bind.target for bind in binds])
            # into the root alone, before any mount: what lands under a mount is hidden by it, as in Docker
            await asyncio.to_thread(copy_into, sandbox_files.PathMap(env_dir.root, []), self._image.copies)
            self._enforced = enforced = await asyncio.to_thread(EnforcedLimits.create, env_dir.path.name, self._limits)
            # Commands get the seccomp filter (and on cgroup v1 the cgroups) from their spawner thread; the
            # holder gets the filter from bwrap, which needs the denied syscalls to build the sandbox.
            thread_steps = [enforced.join] if enforced.joins_by_thread else []
            thread_steps += [no_new_privs] if self._rootless else []
            self._spawner = Spawner(self.session_id, [*thread_steps, sandbox_seccomp.installer()])
            await self._spawner.ready()
            self._env_dir, self._tools, self._holder_binds = env_dir, tools, binds
            verifier = is_separate_verifier(self.session_id, self.trial_paths.trial_dir)
            self._egress.open(Path(self.trial_paths.trial_dir), "verifier" if verifier else "agent")
            await self._start_holder(seccomp)
            if self._watch_disk:
                self._disk_watch = DiskWatch(
                    env_dir.root, self._storage, Path(self.trial_paths.trial_dir), self._kill_holder
                )
                self._disk_watch.start()
            if self._activity is not None and self._holder is not None:
                await asyncio.to_thread(self._activity.attach, self._holder.child_pid)
        except BaseException:
            self._close_decoys()
            await self._stop_processes()
            await self._finish_activity()
            await self._release_limits()
            self._release_gpus()
            self._env_dir = None
            await asyncio.to_thread(env_dir.remove)
            raise
        self._paths = sandbox_files.PathMap(env_dir.root, self._binds)
        if self._image.unset:
            self.logger.debug(f"left unset (paths of the image this host lacks): {', '.join(self._image.unset)}")
        self.logger.debug(f"local environment {self.session_id} started in {env_dir.path}")
        note_ignored_installs(
            self.environment_dir / "Dockerfile", self.trial_paths.trial_dir, self.environment_name, self.logger
        )
        await self._upload_environment_dir_after_start()

    async def _take_gpus(self) -> None:
        """This sandbox's GPUs (the given ones, else a free set of the pool), named to its commands."""
        if self._effective_gpus <= 0:
            return
        if self._given_gpus is not None:
            self._gpus = self._given_gpus[: self._effective_gpus]
        else:
            self._gpus = await gpus.POOL.acquire(
                self._effective_gpus, self._gpu_nodes, os.path.abspath(self.trial_paths.trial_dir)
            )
        self._persistent_env = {**self._persistent_env, **gpus.visible_env(self._gpus)}

    def _release_gpus(self) -> None:
        if self._given_gpus is None and self._gpus:
            gpus.POOL.release(os.path.abspath(self.trial_paths.trial_dir))
        self._gpus = []

    async def _start_holder(self, seccomp: bytes) -> None:
        """The sandbox's processes on its root: the holder (fresh pid, ipc, uts and network namespaces), the
        egress proxy's listeners in its namespace, the forwarder of forwarded ports."""
        tools = self._tools
        assert tools is not None
        gpu_nodes = gpus.nodes_for(self._gpu_nodes, self._gpus) if self._gpus else []
        self._holder = holder = await self._started_holder(seccomp, gpu_nodes)
        self._network = await self._egress.attach(tools, holder.child_pid)
        if self._relay is not None:
            forwarder = await self.exec(self._relay.command(), user="root", timeout_sec=60)
            if forwarder.return_code != 0:
                raise RuntimeError(
                    f"could not forward ports {self._forward_ports} into the sandbox: "
                    f"{(forwarder.stderr or forwarder.stdout or '').strip()[-300:]}"
                )
        self._fresh = True

    async def _started_holder(self, seccomp: bytes, gpu_nodes: list[Path]) -> Holder:
        """The holder, started again after a failed start (which leaves nothing behind) up to HOLDER_STARTS times."""
        for attempt in range(1, HOLDER_STARTS):
            try:
                return await self._holder_started_once(seccomp, gpu_nodes)
            except HolderStartError as exc:
                self.logger.warning(f"{self.session_id}: {exc}; starting it again ({attempt} of {HOLDER_STARTS})")
                await asyncio.sleep(0.2 * attempt)
        return await self._holder_started_once(seccomp, gpu_nodes)

    async def _holder_started_once(self, seccomp: bytes, gpu_nodes: list[Path]) -> Holder:
        env_dir, tools, enforced = self._env_dir, self._tools, self._enforced
        assert env_dir is not None and tools is not None and enforced is not None
        return await Holder.start(
            lambda info_fd, seccomp_fd: holder_command(
                tools,
                env_dir.root,
                self._holder_binds,
                gpu_nodes,
                info_fd,
                seccomp_fd=seccomp_fd,
                caps=capability_set(),
                shm_bytes=self._limits.shm_bytes,
            ),
            READY,
            env_dir.holder_log,
            enforced.spawn_step if tools.rootless else _chain(enforced.spawn_step, HolderBoundingSet(capability_set())),
            seccomp_program=seccomp,
        )

    async def _end_agent_phase(self) -> None:
        """Before the verifier: end every process of the sandbox (its pid namespace ends with its init, and is
        waited for), then start a fresh holder on the same root. Files stay; /dev/shm (the holder's) starts empty."""
        holder, self._holder = self._holder, None
        network, self._network = self._network, None
        assert holder is not None  # upload_dir checked that it runs
        ended = await holder.stop()
        if network is not None:  # after the holder: the record of refused UDP is whole once its processes are gone
            await network.stop(ended)
        if not ended:
            raise RuntimeError(f"the processes of {self.session_id}'s agent phase did not end")
        if self._decoys is not None:  # the verifier sees its own /tests, and the record beside the agent's logs
            self._holder_binds = [bind for bind in self._holder_binds if bind not in self._decoys.tests_binds]
            self._close_decoys()
            await asyncio.to_thread(self._hand_record)
        await self._finish_activity()
        await self._start_holder(sandbox_seccomp.program())

    async def stop(self, delete: bool) -> None:
        """Kill every process of the sandbox; remove its root when delete, else keep it for inspection."""
        self._close_decoys()
        watch, self._disk_watch = self._disk_watch, None
        if watch is not None:
            await watch.close()
        await self._stop_processes()
        await self._finish_activity()
        await asyncio.to_thread(self._record_usage)  # an agent phase that no verifier ended (a timeout, say)
        await self._release_limits()
        self._release_gpus()
        self._egress.close()
        env_dir, self._env_dir = self._env_dir, None
        if env_dir is None:
            return
        if delete:
            await asyncio.to_thread(env_dir.remove)
        else:
            env_dir.keep()
            self.logger.info(f"kept the root of {self.session_id} at {env_dir.root}")

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        """Run `bash -c command` inside as the given (or default) user; all its processes die on timeout or cancel."""
        if self._holder is None or self._tools is None:
            raise RuntimeError(f"the local environment {self.session_id} is not running")
        self._check_alive()
        self._fresh = False
        named = self._resolve_user(user)
        who = self._image.users.resolve(self._image.user if named is None else named)  # the Dockerfile's USER
        if self._rootless:
            check_user(who.uid, who.name)
        elif not who.is_root and who.uid not in self._claimed_uids:
            await asyncio.to_thread(self._claim_for, who)
        enforced, spawner = self._enforced, self._spawner
        assert enforced is not None and spawner is not None
        argv = exec_command(
            self._tools,
            self._holder.child_pid,
            who,
            capability_set(),
            cwd or self._workdir,
            command,
            prologue=enforced.shell_prologue() + (pids_prologue(self._limits.pids) if self._rootless else ""),
        )
        environment = clean_environment(who, self._path_first, self._merge_env(env))
        preexec = None if enforced.joins_by_thread else enforced.join  # cgroup v2: per process only
        result = await run_command(
            spawner, argv, environment, timeout_sec or None, self._output_callback(), preexec, self.logger.warning
        )
        self._check_alive()
        return ExecResult(stdout=result.stdout, stderr=result.stderr, return_code=result.return_code)

    async def _kill_holder(self) -> None:
        """Stop every process of the sandbox (the disk watch's verdict); later commands say why."""
        if self._holder is not None:
            await self._holder.stop()

    def _check_alive(self) -> None:
        """A sandbox whose first process died (killed from inside, or by the OOM killer) ran nothing: say so."""
        if self._disk_watch is not None and self._disk_watch.message is not None:
            raise RuntimeError(self._disk_watch.message)
        if self._holder is not None and not self._holder.is_alive():
            raise RuntimeError(
                f"the sandbox of {self.session_id} died (its first process was killed); every process in it is gone"
            )

    def _record_usage(self) -> None:
        """Once, in the agent's environment, when its processes have ended: the CPU seconds they used."""
        trial_dir = Path(self.trial_paths.trial_dir)
        if self._usage_recorded or self._enforced is None or is_separate_verifier(self.session_id, trial_dir):
            return
        self._usage_recorded = True
        write_usage(trial_dir, self._enforced.cpu_seconds())

    async def _release_limits(self) -> None:
        """Once the holder is dead: kill anything left in the sandbox's cgroups and remove them."""
        enforced, self._enforced = self._enforced, None
        if enforced is None:
            return
        left = await asyncio.to_thread(enforced.close)
        if left:
            self.logger.warning(f"could not remove the cgroups of {self.session_id}: {', '.join(map(str, left))}")

    async def _stop_processes(self) -> None:
        """Kill the holder (and with it every process inside), then stop the proxy's listeners (finishing the record
        of refused UDP, which is whole only once no process is left to send) and the port relay."""
        holder, self._holder = self._holder, None
        network, self._network = self._network, None
        spawner, self._spawner = self._spawner, None
        relay, self._relay = self._relay, None
        ended = await holder.stop() if holder is not None else True
        await asyncio.gather(
            *([network.stop(ended)] if network is not None else []), *([relay.stop()] if relay is not None else [])
        )
        if spawner is not None:
            await asyncio.to_thread(spawner.close)

    def _claim_for(self, who: SandboxUser) -> None:
        """A non-root user's first command: give it the workdir (as a Dockerfile's chown would) and a home."""
        paths = self._require_paths()
        try:
            if self._workdir != "/":
                workdir = paths.locate(self._workdir)
                if not workdir.read_only:
                    sandbox_files.claim_tree(workdir, who.uid, who.gid)
            home = paths.locate(who.home)
            if who.home != "/" and not home.read_only:
                sandbox_files.ensure_owned_dir(home, who.uid, who.gid)
        except OSError as exc:  # the workdir was removed or replaced by a symlink: nothing safe to give
            self.logger.debug(f"could not prepare the sandbox for uid {who.uid}: {exc}")
        self._claimed_uids.add(who.uid)

    def _require_paths(self) -> sandbox_files.PathMap:
        if self._paths is None or self._holder is None:
            raise RuntimeError(f"the local environment {self.session_id} is not running")
        return self._paths

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        """Copy a host file into the sandbox (host-side; symlinks in the way are replaced, never followed)."""
        target = self._require_paths().locate(target_path)
        await asyncio.to_thread(sandbox_files.upload_file, Path(source_path), target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        """Copy a host dir's contents into a sandbox dir.

        Harbor uploads the tests just before the verifier runs. In a shared environment the agent's processes
        would still run beside it, and the agent may have written the verifier's log dir already (a reward.json of
        its own): every process of the sandbox is ended first (unless none ran since it started), then that dir is
        emptied."""
        paths = self._require_paths()
        target = paths.locate(target_dir)
        if target.env_path.rstrip("/") == str(EnvironmentPaths.tests_dir):
            if not self._fresh or self._decoys is not None:
                await self._end_agent_phase()
            await asyncio.to_thread(self._record_usage)
            await asyncio.to_thread(sandbox_files.empty_dir, paths.locate(str(EnvironmentPaths.verifier_dir)))
            self._egress.begin_verifier()
            # the agent's egress record (the trial's own, never one the agent wrote), for the verifier with its logs
            await asyncio.to_thread(hand_to_verifier, Path(self.trial_paths.trial_dir), paths)
            await asyncio.to_thread(hand_activity, Path(self.trial_paths.trial_dir), paths)
        await asyncio.to_thread(sandbox_files.upload_dir, Path(source_dir), target)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        """Copy a regular sandbox file to the host; a symlink anywhere on its path is refused."""
        source = self._require_paths().locate(source_path)
        await asyncio.to_thread(sandbox_files.download_file, source, Path(target_path), self._budget())

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        """Copy a sandbox dir's contents to the host (see `_collect`)."""
        await self._collect(source_dir, Path(target_dir), None)

    async def download_dir_with_exclusions(
        self, *, source_dir: str, target_dir: Path | str, exclude: list[str]
    ) -> None:
        """Harbor's artifact collection with tar's excludes, as the same host copy: no tar, so no host-side
        extraction that aborts at the first absolute link, expands sparse files or counts 200,000 files as one."""
        await self._collect(source_dir, Path(target_dir), sandbox_files.tar_excludes(exclude))

    async def download_dir_filtered(
        self,
        *,
        source_dir: str,
        target_dir: Path | str,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        protect: Sequence[str] | None = None,
    ) -> None:
        """Harbor's filtered log download (its glob semantics: a file is taken when `include` matches, unless
        `exclude` does, or when `protect` names it), as the same host copy instead of a tar."""
        kept = set(protect or [])

        def wanted(relative: str, is_dir: bool) -> bool:
            return (
                is_dir
                or relative in kept
                or bool(filter_paths_by_patterns([relative], include=include, exclude=exclude))
            )

        await self._collect(source_dir, Path(target_dir), wanted)

    async def _collect(self, source_dir: str, target: Path, wanted: sandbox_files.Selection | None) -> None:
        """Copy a sandbox dir to the host within one download's budget; special files are left out. Symlinks are
        copied as symlinks (never followed), except into Harbor's own trial files (agent/, verifier/), which Harbor
        reads by path. An artifact's copy (the verifier's only view of the sandbox) records when it is not whole."""
        source = self._require_paths().locate(source_dir)
        where = os.path.abspath(target)
        if is_within(where, os.path.abspath(self.trial_paths.artifacts_dir)):
            await asyncio.to_thread(
                collection.collect_dir, source, target, self._budget(), keep_symlinks=True, wanted=wanted
            )
            if self._decoys is not None and source.env_path.rstrip("/") == str(EnvironmentPaths.agent_dir):
                await asyncio.to_thread(write_record, target, self._decoys.record())  # what a verifier gets
            return
        keep_symlinks = not is_within(where, os.path.abspath(self.trial_paths.trial_dir))
        report = await asyncio.to_thread(
            sandbox_files.download_dir, source, target, self._budget(), keep_symlinks=keep_symlinks, wanted=wanted
        )
        if report.left_out:
            self.logger.warning(f"downloading {source_dir} left out {report.left_out} entries: {report.noted[:3]}")

    def _close_decoys(self) -> None:
        """End the decoys' watch; its final record goes beside Harbor's trial files."""
        decoys, self._decoys = self._decoys, None
        if decoys is None:
            return
        if decoys.fd >= 0:
            asyncio.get_running_loop().remove_reader(decoys.fd)
        write_record(Path(self.trial_paths.trial_dir), decoys.close())

    async def _finish_activity(self) -> None:
        """Once the agent phase's processes have ended: its activity record beside Harbor's trial files."""
        recorder, self._activity = self._activity, None
        if recorder is not None:
            record = await asyncio.to_thread(recorder.stop)
            await asyncio.to_thread(write_activity, Path(self.trial_paths.trial_dir), record)

    def _hand_record(self) -> None:
        """The trial's decoy record into the sandbox's agent log dir, for a verifier that runs here (no agent process
        is left)."""
        if self._paths is None:
            return
        try:
            sandbox_files.hand_over(
                Path(self.trial_paths.trial_dir) / RECORD_FILE,
                self._paths.locate(f"{EnvironmentPaths.agent_dir}/{RECORD_FILE}"),
            )
        except OSError as exc:
            self.logger.warning(f"could not hand the decoy record to the verifier: {exc}")

    def _budget(self) -> sandbox_files.TransferBudget:
        return sandbox_files.TransferBudget(files=self._max_download_files, host=self._host_copies)


def _real_paths(paths: list[str]) -> set[str]:
    """Paths with every symlink resolved, to compare task dirs."""
    return {os.path.realpath(path) for path in paths}
