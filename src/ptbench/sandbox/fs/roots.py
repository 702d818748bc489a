"""Where environment roots live: one base dir, one locked dir per environment, stale dirs swept away.

The base dir belongs to root alone (mode 0700, not a symlink, every directory above it writable only by
root or sticky): anyone else who could create, swap or write it could redirect root's removals. A
base dir that is not so is refused, never repaired. Layout: `<base>/<session>-<random>/{lock, state, holder.log,
disk.img, root/}` (the disk image mounted at root/, see disk.py). The owning process holds `lock` (a `filelock`
lock) for the environment's lifetime, so a dir whose lock can be taken belongs to a process that died (e.g.
`kill -9`): the next environment that starts kills what still runs on that root, unmounts it and removes the dir.
`state` says "live" once the owner holds the lock; a dir kept on purpose (`stop(delete=False)`) says "kept" there
and is never swept. Every base dir a sandbox uses is listed (`sweep_every_base`), so a sandbox's start sweeps them
all, not only its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import stat
import tempfile
import time
from pathlib import Path

from filelock import FileLock, Timeout

from ptbench.errors import UserError
from ptbench.files import read_untrusted, write_atomic
from ptbench.sandbox.fs.disk import unmount_disk
from ptbench.sandbox.fs.layout import root_bind
from ptbench.sandbox.fs.tree import remove_tree
from ptbench.settings import settings

_LIVE = b"live"
_KEPT = b"kept"


class UnsafeBaseDirError(UserError, ValueError):
    """The base dir of environment roots could be swapped or written by someone other than root."""


def base_dir(configured: str | None = None) -> Path:
    """The base dir of environment roots, created if missing and checked to be root's alone.

    The argument, else $PTBENCH_SANDBOX_DIR, else <tmp>/ptbench-sandboxes; UnsafeBaseDirError if
    anyone but root could swap or write it."""
    chosen = configured or settings().sandbox_dir or os.path.join(tempfile.gettempdir(), "ptbench-sandboxes")
    base = Path(os.path.abspath(chosen))
    _check_ancestors(base)
    if not base.parent.exists():
        os.makedirs(base.parent, 0o755)
        _check_ancestors(base)
    with contextlib.suppress(FileExistsError):
        os.mkdir(base, 0o700)
    return checked_base(base)


def checked_base(base: Path) -> Path:
    """`base` as it is, never created: UnsafeBaseDirError unless it is a directory of ours alone (mode 0700);
    OSError when it is not there."""
    _check_ancestors(base)
    info = os.lstat(base)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeBaseDirError(f"the sandbox base dir {base} is a symlink; refusing to follow it")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeBaseDirError(f"the sandbox base dir {base} is not a directory")
    if info.st_uid != os.geteuid():
        raise UnsafeBaseDirError(
            f"the sandbox base dir {base} is owned by uid {info.st_uid}, not by us: remove it or choose another"
        )
    if stat.S_IMODE(info.st_mode) != 0o700:
        raise UnsafeBaseDirError(
            f"the sandbox base dir {base} has mode {stat.S_IMODE(info.st_mode):04o}, not 0700: "
            "remove it or choose another"
        )
    return base


def _check_ancestors(base: Path) -> None:
    """Every existing directory above `base` (links resolved) must be root's, and writable by others only if sticky."""
    for ancestor in [Path(os.path.realpath(base.parent)), *Path(os.path.realpath(base.parent)).parents]:
        try:
            info = os.stat(ancestor)
        except FileNotFoundError:
            continue
        shared = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX
        if info.st_uid not in (0, os.geteuid()) or shared:
            raise UnsafeBaseDirError(
                f"the sandbox base dir {base} lies under {ancestor}, which is owned by uid {info.st_uid} or "
                "writable by others: choose a dir only root can change"
            )


def env_dir_prefix(session_id: str) -> str:
    """How the dirs of an environment session's roots begin (a random suffix follows)."""
    return (re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:80] or "env") + "-"


