"""Whose connection it is behind a reverse proxy (server/forwarded.py, ``serve
--trusted-proxy``): the peer's own address unless the peer is trusted; then the right-most
address of the forwarding header that is not itself trusted.

The adversary: a client that forges the header, straight to the server or through the
proxy, to pass as many addresses (each under its own cap) or as someone else."""

from __future__ import annotations

import pytest

from wildtable.server.forwarded import Address, TrustedProxies, forwarded_chain, node, xff_chain

LOCAL = TrustedProxies.parse(["127.0.0.1"])
NETS = TrustedProxies.parse(["10.0.0.0/8", "::1", "fd00::/8"])
FWD = TrustedProxies.parse(["127.0.0.1", "10.0.0.0/8"], "Forwarded")


def who(trusted: TrustedProxies, peer: str, *lines: str) -> str:
    return trusted.client(peer, 4000, lines).host


def test_no_trusted_proxy_by_default_the_header_is_ignored():
    assert who(TrustedProxies(), "127.0.0.1", "203.0.113.9") == "127.0.0.1"
    assert TrustedProxies().client("192.0.2.1", 5, ["203.0.113.9"]) == Address("192.0.2.1", 5)


def test_an_untrusted_peer_forging_the_header_changes_nothing():
    assert who(LOCAL, "192.0.2.7", "203.0.113.9") == "192.0.2.7"
    assert who(NETS, "192.0.2.7", "10.1.1.1, 203.0.113.9") == "192.0.2.7"
    assert who(FWD, "192.0.2.7", "for=203.0.113.9") == "192.0.2.7"


def test_a_trusted_peer_names_the_client():
    assert LOCAL.client("127.0.0.1", 4000, ["203.0.113.9"]) == Address("203.0.113.9", None)
    assert who(NETS, "10.2.3.4", "203.0.113.9") == "203.0.113.9"
    assert who(NETS, "::1", "203.0.113.9") == "203.0.113.9"


def test_a_trusted_peer_without_the_header_is_itself():
    assert LOCAL.client("127.0.0.1", 4000, []) == Address("127.0.0.1", 4000)
    assert who(LOCAL, "127.0.0.1", "") == "127.0.0.1"


def test_the_chain_is_read_from_the_right_past_trusted_proxies_only():
    # what a client wrote sits left of what the proxy appended: never read
    assert who(LOCAL, "127.0.0.1", "198.51.100.1, 203.0.113.9") == "203.0.113.9"
    assert who(NETS, "10.0.0.1", "198.51.100.1, 203.0.113.9, 10.9.9.9, 10.0.0.2") == "203.0.113.9"
    # a trusted address left of an untrusted one is not reached
    assert who(NETS, "10.0.0.1", "10.5.5.5, 203.0.113.9") == "203.0.113.9"
    # several header lines are one list, in order
    assert who(NETS, "10.0.0.1", "198.51.100.1", "203.0.113.9, 10.0.0.3") == "203.0.113.9"


def test_every_hop_trusted_is_the_left_most():
    assert who(NETS, "10.0.0.1", "10.1.0.1, 10.2.0.1") == "10.1.0.1"


@pytest.mark.parametrize("garbage", ["unknown", "not-an-ip", "999.1.1.1", "1.2.3.4:99999", "[::1", "_hidden",
                                     "1.2.3.4 5.6.7.8", "\x00", "'1.2.3.4'"])
def test_garbage_where_the_client_should_be_counts_as_the_proxy_that_passed_it(garbage):
    assert who(LOCAL, "127.0.0.1", garbage) == "127.0.0.1"
    # behind two proxies: the inner one's address (the last hop we trust that spoke)
    assert who(NETS, "10.0.0.1", f"{garbage}, 10.7.7.7") == "10.7.7.7"
    # garbage left of the client is never read
    assert who(LOCAL, "127.0.0.1", f"{garbage}, 203.0.113.9") == "203.0.113.9"


