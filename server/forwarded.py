"""Whose connection it is behind a reverse proxy: the client's address, read from the
header a trusted proxy sets (``serve --trusted-proxy``; docs/PLAYING.md, "TLS with a
reverse proxy").

Pure: addresses and header values in, an address out. The rule (as uvicorn's
``--forwarded-allow-ips``, nginx's ``real_ip_recursive on``): only when the peer itself is
trusted, walk the header's chain of addresses from the right, past every trusted one;
the first that is not trusted is the client. Each proxy appends the address it was
connected from, so everything right of that point was written by proxies we trust, and
whatever a client forged sits left of it, unread. An entry that is not an address at
that point (``unknown``, an obfuscated name, garbage) names nobody: the connection then
counts as the proxy's that passed it on, as without the header. Only one header is read
(``--forwarded-header``): one the proxy does not set, a client could send through it.
"""

from __future__ import annotations

import ipaddress
from typing import Iterable

import attrs

XFF = "x-forwarded-for"
FORWARDED = "forwarded"
HEADERS = {XFF: "X-Forwarded-For", FORWARDED: "Forwarded"}   # what --forwarded-header takes, by its lowercase

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@attrs.frozen
class Address:
    """Where a connection comes from: an IP address as the caps key it, and its port when
    known (a proxy's ``X-Forwarded-For`` names none)."""

    host: str
    port: int | None = None


def peer_address(conn) -> str | None:
    """The address a connection counts against (None for none): its Peer's host, which
    is the key of the listener's per-address caps (server/listener.py: the socket's
    address, or the client a trusted proxy named), so every per-address cap of the
    server (``--max-per-address``, ``--max-waiting-per-address``,
    ``--max-bots-per-address``) counts one address alike."""
    peer = getattr(conn, "peer", None)
    if peer is None:
        return None
    return getattr(peer, "host", None) or peer.remote.rsplit(":", 1)[0]


class AddressCounts:
    """How many of something each address holds now, and how many in all (None: an
    address not known, counted in all only): what every per-address share of the server
    counts (the bots' ``--max-bots-per-address``, the hints' and the replay line's
    shares, tables being created against ``--max-waiting-per-address``). Pure."""

    __slots__ = ("total", "by_address")

    def __init__(self) -> None:
        self.total = 0
        self.by_address: dict[str, int] = {}     # (read only: take and give keep it)

    def of(self, address: str | None) -> int:
        """What ``address`` holds now."""
        return 0 if address is None else self.by_address.get(address, 0)

    def take(self, address: str | None, n: int = 1) -> None:
        self.total += n
        if address is not None:
            self.by_address[address] = self.by_address.get(address, 0) + n

    def give(self, address: str | None, n: int = 1) -> None:
        """Give back ``n`` that ``address`` took (an address holds none once it gave all back)."""
        if not n:
            return
        self.total -= n
        if address is not None:
            left = self.by_address[address] - n
            if left:
                self.by_address[address] = left
            else:
                del self.by_address[address]


def trusted_network(spec: str) -> Network:
    """One ``--trusted-proxy`` value, ``ADDR`` or ``ADDR/PREFIX``; ValueError with the
    sentence saying what is wrong."""
    text = spec.strip()
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError as e:
        if "has host bits set" in str(e):
            near = ipaddress.ip_network(text, strict=False)
            raise ValueError(f"--trusted-proxy {spec}: the address has bits set past the /{near.prefixlen}; "
                             f"did you mean {near}?") from None
        raise ValueError(f"--trusted-proxy {spec!r}: not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8, "
                         "::1, fd00::/8)") from None


