"""The egress proxy: takes each TCP connection the sandbox opens (redirected to it, its original destination known),
peeks at its first bytes for the host it asks for (peek.py), decides on the policy (policy.py), then dials the
destination itself (the asked name resolved here, never the address the sandbox resolved) and splices, recording
every attempt (record.py). A refusal closes at once with a reset. The peer controls every byte: the peek is capped
in size and time, and nothing it sends is more than counted once past the decision."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ptbench.egress.peek import MAX_PEEK, Asked, Incomplete, Malformed, peek_host
from ptbench.egress.policy import AllowPolicy, Decision
from ptbench.egress.record import EgressEvent, EgressWriter

PEEK_SECONDS = 5.0
"""How long the first bytes are awaited; a connection silent that long (a server-speaks-first protocol) is decided
on its address."""
FIRST_BYTES_SECONDS = 0.5
"""A connection that sends nothing this long is taken to wait for the server (decided on its address)."""
DIAL_SECONDS = 10.0
BUFFER = 1 << 20
"""Stream buffer and read size of the splice (small ones cost throughput; the peek reads at most MAX_PEEK)."""
SO_ORIGINAL_DST = 80

Destination = Callable[[socket.socket], tuple[str, int]]
Resolver = Callable[[str, int], Awaitable[tuple[str, int]]]


def original_destination(sock: socket.socket) -> tuple[str, int]:
    """Where an nftables-redirected IPv4 connection was going (Linux's SO_ORIGINAL_DST)."""
    raw = sock.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
    port, packed = struct.unpack_from("!2xH4s", raw)
    return socket.inet_ntoa(packed), port


async def resolve_here(host: str, port: int) -> tuple[str, int]:
    """The first address of `host` resolved host-side."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return str(infos[0][4][0]), port


@dataclass
class EgressProxy:
    """One phase's proxy: its policy, where it records, and how it learns and reaches destinations."""

    policy: AllowPolicy
    writer: EgressWriter
    phase: str
    destination: Destination = original_destination
    resolve: Resolver = resolve_here
    closed: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    """Addresses never dialled whatever the policy says (the host's own: `sandbox.firewall.host_networks`), checked on
    the address the proxy itself resolved."""
    named: Callable[[str], str | None] = lambda _address: None
    """The name an address stands for (the sandbox's DNS gave it out for that name): a connection to it that names
    no host itself is decided on, and dialled by, that name."""

    async def serve(self, host: str, port: int) -> asyncio.Server:
        return await asyncio.start_server(self.handle, host, port, limit=BUFFER)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        start = time.time()
        try:
            address, port = self.destination(writer.get_extra_info("socket"))
        except OSError:  # not a redirected connection: one made to the proxy's own port
            address, port = "", 0
        event = EgressEvent(time=start, phase=self.phase, protocol="tcp", address=address, port=port)
        try:
            head, asked = await _peek(reader)
        except Malformed as exc:
            asked, head = None, b""
            decision = Decision(False, f"malformed first bytes: {exc}")
        else:
            if asked is None and (name := self.named(address)) is not None:
                asked = Asked(name, "tcp")
            decision = self.policy.decide(asked.host if asked else None, address)
        if asked is not None:
            event.protocol, event.asked = asked.protocol, asked.host
            event.path = _http_path(head) if asked.protocol == "http" else None
        event.allowed, event.reason = decision.allowed, decision.reason[:300]
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        if decision.allowed:
            try:
                target = asked.host if asked else address
                dial = await self.resolve(target, asked.port if asked and asked.port else port)
                if any(_within(dial[0], network) for network in self.closed):
                    raise OSError(f"{dial[0]} is one of the host's own addresses")
                upstream = await asyncio.wait_for(asyncio.open_connection(*dial, limit=BUFFER), DIAL_SECONDS)
            except (OSError, TimeoutError) as exc:
                event.allowed, event.reason = False, f"allowed, but not reached: {exc}"[:300]
        if upstream is None:
            _reset(writer)
        else:
            if asked is not None and asked.protocol == "connect":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                head = b""
            upstream[1].write(head)
            event.bytes_out, event.bytes_in = await asyncio.gather(
                _pipe(reader, upstream[1], len(head)), _pipe(upstream[0], writer, 0))
        event.seconds = round(time.time() - start, 4)
        self.writer.write(event)


async def _peek(reader: asyncio.StreamReader) -> tuple[bytes, Asked | None]:
    """The first bytes and the host they ask for (None: they name none, or none came soon)."""
    head = b""
    deadline = time.monotonic() + PEEK_SECONDS
    wait = FIRST_BYTES_SECONDS
    while len(head) < MAX_PEEK:
        try:
            chunk = await asyncio.wait_for(reader.read(MAX_PEEK - len(head)), max(0.0, wait))
        except TimeoutError:
            chunk = None
        if not chunk:
            return head, peek_host(head) if head else None
        head += chunk
        try:
            return head, peek_host(head)
        except Incomplete:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise
    return head, peek_host(head)


def _within(address: str, network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.version == network.version and ip in network


def _http_path(head: bytes) -> str | None:
    match = re.match(rb"[A-Z]+ (\S{1,2048}) ", head)
    return match.group(1).decode("ascii", "replace") if match else None


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, counted: int) -> int:
    try:
        while chunk := await source.read(BUFFER):
            sink.write(chunk)
            await sink.drain()
            counted += len(chunk)
    except OSError:
        pass
    finally:
        sink.close()
    return counted


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a reset, so that the sandbox's connection fails at once."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()
