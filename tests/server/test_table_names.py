"""A table's name is shown to everyone who lists the tables, so, like a player's name, it
may hold no control, escape, formatting or line-breaking character: `create_table` with
one gets `bad_field` at `$.name` (the codec's check, shared by the server and the client),
and no table is made. Printable text of any script, brackets and all, is kept as sent."""

from __future__ import annotations

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.errors import ProtocolError

from serverkit import running_server

HOSTILE = [
    "\x1b[2J\x1b[31mred",           # ANSI escape: clears a terminal, colours the rest
    "two\nlines",                   # forges a line in the line mode
    "tab\there",
    "nul\x00",
    "\u202egnp.exe",                # right-to-left override
    "next\u0085line",               # NEL
    "line\u2028sep",
    "bell\x07",
    "del\x7f",
]
PRINTABLE = "[/] [link=https://example.com]x[/link] Ann's table \u00fc\u4e2d"


@pytest.mark.parametrize("name", HOSTILE)
def test_codec_refuses_an_unprintable_table_name(name):
    frame = m.encode(m.CreateTable("run-wild", 2, {}, name))
    with pytest.raises(ProtocolError) as e:
        m.MESSAGES.decode_bytes(frame)
    assert e.value.code == "bad_field" and e.value.path == "$.name", e.value


async def test_server_refuses_unprintable_table_names_and_keeps_printable_ones(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as c:
                for name in HOSTILE:
                    await c.send(m.CreateTable("run-wild", 2, {}, name))
                    e = await c.receive_until(lambda x: isinstance(x, (m.Error, m.TableCreated)))
                    assert isinstance(e, m.Error), (name, e)
                    assert (e.code, e.path, e.ref) == ("bad_field", "$.name", "create_table"), (name, e)
                    assert "U+" in e.message and "not printable" in e.message, e
                await c.send(m.CreateTable("run-wild", 2, {}, PRINTABLE))
                made = await c.receive_until(lambda x: isinstance(x, (m.Error, m.TableCreated)))
                assert isinstance(made, m.TableCreated), made
                await c.send(m.ListTables())
                listed = await c.receive_until(lambda x: isinstance(x, m.TableList))
            assert [t["name"] for t in listed.tables] == [PRINTABLE], listed.tables
