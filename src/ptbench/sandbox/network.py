"""The `public` network of a sandbox: a network namespace of its own, connected outward by slirp4netns.

Every holder gets `--unshare-net`; for `public`, slirp4netns joins the holder's namespace, creates a tap
device there (10.0.2.100/24, gateway 10.0.2.2, DNS forwarder 10.0.2.3) and relays its TCP and UDP
traffic through ordinary sockets of the host. With `--disable-host-loopback` the gateway does not lead to
the host's 127.0.0.1, and the sandbox's own 127.0.0.1 is its own loopback, so no service listening on
the host's loopback is reachable, and nothing the sandbox listens on appears there. Abstract unix
sockets belong to a network namespace, so the host's (and other sandboxes') are out of reach too.
The host's other addresses are refused by the sandbox's packet filter (`firewall.py`), loaded before
slirp4netns attaches; other machines are reachable, as from a Docker container.

DNS: /etc is the host's, read-only, so the sandbox uses the host's resolv.conf. Its nameservers are
reached through slirp like any other address, which works when they are not loopback addresses
(10.0.2.3 also answers, forwarding to the host's resolver). A host resolver on 127.0.0.x (systemd-resolved's
stub, a local dnsmasq) is unreachable from inside: such hosts need a resolv.conf pointing at 10.0.2.3.

slirp4netns also runs in its own mount namespace without capabilities (`--enable-sandbox`) under its own
seccomp filter; it exits when the host process that started it dies (`--exit-fd`), and is killed at stop.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path

from ptbench.sandbox import firewall
from ptbench.sandbox.host import HostTools
from ptbench.sandbox.spawn import readable

# The largest MTU slirp4netns takes: fewer, bigger packets through the relay.
SLIRP_OPTIONS = ("--configure", "--mtu=65520", "--disable-host-loopback", "--enable-sandbox", "--enable-seccomp")
TAP_DEVICE = "tap0"
READY_TIMEOUT_SEC = 30.0


def filter_tool() -> str:
    """nft, which a `public` sandbox needs for its packet filter; RuntimeError naming the package when missing (raised
    in the environment's constructor, where `check_task_supported` reports it)."""
    path = shutil.which("nft")
    if path is None:
        raise RuntimeError("a public sandbox needs nft to refuse the host's own addresses: apt-get install nftables")
    return path


class SlirpNetwork:
    """A running slirp4netns attached to one sandbox's network namespace."""

    def __init__(self, process: asyncio.subprocess.Process, exit_fd: int) -> None:
        self._process = process
        self._exit_fd = exit_fd

    @classmethod
    async def start(cls, tools: HostTools, pid: int, log_path: Path) -> SlirpNetwork:
        """Load the packet filter into the network namespace of host pid `pid`, then attach slirp4netns to it;
        return once the tap device is up."""
        await firewall.load(tools.nsenter, filter_tool(), pid, firewall.host_filter())
        ready_read, ready_write = os.pipe()
        exit_read, exit_write = os.pipe()  # we hold the write end: our death is slirp's exit signal
        argv = [tools.slirp4netns, *SLIRP_OPTIONS, f"--ready-fd={ready_write}", f"--exit-fd={exit_read}"]
        argv += [str(pid), TAP_DEVICE]
        try:
            with open(log_path, "wb") as log:
                process = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env={},
                    pass_fds=(ready_write, exit_read),
                    start_new_session=True,
                )
        except BaseException:
            for fd in (ready_read, exit_write):
                os.close(fd)
            raise
        finally:
            for fd in (ready_write, exit_read):
                os.close(fd)
        network = cls(process, exit_write)
        try:
            async with asyncio.timeout(READY_TIMEOUT_SEC):
                ready = await _read_byte(ready_read)
            if not ready:
                await process.wait()
                lines = log_path.read_text(errors="replace").strip().splitlines()
                raise RuntimeError(f"slirp4netns failed to connect the sandbox: {lines[-1] if lines else 'no output'}")
        except BaseException:
            await network.stop()
            raise
        finally:
            os.close(ready_read)
        return network

    async def stop(self) -> None:
        """Kill slirp4netns (the namespace's other end); idempotent."""
        if self._exit_fd >= 0:
            os.close(self._exit_fd)
            self._exit_fd = -1
        if self._process.returncode is None:
            try:
                os.kill(self._process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        await self._process.wait()


async def _read_byte(fd: int) -> bytes:
    """One byte from a pipe without blocking the event loop (b"" at end of file)."""
    await readable(fd)
    return os.read(fd, 1)
