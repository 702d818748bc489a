"""Processes of the sandbox: the long-lived holder, and commands run to completion or killed as a whole.

A command is started in a new session, so its process group is the nsenter process's pid. On a
timeout or an asyncio cancellation the group and every descendant found through /proc (which also
catches children that called setsid) are stopped, then killed, before the call returns.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

OutputSink = Callable[[str, str], Awaitable[None]]
# Runs in the forked child before exec (joins the sandbox's cgroups, installs its seccomp filter): only
# async-signal-safe work, everything it needs prepared beforehand in the parent.
Preexec = Callable[[], None]
# After a command exits, how long to keep reading output that background processes it left behind
# still write into the inherited pipes.
_DRAIN_GRACE_SEC = 0.5
_READ_CHUNK = 65536


class CommandTimeoutError(RuntimeError):
    """A command outlived its timeout and was killed."""


@dataclass
class CommandResult:
    """What a finished command printed and how it exited."""

    stdout: str
    stderr: str
    return_code: int


class Holder:
    """The bwrap process that keeps a sandbox's namespaces alive; commands join `child_pid` with nsenter."""

    def __init__(self, process: asyncio.subprocess.Process, child_pid: int) -> None:
        self._process = process
        self.child_pid = child_pid

    @classmethod
    async def start(
        cls, argv_for_fd: Callable[[int], list[str]], ready_line: str, log_path: Path, preexec: Preexec | None = None
    ) -> Holder:
        """Start bwrap, learn the sandbox's first process (its host pid), and wait until the sandbox is set up."""
        read_fd, write_fd = os.pipe()
        try:
            with open(log_path, "wb") as log:
                process = await asyncio.create_subprocess_exec(
                    *argv_for_fd(write_fd),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=log,
                    pass_fds=(write_fd,),
                    start_new_session=True,
                    preexec_fn=preexec,
                )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        assert process.stdout is not None
        holder = cls(process, 0)
        try:
            info = await asyncio.to_thread(_read_all, read_fd)
            ready = await process.stdout.readline()
            if not info or ready.decode(errors="replace").strip() != ready_line:
                message = log_path.read_text(errors="replace").strip().splitlines()
                raise RuntimeError(f"bubblewrap failed to start the sandbox: {message[-1] if message else 'no output'}")
        except BaseException:
            await holder.stop()
            raise
        holder.child_pid = int(json.loads(info)["child-pid"])
        return holder

    async def stop(self) -> None:
        """Kill bwrap's process group: bwrap and the sandbox's first process, whose death ends its pid namespace.

        The group, not just bwrap: a sandbox process that bwrap leaves mid-setup never learns of bwrap's death."""
        if self._process.returncode is None:
            _signal_group(self._process.pid, signal.SIGKILL)
        await self._process.wait()


def _read_all(fd: int) -> bytes:
    with os.fdopen(fd, "rb") as stream:
        return stream.read()


def _kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


async def run_command(
    argv: list[str],
    environment: dict[str, str],
    timeout_sec: float | None,
    sink: OutputSink | None = None,
    preexec: Preexec | None = None,
) -> CommandResult:
    """Run argv to completion; on timeout (CommandTimeoutError) or cancellation, kill all its processes first."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
        start_new_session=True,
        preexec_fn=preexec,
    )
    assert process.stdout is not None and process.stderr is not None
    chunks: dict[str, list[str]] = {"stdout": [], "stderr": []}
    readers = [
        asyncio.create_task(_pump(process.stdout, "stdout", chunks["stdout"], sink)),
        asyncio.create_task(_pump(process.stderr, "stderr", chunks["stderr"], sink)),
    ]
    try:
        async with asyncio.timeout(timeout_sec):
            await process.wait()
    except TimeoutError:
        await _kill_everything(process)
        raise CommandTimeoutError(f"Command timed out after {timeout_sec} seconds") from None
    except BaseException:
        await _kill_everything(process)
        raise
    finally:
        await _finish_readers(readers)
    return CommandResult("".join(chunks["stdout"]), "".join(chunks["stderr"]), process.returncode or 0)


async def _pump(stream: asyncio.StreamReader, name: str, into: list[str], sink: OutputSink | None) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        data = await stream.read(_READ_CHUNK)
        text = decoder.decode(data, final=not data)
        if text:
            into.append(text)
            if sink is not None:
                await sink(text, name)
        if not data:
            return


async def _finish_readers(readers: list[asyncio.Task[None]]) -> None:
    _, pending = await asyncio.wait(readers, timeout=_DRAIN_GRACE_SEC)
    for task in pending:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


async def _kill_everything(process: asyncio.subprocess.Process) -> None:
    """Freeze the command's process group and descendants, look again for late forks, then SIGKILL them all."""
    if process.returncode is not None:  # already exited and reaped: its pid may belong to someone else now
        return
    frozen: set[int] = set()
    for _ in range(2):
        found = _descendants(process.pid) - frozen
        _signal_group(process.pid, signal.SIGSTOP)
        for pid in found:
            _kill(pid, signal.SIGSTOP)
        frozen |= found
    _signal_group(process.pid, signal.SIGKILL)
    for pid in frozen:
        _kill(pid, signal.SIGKILL)
    await asyncio.shield(process.wait())


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _descendants(root_pid: int) -> set[int]:
    """Every live process below root_pid, found by walking parent links in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    queue = [root_pid]
    while queue:
        for child in children.get(queue.pop(), []):
            if child not in found:
                found.add(child)
                queue.append(child)
    return found
