"""Refused UDP in the egress record: the sandbox's table logs each datagram it rejects (other than DNS, which the egress
DNS server answers) to an nflog group of the sandbox's own network namespace, and a netlink socket the host process
made there reads the first bytes of each (destination address and port) into one `udp` event.

Hand-written netlink (nfnetlink_log: bind a group, copy 64 bytes of each packet) rather than a library: two config
messages and one attribute read. The packets are the sandbox's: every header is bounds-checked; a packet that does
not parse is skipped, and a log that overflowed (ENOBUFS) says so in the record rather than passing for complete.
"""

from __future__ import annotations

import errno
import socket
import struct
import time
from collections.abc import Callable, Iterator

from ptbench.egress.record import EgressEvent

NETLINK_NETFILTER = 12
GROUP = 27
"""The nflog group (a number of the sandbox's namespace, so any constant does)."""
COPY_BYTES = 64
_SUBSYS_ULOG = 4
_MSG_PACKET, _MSG_CONFIG = 0, 1
_CFG_CMD, _CFG_MODE, _CFG_QTHRESH, _CMD_BIND, _COPY_PACKET = 1, 2, 4, 1, 2
_ATTR_PAYLOAD = 9
_NLMSG_ERROR = 2
_REQUEST, _ACK = 1, 4
REASON = "UDP other than DNS is refused"


def log_socket() -> socket.socket:
    """A netlink socket for the nflog of the namespace the calling thread is in (bound to GROUP by `bind_group`)."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    return sock


def bind_group(sock: socket.socket) -> None:
    """Bind GROUP, copy the first COPY_BYTES of each packet and send each at once (the kernel's default batches them
    for up to a second); RuntimeError when the kernel refuses."""
    for sequence, (kind, value) in enumerate(
            [(_CFG_CMD, struct.pack("B", _CMD_BIND)), (_CFG_MODE, struct.pack("!IBx", COPY_BYTES, _COPY_PACKET)),
             (_CFG_QTHRESH, struct.pack("!I", 1))], 1):
        attribute = struct.pack("=HH", 4 + len(value), kind) + value
        attribute += b"\0" * (-len(attribute) % 4)
        body = struct.pack("!BBH", socket.AF_UNSPEC, 0, GROUP) + attribute
        sock.send(struct.pack("=IHHII", 16 + len(body), _SUBSYS_ULOG << 8 | _MSG_CONFIG, _REQUEST | _ACK, sequence, 0)
                  + body)
        reply = sock.recv(4096)
        if len(reply) < 20 or struct.unpack_from("=H", reply, 4)[0] != _NLMSG_ERROR:
            raise RuntimeError("the kernel's nflog gave no answer to its configuration")
        if (code := struct.unpack_from("=i", reply, 16)[0]) != 0:
            raise RuntimeError(f"could not log the sandbox's refused UDP: {errno.errorcode.get(-code, code)}")


def destinations(data: bytes) -> Iterator[tuple[str, int]]:
    """The (address, port) of each logged IPv4 UDP packet in one netlink read."""
    offset = 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, offset)
        if length < 16 or offset + length > len(data):
            return
        if kind == _SUBSYS_ULOG << 8 | _MSG_PACKET:
            payload = _attribute(data[offset + 20:offset + length], _ATTR_PAYLOAD)
            if payload is not None and (where := _udp_destination(payload)) is not None:
                yield where
        offset += (length + 3) & ~3


def _attribute(attributes: bytes, wanted: int) -> bytes | None:
    offset = 0
    while offset + 4 <= len(attributes):
        length, kind = struct.unpack_from("=HH", attributes, offset)
        if length < 4 or offset + length > len(attributes):
            return None
        if kind & 0x3FFF == wanted:
            return attributes[offset + 4:offset + length]
        offset += (length + 3) & ~3
    return None


def _udp_destination(packet: bytes) -> tuple[str, int] | None:
    if len(packet) < 20 or packet[0] >> 4 != 4 or packet[9] != socket.IPPROTO_UDP:
        return None
    header = (packet[0] & 0x0F) * 4
    if header < 20 or len(packet) < header + 4:
        return None
    return socket.inet_ntoa(packet[16:20]), struct.unpack_from("!H", packet, header + 2)[0]


def reader(sock: socket.socket, phase: Callable[[], str], write: Callable[[EgressEvent], None]) -> Callable[[], None]:
    """What the event loop calls when the socket is readable: one refused `udp` event per logged datagram."""

    def read() -> None:
        while True:
            try:
                data = sock.recv(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno != errno.ENOBUFS:
                    return
                write(EgressEvent(time=time.time(), phase=phase(), protocol="udp",
                                  reason="refused UDP came faster than it was logged: some are not in the record"))
                continue
            for address, port in destinations(data):
                write(EgressEvent(time=time.time(), phase=phase(), protocol="udp", address=address, port=port,
                                  reason=REASON))

    return read
