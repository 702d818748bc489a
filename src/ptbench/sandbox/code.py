"""A local sandbox for hostile code: bubblewrap namespaces plus resource limits.

The command runs with its own mount, pid, network, ipc and uts namespaces and a user namespace of
its own, seeing read-only only the system's shared libraries (/lib, /usr/lib, ...) and the paths
it is given, here the verifier's own base interpreter, its standard library and libpython: no
/usr/local, no venv, and every site-packages or dist-packages dir in sight masked by an empty
read-only tmpfs. A size-capped private tmpfs is its only writable place; the environment is
cleared; rlimits cap address space, CPU time, processes, file size and open files (set by prlimit
inside the user namespace, so the process count is the sandbox's own). Run as root, bwrap mounts
with root's rights (the interpreter may live under /root), then the command drops to `nobody`
(root ignores the process limit) in a new user namespace. Killing the returned process kills
everything inside.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass

from ptbench.errors import UserError
from ptbench.sandbox.host import find_program

NOBODY = 65534
_LIBRARY_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64")
_PACKAGE_DIRS = ("site-packages", "dist-packages")


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one sandboxed process tree."""

    wall_seconds: float = 10.0
    cpu_seconds: int = 10
    memory_bytes: int = 1 << 30
    processes: int = 16
    file_bytes: int = 8 << 20
    tmpfs_bytes: int = 16 << 20
    open_files: int = 64


@functools.cache
def _package_dirs(roots: tuple[str, ...]) -> tuple[str, ...]:
    """Every site-packages or dist-packages dir under `roots` (walked once per process: /usr/lib is large)."""
    found = []
    for root in roots:
        for parent, dirs, _ in os.walk(root):
            for name in [name for name in dirs if name in _PACKAGE_DIRS]:
                found.append(os.path.join(parent, name))
                dirs.remove(name)
    return tuple(found)


def _tool(name: str, search: str | None = "/usr/bin:/bin") -> str:
    """A program the sandbox is built from (those run inside are system ones, whose libraries are bound)."""
    return find_program(name, "the code sandbox", search)


def sandbox_argv(command: list[str], limits: SandboxLimits, visible: list[str]) -> list[str]:
    """The argv that runs `command` in the sandbox, where the paths `visible` are bound read-only at their place."""
    root = os.geteuid() == 0
    prlimit = _tool("prlimit")
    helpers = [_tool("setpriv"), _tool("unshare")] if root else []
    namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if not root:
        namespaces.append("--unshare-user-try")  # as root, the command makes its own (below)
    argv = [_tool("bwrap", search=None), *namespaces, "--die-with-parent", "--new-session"]
    libraries = tuple(path for path in _LIBRARY_DIRS if os.path.isdir(path) and not os.path.islink(path))
    for path in _LIBRARY_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
    for path in [*libraries, prlimit, *helpers, *visible]:
        argv += ["--dir", os.path.dirname(path), "--ro-bind", path, path]  # --dir: parents open to all, not 0700
    for path in _package_dirs(libraries + tuple(visible)):
        argv += ["--tmpfs", path, "--remount-ro", path]
    argv += [
        "--proc", "/proc", "--dev", "/dev",
        "--perms", "1777", "--size", str(limits.tmpfs_bytes), "--tmpfs", "/tmp",
        "--remount-ro", "/", "--chdir", "/tmp",
        "--clearenv", "--setenv", "HOME", "/tmp", "--",
    ]
    if root:
        setpriv, unshare = helpers
        argv += [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--no-new-privs", "--",
                 unshare, f"--map-user={NOBODY}", f"--map-group={NOBODY}", "--"]
    argv += [
        prlimit, f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_seconds}", f"--nproc={limits.processes}",
        f"--fsize={limits.file_bytes}", f"--nofile={limits.open_files}", "--core=0", "--",
    ]
    return argv + command


def python_argv(code: str, limits: SandboxLimits) -> list[str]:
    """Run Python source `code` in the sandbox with the verifier's own base interpreter and its stdlib only."""
    # the binary behind a venv's python, which needs no pyvenv.cfg
    python = os.path.realpath(sys._base_executable)  # type: ignore[attr-defined]
    bases = {"installed_base": sys.base_prefix, "installed_platbase": sys.base_exec_prefix,
             "base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    visible = [python, *sorted({sysconfig.get_path(name, vars=bases) for name in ("stdlib", "platstdlib")})]
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        visible.append(os.path.join(sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")))
    return sandbox_argv([python, "-I", "-S", "-c", code], limits, visible)


def self_check(limits: SandboxLimits) -> None:
    """Run a trivial program in the sandbox; a sandbox that cannot start here is a UserError saying why."""
    argv = python_argv("print('sandbox-ok')", limits)
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise UserError("the code sandbox did not start within 60s") from None
    if result.stdout.strip() != "sandbox-ok":
        reason = (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[-1]
        raise UserError(f"the code sandbox does not work on this machine: {reason}")
