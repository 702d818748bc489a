"""What the host offers the local sandbox: the tools it needs, GPU device nodes, and ptbench's own files."""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ptbench.errors import UserError

_GPU_INDEXED_NODE = re.compile(r"^nvidia\d+$")


class SandboxUnavailableError(UserError):
    """The host cannot run the local environment (a tool is missing or we are not root)."""


@dataclass(frozen=True)
class HostTools:
    """Absolute host paths of the programs the sandbox is built from."""

    bwrap: str
    nsenter: str
    setpriv: str
    bash: str
    slirp4netns: str = "slirp4netns"


def find_tools() -> HostTools:
    """Locate bwrap, the util-linux helpers and slirp4netns; a one-line SandboxUnavailableError says how to
    fix a gap."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailableError(
            "the local environment needs bubblewrap (bwrap), which is not installed: apt-get install bubblewrap"
        )
    found = {name: shutil.which(name) for name in ("nsenter", "setpriv", "bash")}
    missing = sorted(name for name, path in found.items() if path is None)
    if missing:
        raise SandboxUnavailableError(
            f"the local environment needs {', '.join(missing)}, not found: apt-get install util-linux bash"
        )
    slirp4netns = shutil.which("slirp4netns")
    if slirp4netns is None:
        raise SandboxUnavailableError(
            "the local environment needs slirp4netns (the public network), not found: apt-get install slirp4netns"
        )
    if os.geteuid() != 0:
        raise SandboxUnavailableError("the local environment must run as root (it joins sandboxes with nsenter)")
    return HostTools(bwrap=bwrap, slirp4netns=slirp4netns, **{name: str(path) for name, path in found.items()})


def gpu_device_nodes(dev: Path = Path("/dev")) -> list[Path]:
    """Every /dev/nvidia* node (GPUs, control devices, UVM); empty on a host without NVIDIA GPUs."""
    return sorted(dev.glob("nvidia*"))


def gpu_count(nodes: list[Path]) -> int:
    """How many GPUs the nodes describe (/dev/nvidia0, /dev/nvidia1, ...)."""
    return sum(1 for node in nodes if _GPU_INDEXED_NODE.match(node.name))


def ptbench_paths() -> list[str]:
    """Host directories that make ptbench runnable inside: the interpreter prefix, the venv, an editable source.

    They are bound read-only at their host paths, so console scripts' shebangs and the venv's
    interpreter symlink keep working unchanged.
    """
    import ptbench

    paths = [os.path.abspath(sys.base_prefix), os.path.abspath(sys.prefix)]
    import_root = str(Path(ptbench.__file__).resolve().parent.parent)
    paths.append(import_root)
    return minimal_cover(paths)


def minimal_cover(paths: list[str]) -> list[str]:
    """The paths without duplicates and without any path that lies inside another one of them."""
    unique = sorted(set(paths), key=len)
    kept: list[str] = []
    for path in unique:
        if not any(is_within(path, outer) for outer in kept):
            kept.append(path)
    return kept


def is_within(path: str, outer: str) -> bool:
    """Whether `path` is `outer` or lies below it (plain string paths, no filesystem access)."""
    return path == outer or path.startswith(outer.rstrip("/") + "/")
