"""The cluster's additions to the protocol (docs/PROTOCOL.md, "Clusters"): `redirect`,
`create_table.here`, `welcome.nodes`. Both sides decode strictly (a field a message does
not have is `unknown_field`), so the new fields are left out of a frame at their defaults:
a single server's `welcome` and a client's ordinary `create_table` are the very frames of
before, which older clients and servers read as they always did."""

from __future__ import annotations

import msgpack

from wildtable.protocol import codec
from wildtable.protocol import messages as m


def _fields(message) -> dict:
    return msgpack.unpackb(m.encode(message), raw=False)


def test_a_single_servers_welcome_is_the_welcome_of_before():
    welcome = m.Welcome(m.PROTOCOL_VERSION, "wildtable 0.1.0", 65536, 20.0)
    assert _fields(welcome) == {"type": "welcome", "version": m.PROTOCOL_VERSION, "server": "wildtable 0.1.0",
                                "max_frame": 65536, "heartbeat": 20.0}
    cluster = m.Welcome(m.PROTOCOL_VERSION, "wildtable 0.1.0", 65536, 20.0, ("ws://a:1", "ws://b:2"))
    assert _fields(cluster)["nodes"] == ["ws://a:1", "ws://b:2"]
    assert m.decode(m.encode(cluster)).nodes == ("ws://a:1", "ws://b:2")


def test_create_table_says_here_only_when_it_means_it():
    plain = m.CreateTable("run-wild", 2, {}, "friday")
    assert "here" not in _fields(plain)
    assert m.decode(m.encode(plain), max_size=codec.MAX_FRAME).here is False
    here = m.CreateTable("run-wild", 2, {}, "friday", here=True)
    assert _fields(here)["here"] is True
    assert m.decode(m.encode(here), max_size=codec.MAX_FRAME) == here


def test_redirect_names_the_node_the_message_and_the_table():
    r = m.Redirect("ws://10.0.0.2:8765", "join", "t1", "t1 is played on another node")
    assert _fields(r) == {"type": "redirect", "url": "ws://10.0.0.2:8765", "ref": "join", "table": "t1",
                          "reason": "t1 is played on another node"}
    assert m.decode(m.encode(r)) == r
    # a create_table is redirected before there is a table: table and reason may be left out
    assert m.decode(codec.packb({"type": "redirect", "url": "ws://b:2", "ref": "create_table"})) == \
        m.Redirect("ws://b:2", "create_table", None, "")
    assert "redirect" not in m.CLIENT_MESSAGES        # the server sends it; a client may not