def normal(text: str) -> str | None:
    """An IP address as the caps key it (IPv6 compressed and lowercase, an IPv4-mapped
    IPv6 address as IPv4, no zone); None if ``text`` is no address."""
    try:
        ip = ipaddress.ip_address(text.partition("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


def node(text: str) -> Address | None:
    """One hop of a chain: ``1.2.3.4``, ``1.2.3.4:80``, ``2001:db8::1``, ``[2001:db8::1]``,
    ``[2001:db8::1]:80``; None for anything else."""
    text = text.strip()
    port: int | None = None
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket:
            return None
        if rest:
            if not rest.startswith(":"):
                return None
            port = _port(rest[1:])
            if port is None:
                return None
        host = inside
    elif text.count(":") == 1:         # IPv4 with a port (a bare IPv6 address has two or more)
        host, _, p = text.partition(":")
        port = _port(p)
        if port is None:
            return None
    else:
        host = text
    ip = normal(host)
    return None if ip is None else Address(ip, port)


def _port(text: str) -> int | None:
    if not (text.isascii() and text.isdigit()) or len(text) > 5:
        return None
    n = int(text)
    return n if 0 < n < 65536 else None


def xff_chain(values: Iterable[str]) -> list[Address | None]:
    """The hops of ``X-Forwarded-For`` (every line of it, in order: RFC 9110 section 5.3),
    left to right; None where an entry is no address."""
    return [node(part) for value in values for part in value.split(",")]


def forwarded_chain(values: Iterable[str]) -> list[Address | None]:
    """The ``for=`` of each element of ``Forwarded`` (RFC 7239 section 4), left to right;
    None where an element has none, or it is ``unknown``, obfuscated or malformed."""
    chain: list[Address | None] = []
    for value in values:
        for element in _split(value, ","):
            found: Address | None = None
            for pair in _split(element, ";"):
                name, eq, raw = pair.partition("=")
                if eq and name.strip().lower() == "for":
                    found = node(_unquote(raw.strip()))
                    break
            chain.append(found)
    return chain


def _split(text: str, sep: str) -> list[str]:
    """``text`` cut at ``sep`` outside quoted strings (RFC 7230 section 3.2.6)."""
    parts, start, quoted, escaped = [], 0, False, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif quoted and c == "\\":
            escaped = True
        elif c == '"':
            quoted = not quoted
        elif c == sep and not quoted:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        out, escaped = [], False
        for c in value[1:-1]:
            if c == "\\" and not escaped:
                escaped = True
                continue
            out.append(c)
            escaped = False
        return "".join(out)
    return value


@attrs.frozen
class TrustedProxies:
    """The peers whose forwarding header is believed (none by default), and which header."""

    networks: tuple[Network, ...] = ()
    header: str = XFF               # XFF or FORWARDED, lowercase

    @classmethod
    def parse(cls, specs: Iterable[str], header: str = XFF) -> "TrustedProxies":
        """From ``--trusted-proxy`` values and ``--forwarded-header``; ValueError with the
        sentence saying what is wrong."""
        name = header.strip().lower()
        if name not in HEADERS:
            raise ValueError(f"--forwarded-header {header!r}: it is X-Forwarded-For or Forwarded "
                             "(the one your proxy sets)")
        return cls(tuple(trusted_network(s) for s in specs), name)

    def trusts(self, host: str) -> bool:
        if not self.networks:
            return False
        ip = normal(host)
        if ip is None:
            return False
        addr = ipaddress.ip_address(ip)
        return any(addr in net for net in self.networks)

    def client(self, peer: str, port: int | None, values: Iterable[str]) -> Address:
        """Whose connection it is: ``peer`` (the socket's address) unless it is trusted;
        then the right-most hop of the header (``values``: its lines) that is not trusted.
        A hop that is no address there: the trusted proxy that passed it on. Every hop
        trusted: the left-most."""
        last = Address(peer, port)
        if not self.trusts(peer):
            return last
        lines = list(values)
        if not lines:
            return last
        chain = forwarded_chain(lines) if self.header == FORWARDED else xff_chain(lines)
        for hop in reversed(chain):
            if hop is None:
                return last
            last = hop
            if not self.trusts(hop.host):
                return hop
        return last