class EnvDir:
    """One environment's private directory under the base dir, locked while this object owns it."""

    def __init__(self, base: Path, name: str) -> None:
        self.base = base
        safe = env_dir_prefix(name)
        while True:
            with contextlib.suppress(FileExistsError):
                os.mkdir(base, 0o700)
            try:
                self.path = Path(tempfile.mkdtemp(prefix=safe, dir=base))
                break
            except FileNotFoundError:  # another process removed the empty base dir in between
                continue
        self._lock: FileLock | None = _dir_lock(self.path)
        self._lock.acquire()
        _write_state(self.path, _LIVE)

    @property
    def root(self) -> Path:
        """The directory bound as `/` inside the sandbox."""
        return self.path / "root"

    @property
    def holder_log(self) -> Path:
        """Where bubblewrap's own messages go (outside the sandbox root)."""
        return self.path / "holder.log"

    def remove(self) -> None:
        """Unmount its disk, delete the dir (never following symlinks inside it), then the base dir if it became
        empty."""
        # The lock goes last: a process killed midway leaves a dir that the next sweep still recognises.
        with contextlib.suppress(OSError):
            unmount_disk(self.root)
            remove_tree(self.root)
            self.holder_log.unlink(missing_ok=True)
            remove_tree(self.path)
        self._unlock()
        try:
            self.base.rmdir()
        except OSError:
            pass

    def keep(self) -> None:
        """Leave the dir on disk (its disk still mounted) for inspection and mark it so that sweeps leave it alone;
        `remove()` unmounts and deletes it."""
        if self._lock is not None:
            _write_state(self.path, _KEPT)
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def sweep_stale(base: Path, min_age: float = 0.0) -> list[Path]:
    """Remove environment dirs whose owner died without cleaning up (and that are at least `min_age` seconds old);
    returns what was removed."""
    removed: list[Path] = []
    try:
        candidates = list(base.iterdir())
    except (FileNotFoundError, NotADirectoryError):  # none yet, or the last environment just removed it as empty
        return removed
    for candidate in candidates:
        # its owner may remove it at any step: one lstat decides, and a lock that is gone is an owner that finished
        try:
            if not stat.S_ISDIR(os.lstat(candidate).st_mode):
                continue
            lock_info = os.lstat(candidate / "lock")
        except OSError:
            continue  # gone, or a dir whose creator has not made its lock yet
        if not stat.S_ISREG(lock_info.st_mode):
            continue  # not one of ours
        if min_age and time.time() - lock_info.st_mtime < min_age:
            continue
        lock = _dir_lock(candidate)
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            continue  # its owner is alive
        try:
            if _read_state(candidate) == _LIVE:
                _kill_leftovers(candidate / "root")
                with contextlib.suppress(OSError):
                    unmount_disk(candidate / "root")
                    remove_tree(candidate)
                    removed.append(candidate)
        finally:
            lock.release()
    return removed


FOREIGN_GRACE_SECONDS = 30.0


KNOWN_BASES = "/run/ptbench-sandbox-bases"
"""Where every base dir a sandbox used is listed: host-wide whatever TMPDIR a run has (a reboot empties /run, and
takes the mounts and loop devices with it); <tmp>/ptbench-sandbox-bases where /run is not there."""


def known_bases_dir() -> Path:
    """The list's dir (its user's alone, checked as a base dir is; an unprivileged user's own, in rootless mode)."""
    if os.geteuid() != 0:
        return base_dir(os.path.join(tempfile.gettempdir(), f"{os.path.basename(KNOWN_BASES)}-{os.geteuid()}"))
    folder = (
        KNOWN_BASES
        if os.path.isdir(os.path.dirname(KNOWN_BASES))
        else os.path.join(tempfile.gettempdir(), os.path.basename(KNOWN_BASES))
    )
    return base_dir(folder)


def sweep_every_base(current: Path) -> list[Path]:
    """Note `current` among the base dirs sandboxes use, then sweep every one still there: a killed run's leftovers
    (its processes, its disk's mount and loop device, its namespaces with them) go at the next sandbox start, whatever
    base dir that one uses. A listed dir that is gone is forgotten; one no longer safe (base_dir's checks) is left
    alone. Another base's dirs are swept once FOREIGN_GRACE_SECONDS old (a process that is setting one up, or
    sweeping it itself, is not raced)."""
    registry = known_bases_dir()
    name = hashlib.sha256(os.fsencode(current)).hexdigest()[:32]
    if not (registry / name).is_file():
        write_atomic(registry / name, os.fsencode(current), 0o600)
    removed: list[Path] = []
    for entry in registry.iterdir():
        try:
            listed = Path(os.fsdecode(read_untrusted(entry, 4096)))
        except (OSError, ValueError):
            continue
        if not listed.is_absolute():
            continue
        try:  # a listed base is looked at as it is, never made again: its run may be removing its whole tree
            checked = checked_base(listed)
        except FileNotFoundError:
            entry.unlink(missing_ok=True)
            continue
        except (UnsafeBaseDirError, OSError):
            continue
        removed += sweep_stale(checked, 0.0 if listed == current else FOREIGN_GRACE_SECONDS)
    return removed


def _dir_lock(env_dir: Path) -> FileLock:
    """An environment dir's lock; not thread-local, since an environment starts and stops on different threads."""
    return FileLock(env_dir / "lock", mode=0o600, thread_local=False)


def _write_state(env_dir: Path, state: bytes) -> None:
    fd = os.open(env_dir / "state", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, state)
    finally:
        os.close(fd)


def _read_state(env_dir: Path) -> bytes | None:
    """What `state` says (None: no state yet, or not a plain file)."""
    try:
        fd = os.open(env_dir / "state", os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return os.read(fd, 16)
    finally:
        os.close(fd)


def _kill_leftovers(root: Path) -> None:
    """SIGKILL processes still running bwrap on a dead owner's root (e.g. one stuck mid-setup when its
    parent was killed, which never learns of that death)."""
    marker = "\0".join(root_bind(root)).encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                if b"\0" + marker + b"\0" not in cmdline.read():
                    continue
            os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue
