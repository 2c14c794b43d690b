"""The PROXY protocol (HAProxy's, versions 1 and 2), by which a TCP proxy (HAProxy, nginx
``stream`` with ``proxy_protocol on``) tells the server whose connection it passes on,
in a header before the first byte of the client's own (``serve --proxy-protocol``;
docs/PLAYING.md). Spec: https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt

Pure: the bytes read so far in, a verdict out: the header's length and the client's
address, more bytes needed, or why it is no header. Read only from a ``--trusted-proxy``
peer: anyone else could name any address.
"""

from __future__ import annotations

import ipaddress
import struct

import attrs

from .forwarded import Address, normal

V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
V1_MAX = 107                 # bytes of a version 1 line, CRLF included (spec, section 2.1)
V2_MAX = 16 + 4096           # a version 2 header with its TLVs: we read (and skip) this much at most


@attrs.frozen
class Header:
    """A whole header: ``size`` bytes long; ``client`` the source it names (None: the proxy
    speaks for itself, LOCAL or UNKNOWN: the connection stays the proxy's)."""

    size: int
    client: Address | None


@attrs.frozen
class Invalid:
    """No PROXY protocol header: why, in a sentence."""

    why: str


MORE = None     # the bytes so far begin a header: read more


def parse(data: bytes) -> Header | Invalid | None:
    """The header at the start of ``data``, ``Invalid``, or None (MORE: read more)."""
    if data[:1] == b"P":
        return _v1(data)
    if data[:1] == b"\r":
        return _v2(data)
    return Invalid("the connection did not begin with a PROXY protocol header")


def _v1(data: bytes) -> Header | Invalid | None:
    if b"PROXY "[:len(data)] != data[:6]:
        return Invalid("the connection did not begin with a PROXY protocol header")
    end = data.find(b"\r\n", 0, V1_MAX)
    if end < 0:
        return MORE if len(data) < V1_MAX else Invalid(f"a PROXY protocol v1 line longer than {V1_MAX} bytes")
    try:
        words = data[:end].decode("ascii").split(" ")
    except UnicodeDecodeError:
        return Invalid("a PROXY protocol v1 line that is not ASCII")
    if len(words) >= 2 and words[1] == "UNKNOWN":
        return Header(end + 2, None)
    if len(words) != 6 or words[1] not in ("TCP4", "TCP6"):
        return Invalid("a malformed PROXY protocol v1 line (PROXY TCP4|TCP6 SRC DST SPORT DPORT)")
    _, family, src, _dst, sport, _dport = words
    try:
        ip = ipaddress.ip_address(src)
    except ValueError:
        ip = None
    if not isinstance(ip, ipaddress.IPv4Address if family == "TCP4" else ipaddress.IPv6Address):
        return Invalid(f"a PROXY protocol v1 line whose source {src!r} is no {family} address")
    if not (sport.isascii() and sport.isdigit() and len(sport) <= 5 and 0 < int(sport) < 65536):
        return Invalid(f"a PROXY protocol v1 line whose source port {sport!r} is no port")
    return Header(end + 2, Address(normal(src) or src, int(sport)))


def _v2(data: bytes) -> Header | Invalid | None:
    if V2_SIGNATURE[:len(data)] != data[:12]:
        return Invalid("the connection did not begin with a PROXY protocol header")
    if len(data) < 16:
        return MORE
    ver_cmd, family, length = struct.unpack("!BBH", data[12:16])
    if ver_cmd >> 4 != 2:
        return Invalid(f"a PROXY protocol v2 header of version {ver_cmd >> 4}")
    if 16 + length > V2_MAX:
        return Invalid(f"a PROXY protocol v2 header of {16 + length} bytes (at most {V2_MAX})")
    if len(data) < 16 + length:
        return MORE
    size = 16 + length
    command = ver_cmd & 0xF
    if command == 0:                # LOCAL: the proxy's own connection (a health check)
        return Header(size, None)
    if command != 1:
        return Invalid(f"a PROXY protocol v2 header with command {command}")
    body = data[16:size]
    src: ipaddress.IPv4Address | ipaddress.IPv6Address
    if family == 0x11 and length >= 12:         # TCP over IPv4
        src, port = ipaddress.IPv4Address(body[:4]), struct.unpack("!H", body[8:10])[0]
    elif family == 0x21 and length >= 36:       # TCP over IPv6
        src, port = ipaddress.IPv6Address(body[:16]), struct.unpack("!H", body[32:34])[0]
    elif family >> 4 in (0, 3) or family & 0xF == 2:
        return Header(size, None)       # UNSPEC, AF_UNIX, or UDP: no address for the caps
    else:
        return Invalid(f"a PROXY protocol v2 header with address family {family:#04x} and {length} bytes")
    return Header(size, Address(normal(str(src)) or str(src), port or None))
