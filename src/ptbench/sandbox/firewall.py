"""The packet filter of a `public` sandbox: nothing of the host itself is reachable through slirp4netns.

slirp4netns relays the sandbox's traffic through ordinary sockets of the host, so a packet to one of the host's own
addresses (any interface's, 0.0.0.0-bound services included) would reach the host's services. Before slirp4netns
attaches, ptbench loads an nftables table into the sandbox's network namespace (`nsenter -n` + `nft -f -`, from the
host): its output chain refuses, at once (a TCP reset: ECONNREFUSED at connect; other packets fail their send with
EPERM; never a silent drop that hangs a client), every address the host's kernel treats as its own (LOCAL and
BROADCAST routes of /proc/net/fib_trie, the addresses of /proc/net/if_inet6, read at start; 0.0.0.0/8, multicast and
the limited broadcast), slirp's gateway (the host) and its DNS address on any port but 53. The sandbox's own
loopback is untouched. The namespace belongs to the host's user namespace, where nothing inside has CAP_NET_ADMIN:
the sandbox cannot change the table.

A later allowlist (network policies) belongs in the same table: `Filter` is what the chain says, `ruleset` renders it.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

TABLE = "ptbench"
SLIRP_GATEWAY = "10.0.2.2"
SLIRP_DNS = "10.0.2.3"
_FIB_TRIE = Path("/proc/net/fib_trie")
_IF_INET6 = Path("/proc/net/if_inet6")
_HOST_ROUTE_TYPES = ("LOCAL", "BROADCAST")  # delivered to the host itself
# Delivered to the host on every host, whatever its routes say: "this network", multicast (a host that joined a
# group, e.g. mDNS, hears it), the limited broadcast.
_ALWAYS_HOST = ("0.0.0.0/8", "224.0.0.0/4", "255.255.255.255/32", "ff00::/8")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Filter:
    """What a sandbox may not reach: `refused` networks (any port), and `dns` reachable on port 53 only."""

    refused: tuple[Network, ...]
    dns: tuple[ipaddress.IPv4Address, ...] = field(default=(ipaddress.IPv4Address(SLIRP_DNS),))


def host_networks(fib_trie: Path = _FIB_TRIE, if_inet6: Path = _IF_INET6) -> list[Network]:
    """Every address (or local range) the host delivers to itself, from the kernel's own tables; RuntimeError
    when the IPv4 table cannot be read (a filter that could not see the host's addresses would pass them)."""
    found: list[Network] = []
    node: str | None = None
    try:
        routes = fib_trie.read_text()
    except OSError as exc:
        raise RuntimeError(f"cannot read the host's addresses from {fib_trie}: {exc.strerror}") from None
    for line in routes.splitlines():
        text = line.strip()
        if text.startswith("|-- "):
            node = text[4:]
        elif text.startswith("/") and node is not None and text.split()[-1] in _HOST_ROUTE_TYPES:
            found.append(ipaddress.ip_network(f"{node}{text.split()[0]}", strict=False))
    try:
        addresses = if_inet6.read_text()
    except FileNotFoundError:  # a kernel without IPv6
        addresses = ""
    for line in addresses.splitlines():
        digits = line.split()[0] if line.strip() else ""
        if len(digits) == 32:
            found.append(ipaddress.IPv6Network(int(digits, 16)))
    return found


def host_filter() -> Filter:
    """This host's own addresses, those every host answers, and slirp's gateway refused."""
    always = [ipaddress.ip_network(network) for network in (*_ALWAYS_HOST, SLIRP_GATEWAY)]
    return Filter(refused=(*host_networks(), *always))


def ruleset(rules: Filter) -> str:
    """The nftables script of the sandbox's table (`nft -f -`)."""
    v4 = ipaddress.collapse_addresses(net for net in rules.refused if isinstance(net, ipaddress.IPv4Network))
    v6 = ipaddress.collapse_addresses(net for net in rules.refused if isinstance(net, ipaddress.IPv6Network))
    dns = ", ".join(map(str, rules.dns))
    lines = [f"table inet {TABLE} {{"]
    for name, kind, elements in (("host_ipv4", "ipv4_addr", ", ".join(map(str, v4))),
                                 ("host_ipv6", "ipv6_addr", ", ".join(map(str, v6)))):
        listed = f"elements = {{ {elements} }} " if elements else ""
        lines.append(f"  set {name} {{ type {kind}; flags interval; {listed}}}")
    lines += [
        "  chain output {",
        "    type filter hook output priority filter; policy accept;",
        '    oifname "lo" accept',
        *([f"    ip daddr {{ {dns} }} meta l4proto {{ tcp, udp }} th dport 53 accept",
           f"    ip daddr {{ {dns} }} goto refuse"] if dns else []),
        "    ip daddr @host_ipv4 goto refuse",
        "    ip6 daddr @host_ipv6 goto refuse",
        "  }",
        "  chain refuse {",
        "    meta l4proto tcp reject with tcp reset",
        "    reject",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


async def load(nsenter: str, nft: str, pid: int, rules: Filter) -> None:
    """Load the table into the network namespace of host pid `pid` (as the host's root, from an empty
    environment); RuntimeError with nft's complaint if it cannot."""
    await load_script(nsenter, nft, pid, ruleset(rules))


async def load_script(nsenter: str, nft: str, pid: int, script: str) -> None:
    """Load an nftables script into the network namespace of host pid `pid` (also the allowlist's, allowlist.py)."""
    process = await asyncio.create_subprocess_exec(
        nsenter, "-t", str(pid), "-n", "--", nft, "-f", "-",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={}, start_new_session=True,
    )
    output, _ = await process.communicate(script.encode())
    if process.returncode != 0:
        lines = output.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"could not load the sandbox's packet filter: {lines[0] if lines else 'nft failed'}")
