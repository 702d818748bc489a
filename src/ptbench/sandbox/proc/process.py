"""Processes of the sandbox: the long-lived holder, and commands run to completion or killed as a whole.

The holder starts from an empty environment (PATH only): its processes are the sandbox's pid 1 and 2, whose
environ anyone inside can read. Stopping it ends its pid namespace, and `stop` returns once every process in
it is gone. A command is started in a new session, so its process group is the nsenter process's pid. On a
timeout or an asyncio cancellation the command's processes are first described to the caller's log
(proctree.py), then the group and every descendant found through /proc (which also catches children that
called setsid) are stopped, then killed, before the call returns.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from ptbench.errors import InfrastructureError, PtbenchError
from ptbench.sandbox.proc.exec import DEFAULT_PATH
from ptbench.sandbox.proc.proctree import descendants, describe, read_stat
from ptbench.sandbox.proc.spawn import Preexec, SpawnedCommand, Spawner, readable

OutputSink = Callable[[str, str], Awaitable[None]]
Log = Callable[[str], None]
# After a command exits, how long to keep reading output that background processes it left behind
# still write into the inherited pipes.
_DRAIN_GRACE_SEC = 0.5
_READ_CHUNK = 65536
# What one command's stdout or stderr may keep in memory (Harbor holds exec results whole).
OUTPUT_HEAD_BYTES = 8 << 20
OUTPUT_TAIL_BYTES = 1 << 20
# How long the kernel may take to end every process of a killed sandbox (each is SIGKILLed at once).
_END_TIMEOUT_SEC = 60.0


class HolderStartError(InfrastructureError, RuntimeError):
    """bubblewrap did not start the sandbox, or its first process died as it started: the machine's failure (a start
    can race the host's mount table, which other sandboxes' disks change at the same moment)."""


class CommandTimeoutError(PtbenchError, RuntimeError):
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
        self._pidfd = -1  # of child_pid, the sandbox's init: readable once every process inside has ended

    @classmethod
    async def start(
        cls,
        argv_for_fds: Callable[[int, int], list[str]],
        ready_line: str,
        log_path: Path,
        preexec: Preexec | None = None,
        *,
        seccomp_program: bytes,
    ) -> Holder:
        """Start bwrap, learn the sandbox's first process (its host pid), and wait until the sandbox is set up.

        `argv_for_fds(info_fd, seccomp_fd)` is bwrap's command line; bwrap reads `seccomp_program` from
        seccomp_fd. bwrap's stdout and stderr are one pipe: what comes before the ready line goes to
        log_path, then the pipe is closed, so the sandbox's pid 1 (which keeps them) holds no host file."""
        info_read, info_write = os.pipe()
        output_read, output_write = os.pipe()
        filter_fd = os.memfd_create("ptbench-seccomp")  # bwrap reads it from the current offset
        os.write(filter_fd, seccomp_program)
        os.lseek(filter_fd, 0, os.SEEK_SET)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv_for_fds(info_write, filter_fd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=output_write,
                stderr=output_write,
                env={"PATH": DEFAULT_PATH},
                pass_fds=(info_write, filter_fd),
                start_new_session=True,
                preexec_fn=preexec,
            )
        except BaseException:
            os.close(info_read)
            os.close(output_read)
            raise
        finally:
            for fd in (info_write, output_write, filter_fd):
                os.close(fd)
        holder = cls(process, 0)
        output_open = True
        try:
            info = await asyncio.to_thread(_read_all, info_read)
            output_open = False  # from here on, _read_until_line closes it
            before, ready = await asyncio.to_thread(_read_until_line, output_read, ready_line.encode())
            log_path.write_bytes(before)
            if not info or not ready:
                message = before.decode(errors="replace").strip().splitlines()
                raise HolderStartError(
                    f"bubblewrap failed to start the sandbox: {message[-1] if message else 'no output'}"
                )
        except BaseException:
            if output_open:
                os.close(output_read)
            await holder.stop()
            raise
        holder.child_pid = int(json.loads(info)["child-pid"])
        # bwrap, its parent, is alive and has not reaped it: the pid is still the sandbox's init.
        holder._pidfd = os.pidfd_open(holder.child_pid)
        if not holder.is_alive():
            await holder.stop()
            raise HolderStartError("the sandbox's first process died as it started")
        return holder

    def is_alive(self) -> bool:
        """Whether the sandbox's first process still runs (when it dies, every process inside dies with it)."""
        if self._process.returncode is not None:
            return False
        info = read_stat(self.child_pid)
        return info is not None and info.state not in ("Z", "X")

    async def stop(self) -> bool:
        """Kill bwrap's process group: bwrap and the sandbox's first process, whose death ends its pid namespace.
        Returns whether every process of the sandbox is known to be gone (False only if that took too long).

        The group, not just bwrap: a sandbox process that bwrap leaves mid-setup never learns of bwrap's death.
        The kernel reports the init's exit only after every other process of its namespace has exited."""
        if self._process.returncode is None:
            _signal_group(self._process.pid, signal.SIGKILL)
        await self._process.wait()
        pidfd, self._pidfd = self._pidfd, -1
        if pidfd < 0:
            return True
        try:
            async with asyncio.timeout(_END_TIMEOUT_SEC):
                await readable(pidfd)
        except TimeoutError:
            return False
        finally:
            os.close(pidfd)
        return True