def test_ipv6_and_ports():
    assert who(LOCAL, "127.0.0.1", "2001:DB8:0::1") == "2001:db8::1"
    assert LOCAL.client("127.0.0.1", 1, ["[2001:db8::1]:4711"]) == Address("2001:db8::1", 4711)
    assert LOCAL.client("127.0.0.1", 1, ["203.0.113.9:8080"]) == Address("203.0.113.9", 8080)
    assert who(LOCAL, "127.0.0.1", "::ffff:203.0.113.9") == "203.0.113.9"      # IPv4-mapped: one address
    assert who(NETS, "::1", "2001:db8::7, fd00::1") == "2001:db8::7"
    assert who(LOCAL, "127.0.0.1", "fe80::1%eth0") == "fe80::1"


def test_forwarded_rfc_7239():
    assert who(FWD, "127.0.0.1", "for=203.0.113.9") == "203.0.113.9"
    assert who(FWD, "127.0.0.1", 'for="[2001:db8:cafe::17]:4711";proto=https') == "2001:db8:cafe::17"
    assert FWD.client("127.0.0.1", 1, ['for="[2001:db8:cafe::17]:4711"']) == Address("2001:db8:cafe::17", 4711)
    assert who(FWD, "127.0.0.1", "For=198.51.100.1;by=10.0.0.1, for=203.0.113.9;proto=http") == "203.0.113.9"
    assert who(FWD, "127.0.0.1", "for=198.51.100.1", "for=203.0.113.9, for=10.0.0.4") == "203.0.113.9"
    # a comma or semicolon inside a quoted value does not split
    assert who(FWD, "127.0.0.1", 'for=203.0.113.9;x="a,b;c", for=10.0.0.4') == "203.0.113.9"
    # unknown, obfuscated, or no for= where the client should be: the proxy
    for garbage in ("for=unknown", "for=_hidden", "proto=http", 'for="[2001:db8::1"', "for=", ";;,,"):
        assert who(FWD, "127.0.0.1", garbage) == "127.0.0.1", garbage


def test_only_the_chosen_header_is_read():
    """X-Forwarded-For by default: a Forwarded header a client sends through a proxy that
    only appends to X-Forwarded-For would otherwise be believed (and the other way round)."""
    headers = {"x-forwarded-for": ["203.0.113.9"], "forwarded": ["for=198.51.100.66"]}
    assert LOCAL.header == "x-forwarded-for" and FWD.header == "forwarded"
    assert who(LOCAL, "127.0.0.1", *headers[LOCAL.header]) == "203.0.113.9"
    assert who(FWD, "127.0.0.1", *headers[FWD.header]) == "198.51.100.66"


def test_chains_parse_hop_by_hop():
    assert xff_chain(["1.2.3.4, bad", "[::1]:80"]) == [Address("1.2.3.4"), None, Address("::1", 80)]
    assert forwarded_chain(['for=1.2.3.4;proto=http, by=x, for="[::1]"']) == [Address("1.2.3.4"), None,
                                                                               Address("::1")]
    assert node(" 1.2.3.4 ") == Address("1.2.3.4")
    assert node("1.2.3.4:0") is None and node("[::1]x") is None


def test_a_long_chain_is_read_from_its_right_end():
    """16 KiB of hops (about the most a request head holds)."""
    line = ", ".join(["198.51.100.1"] * 1200 + ["203.0.113.9"])
    assert who(LOCAL, "127.0.0.1", line) == "203.0.113.9"


@pytest.mark.parametrize("spec, says", [
    ("10.0.0.1/8", "did you mean 10.0.0.0/8?"),
    ("proxy.example", "not an IP address or network"),
    ("", "not an IP address or network"),
    ("10.0.0.0/33", "not an IP address or network"),
])
def test_bad_trusted_proxy_values_say_what_is_wrong(spec, says):
    with pytest.raises(ValueError, match=says):
        TrustedProxies.parse([spec])


def test_bad_header_name_says_which_are_known():
    with pytest.raises(ValueError, match="X-Forwarded-For or Forwarded"):
        TrustedProxies.parse(["127.0.0.1"], "X-Real-IP")
    assert TrustedProxies.parse([], "forwarded").header == "forwarded"
