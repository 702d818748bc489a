"""The container test's base image, started early: as soon as the session has collected the podman test, one test
process starts `scripts/podman/base-image --from-venv` in the background, so that its minutes of downloads and disk
writes (debootstrap, then the import of the venv's ~5 GB; little CPU) overlap the suite's first files instead of
holding a worker when the test's fixture gets to it. The fixture runs the same script, which waits on the script's
lock until the early build is done and then finds the image up to date (or builds it, with its output shown, when the
early build failed). The early build's output goes to a log in the temp dir; it runs to its end even when the
session stops first (a few minutes, then the image is cached for the next run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BASE_IMAGE = HERE.parents[1] / "scripts" / "podman" / "base-image"
CONTAINERS_CONF = HERE.parents[1] / "scripts" / "podman" / "containers.conf"


def can_build() -> bool:
    """What the base image needs (the test itself skips without it)."""
    return os.geteuid() == 0 and all(shutil.which(tool) for tool in ("podman", "debootstrap", "runc", "flock"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the early build once per session when the container test is selected (after -k and marks): in the first
    xdist worker (every worker collects the same items), or in the only process without xdist."""
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    if not can_build() or not any(item.path.parent == HERE for item in session.items):
        return
    log = Path(tempfile.gettempdir()) / f"ptbench-base-image-early-{os.getpid()}.log"
    with log.open("wb") as out:
        subprocess.Popen(
            [str(BASE_IMAGE), "--from-venv", sys.prefix],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a test's signals to its process group never reach it
        )


@pytest.fixture(scope="module")
def engine() -> Iterator[None]:
    """podman configured by the project's containers.conf, and the compose front end on PATH."""
    if os.geteuid() != 0 or not (shutil.which("podman") and shutil.which("debootstrap") and shutil.which("runc")):
        pytest.skip("needs root, podman, runc and debootstrap (scripts/setup-venv installs them as root)")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CONTAINERS_CONF", str(CONTAINERS_CONF))
        env.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # podman-compose
        yield