def _read_all(fd: int) -> bytes:
    with os.fdopen(fd, "rb") as stream:
        return stream.read()


def _read_until_line(fd: int, line: bytes) -> tuple[bytes, bool]:
    """Read a pipe until `line` arrives as a whole line or the pipe ends, then close it: (what came
    before, whether the line came)."""
    data = b""
    with os.fdopen(fd, "rb", buffering=0) as stream:
        while True:
            lines = data.split(b"\n")
            if line in lines[:-1]:
                return b"\n".join(lines[: lines.index(line)]), True
            chunk = stream.read(4096)
            if not chunk:
                return data, False
            data += chunk


def _kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


async def run_command(
    spawner: Spawner,
    argv: list[str],
    environment: dict[str, str],
    timeout_sec: float | None,
    sink: OutputSink | None = None,
    preexec: Preexec | None = None,
    log: Log | None = None,
) -> CommandResult:
    """Run argv (started by the sandbox's spawner) to completion; on timeout (CommandTimeoutError) or
    cancellation, describe all its processes to `log`, then kill them."""
    process = await spawner.start(argv, environment, preexec)
    stdout, stderr = CappedOutput(), CappedOutput()
    readers = [
        asyncio.create_task(_pump(process.stdout, "stdout", stdout, sink)),
        asyncio.create_task(_pump(process.stderr, "stderr", stderr, sink)),
    ]
    try:
        async with asyncio.timeout(timeout_sec):
            await process.wait()
    except TimeoutError:
        _describe(process, f"timed out after {timeout_sec} seconds", log)
        await _kill_everything(process)
        raise CommandTimeoutError(f"Command timed out after {timeout_sec} seconds") from None
    except BaseException as exc:
        _describe(process, f"interrupted ({type(exc).__name__})", log)
        await _kill_everything(process)
        raise
    finally:
        await _finish_readers(readers)
        process.close()
    if process.exit_unseen and log is not None:
        log(f"command {process.pid}: its exit was found by the periodic check; the event loop never reported it")
    code = process.returncode or 0
    # Killed by a signal: the shell's (and Docker's) 128 + signal, not Python's negative number.
    return CommandResult(stdout.text(), stderr.text(), 128 - code if code < 0 else code)


class CappedOutput:
    """What a command printed on one stream, bounded: the first OUTPUT_HEAD_BYTES and the last
    OUTPUT_TAIL_BYTES, with how much was cut between them (a sandbox can print without end)."""

    def __init__(self) -> None:
        self._head = bytearray()
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size = 0
        self.cut = 0

    def add(self, data: bytes) -> bytes:
        """Keep `data` within the bounds; returns the part of it that went into the head."""
        kept = data[: max(0, OUTPUT_HEAD_BYTES - len(self._head))]
        self._head += kept
        rest = data[len(kept) :]
        if rest:
            self._tail.append(rest)
            self._tail_size += len(rest)
            while self._tail_size - len(self._tail[0]) >= OUTPUT_TAIL_BYTES:
                dropped = self._tail.popleft()
                self._tail_size -= len(dropped)
                self.cut += len(dropped)
        return kept

    def text(self) -> str:
        """The kept output as text (invalid UTF-8 replaced), a one-line note where bytes were cut."""
        tail = b"".join(self._tail)
        middle = f"\n[ptbench: {self.cut} bytes of output cut]\n" if self.cut else ""
        return self._head.decode(errors="replace") + middle + tail.decode(errors="replace")


async def _pump(stream: asyncio.StreamReader, name: str, into: CappedOutput, sink: OutputSink | None) -> None:
    """Read a stream to its end into `into`; the head of it is also streamed to `sink` as it arrives."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        data = await stream.read(_READ_CHUNK)
        kept = into.add(data)
        if sink is not None and (kept or not data):
            text = decoder.decode(kept, final=not data)
            if text:
                await sink(text, name)
        if not data:
            return


async def _finish_readers(readers: list[asyncio.Task[None]]) -> None:
    _, pending = await asyncio.wait(readers, timeout=_DRAIN_GRACE_SEC)
    for task in pending:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


def _describe(process: SpawnedCommand, why: str, log: Log | None) -> None:
    """Before the kill: what each process of the command was doing (a first process in state Z had ended
    unnoticed)."""
    if log is None or process.returncode is not None:
        return
    lines = describe(process.pid)
    log(f"command {process.pid} {why}; its processes before the kill:\n  " + "\n  ".join(lines))


async def _kill_everything(process: SpawnedCommand) -> None:
    """Freeze the command's process group and descendants, look again for late forks, then SIGKILL them all."""
    if process.returncode is not None:  # already exited and reaped: its pid may belong to someone else now
        return
    frozen: set[int] = set()
    for _ in range(2):
        found = descendants(process.pid) - frozen
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
