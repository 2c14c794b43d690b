"""The PROXY protocol header a TCP proxy sends first (server/proxyproto.py; HAProxy's
spec, versions 1 and 2): the client it names, more bytes needed, or why it is none.

The adversary: a proxy (or whoever reaches the port) sending a truncated, oversized or
malformed header; each gets a verdict, never an exception or an unbounded read."""

from __future__ import annotations

import ipaddress
import struct

import pytest

from wildtable.server.forwarded import Address
from wildtable.server.proxyproto import V1_MAX, V2_MAX, V2_SIGNATURE, Header, Invalid, parse


def v2(command: int, family: int, body: bytes) -> bytes:
    return V2_SIGNATURE + struct.pack("!BBH", 0x20 | command, family, len(body)) + body


def v2_tcp4(src: str, sport: int, tlvs: bytes = b"") -> bytes:
    return v2(1, 0x11, ipaddress.IPv4Address(src).packed + ipaddress.IPv4Address("10.0.0.1").packed
              + struct.pack("!HH", sport, 443) + tlvs)


def v2_tcp6(src: str, sport: int) -> bytes:
    return v2(1, 0x21, ipaddress.IPv6Address(src).packed + ipaddress.IPv6Address("::1").packed
              + struct.pack("!HH", sport, 443))


def test_v1_tcp4_and_tcp6():
    line = b"PROXY TCP4 198.51.100.7 10.0.0.1 5555 443\r\n"
    assert parse(line + b"GET / HTTP/1.1\r\n") == Header(len(line), Address("198.51.100.7", 5555))
    line = b"PROXY TCP6 2001:DB8::9 ::1 4711 443\r\n"
    assert parse(line) == Header(len(line), Address("2001:db8::9", 4711))


def test_v1_unknown_leaves_the_connection_the_proxys():
    assert parse(b"PROXY UNKNOWN\r\n") == Header(15, None)
    assert parse(b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n") == Header(35, None)


def test_v2_tcp4_tcp6_local_and_tlvs():
    h = v2_tcp4("198.51.100.7", 5555, tlvs=b"\x04\x00\x03abc")
    assert parse(h + b"GET") == Header(len(h), Address("198.51.100.7", 5555))
    h = v2_tcp6("2001:db8::9", 4711)
    assert parse(h) == Header(len(h), Address("2001:db8::9", 4711))
    h = v2_tcp6("::ffff:198.51.100.7", 1)
    assert parse(h).client == Address("198.51.100.7", 1)        # IPv4-mapped: one address for the caps
    assert parse(v2(0, 0x00, b"")) == Header(16, None)           # LOCAL: a health check of the proxy's
    assert parse(v2(1, 0x00, b"")) == Header(16, None)           # UNSPEC
    assert parse(v2(1, 0x31, b"x" * 216)) == Header(232, None)   # AF_UNIX: no address


@pytest.mark.parametrize("whole", [b"PROXY TCP4 198.51.100.7 10.0.0.1 5555 443\r\n",
                                   v2_tcp4("198.51.100.7", 5555), v2_tcp6("2001:db8::9", 1)])
def test_every_prefix_asks_for_more(whole):
    for n in range(1, len(whole)):
        assert parse(whole[:n]) is None, n
    assert isinstance(parse(whole), Header)


@pytest.mark.parametrize("data, says", [
    (b"GET / HTTP/1.1\r\n", "did not begin with a PROXY protocol header"),
    (b"\x16\x03\x01", "did not begin with a PROXY protocol header"),          # TLS
    (b"PROXI TCP4", "did not begin with a PROXY protocol header"),
    (b"\r\n\r\n\x00\r\nQUIX\n", "did not begin with a PROXY protocol header"),
    (b"PROXY " + b"1" * V1_MAX, f"longer than {V1_MAX} bytes"),
    (b"PROXY TCP4 198.51.100.7 10.0.0.1 5555\r\n", "malformed"),
    (b"PROXY UDP4 198.51.100.7 10.0.0.1 5555 443\r\n", "malformed"),
    (b"PROXY TCP4 2001:db8::9 10.0.0.1 5555 443\r\n", "no TCP4 address"),
    (b"PROXY TCP6 198.51.100.7 ::1 5555 443\r\n", "no TCP6 address"),
    (b"PROXY TCP4 999.1.1.1 10.0.0.1 5555 443\r\n", "no TCP4 address"),
    (b"PROXY TCP4 198.51.100.7 10.0.0.1 99999 443\r\n", "is no port"),
    (b"PROXY TCP4 198.51.100.7 10.0.0.1 \xff 443\r\n", "not ASCII"),
    (V2_SIGNATURE + b"\x11\x11\x00\x0c" + bytes(12), "of version 1"),
    (V2_SIGNATURE + b"\x22\x11\x00\x0c" + bytes(12), "with command 2"),
    (V2_SIGNATURE + b"\x21\x11\x00\x04" + bytes(4), "address family 0x11 and 4 bytes"),
    (V2_SIGNATURE + b"\x21\x11\xff\xff", f"(at most {V2_MAX})"),
])
def test_what_is_no_header_says_why(data, says):
    got = parse(data)
    assert isinstance(got, Invalid) and says in got.why, got
