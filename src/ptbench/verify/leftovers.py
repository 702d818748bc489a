"""The processes an agent left running in its environment, told from the environment's own by how the kernel made
them (never by when), and stopped before the hand-off record (`ptbench handoff-record --stop-others`).

Seen from inside the environment's PID namespace, with the pid, parent and session of /proc/PID/stat:
- **The local sandbox** (bwrap --unshare-pid): pid 1 is bwrap's init and pid 2 the holder (`sleep infinity`), made
  by pid 1 before any command enters. Commands enter through nsenter, whose process is outside: they have parent 0.
  So do their sessions (each command's session leader is its nsenter, outside: session 0), as pid 1's (bwrap's
  session, outside: 0). An orphan is reparented to pid 1 and keeps session 0: it differs from the holder in its pid
  alone.
- **A container** (measured: podman 4.3 with runc): pid 1 is the CMD (Harbor's `sh -c "sleep infinity"`, whose
  child `sleep` was pid 6: 2 to 5 were the engine's own short-lived processes, gone by then) or, with `--init`, an
  init (catatonit; docker-init/tini alike, not measured here: no Docker daemon) whose child is the CMD. pid 1 leads
  session 1, and what it starts stays in it. Every `exec` leads a session of its own (runc calls setsid), with
  parent 0; an orphan keeps its session, and a setsid'd daemon makes one.

The environment's own are therefore pid 1, pid 2 when its parent is pid 1, and every process of session 1 when pid
1 leads it. An agent's process can be none of them:
- pid 2 is handed out once: a namespace's pids are allocated in order from 1, and on wrapping at pid_max they start
  again at 300 (the kernel's RESERVED_PIDS), never at 2. The first process made in the namespace gets it, before any
  command entered: the holder in the sandbox (whose death ends the namespace), a process of the engine elsewhere,
  which has parent 0 when it entered from outside (a process whose parent is outside the namespace is reparented
  outside, never to pid 1). Only a chosen pid (ns_last_pid, clone3's set_tid) could be 2 later: that needs
  CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE over the namespace, which neither the sandbox nor a container engine's
  default set grants.
- A session is joined only by being forked inside it; setsid makes a new one, numbered by the caller's own pid.
  What an agent starts descends from an entered command, outside session 1.
Nothing of a process that its own code can change (its argv, environment, name) counts: a look-alike of the holder
(`sleep infinity`, its environment) is stopped. What the rule cannot close: a process allowed to ptrace pid 1 or 2
(same user, no Yama) can make them do its writing; no reading of the process table tells that apart.

The rule spares nothing else, so a cloud provider's own processes inside the container (an exec or file daemon
that is not pid 1's session, started later through its own exec) would be stopped and the artifact download broken.
The hook therefore stops processes only when asked to: by `--stop-others`, or by $PTBENCH_STOP_OTHERS, which `ptbench
run` sets on the local environment, docker and podman (`run/jobs.py`) and exported tasks pass from the host
(`run/export.py`). On a VM sandbox (E2B's Firecracker) the hook finds the host's own PID namespace and stops nothing.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
INIT_PID_NAMESPACE = 0xEFFFFFFC
"""The kernel's inode number of the initial PID namespace (PROC_PID_INIT_INO): the host's own."""
_ROUNDS = 50
"""How often the kill is repeated (children forked meanwhile, a victim's fork in flight), 50 ms apart."""


@dataclass(frozen=True)
class Process:
    """One live process of /proc/PID/stat, as this PID namespace numbers it (0: outside it)."""

    parent: int
    session: int


def environment_own(processes: Mapping[int, Process], me: int) -> set[int]:
    """The pids to spare: the environment's own (module docstring), `me` and its ancestors."""
    own = {1}
    if (second := processes.get(2)) is not None and second.parent == 1:
        own.add(2)
    if (first := processes.get(1)) is not None and first.session == 1:
        own |= {pid for pid, process in processes.items() if process.session == 1}
    pid = me
    while pid > 1 and pid not in own:
        own.add(pid)
        pid = processes[pid].parent if pid in processes else 0
    return own


def read_processes(proc: Path = PROC) -> dict[int, Process]:
    """Each live process under `proc` (not a zombie: its parent reaps it, a SIGKILL cannot), by pid."""
    found = {}
    for name in os.listdir(proc):
        if name.isdigit():
            try:
                line = (proc / name / "stat").read_bytes()
                fields = line[line.rindex(b")") + 2 :].split()
                if fields[0] not in (b"Z", b"X"):
                    found[int(name)] = Process(parent=int(fields[1]), session=int(fields[3]))
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    return found


def stop_other_processes() -> int | None:
    """SIGKILL every process of this PID namespace but the environment's own, this one and its ancestors, until
    none is left; how many were killed, or None in the host's own PID namespace (where it kills nothing)."""
    if _pid_namespace() == INIT_PID_NAMESPACE:
        return None
    killed = 0
    for _ in range(_ROUNDS):
        processes = read_processes()
        keep = environment_own(processes, os.getpid())
        victims = [pid for pid in processes if pid not in keep]
        if not victims:
            break
        for victim in victims:
            try:
                os.kill(victim, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    return killed


def _pid_namespace() -> int:
    return os.stat(PROC / "self" / "ns" / "pid").st_ino
