"""A malformed intent whose id can be read is still answered as that intent, in order:
`rejected` with the codec's code and path, after the answers to the intents sent before
it. Found: it got a bare `error` (no ref, sent at once), so a client waiting on that id
never heard of it, and the error could overtake earlier answers."""

from __future__ import annotations

import msgpack
import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from serverkit import ready_all, running_server, seated


def _raw(**fields) -> bytes:
    return msgpack.packb({"type": "intent", **fields})


@pytest.mark.parametrize("bad, code, path", [
    (_raw(id=2, action={"kind": "draw"}, extra=1), "unknown_field", "$.extra"),
    (_raw(id=2), "missing_field", "$.action"),
    (_raw(id=2, action=[1, 2]), "bad_field", "$.action"),
])
async def test_a_malformed_intent_is_rejected_as_itself_in_order(tmp_path, bad, code, path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                ann = conns[0]
                await ready_all(conns)
                # three intents in a row, the middle one malformed, before any answer
                await ann.send(m.Intent(1, {"kind": "draw"}))
                await ann.send_raw(bad)
                await ann.send(m.Intent(3, {"kind": "draw"}))
                answers = []
                while len(answers) < 3:
                    x = await ann.receive()
                    assert not isinstance(x, m.Error), x
                    if isinstance(x, (m.Accepted, m.Rejected)):
                        answers.append(x)
                assert [a.intent for a in answers] == [1, 2, 3], answers
                r = answers[1]
                assert isinstance(r, m.Rejected) and r.code == code and r.reason.startswith(path + ": "), r


async def test_a_malformed_frame_without_a_readable_intent_id_is_an_error_naming_its_type(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann:
                await ann.send_raw(_raw(id="seven", action={"kind": "draw"}))
                e = await ann.receive_until(lambda x: isinstance(x, m.Error))
                assert e.code == "bad_field" and e.path == "$.id" and e.ref == "intent", e
                await ann.send_raw(msgpack.packb({"type": "list_tables", "x": 1}))
                e = await ann.receive_until(lambda x: isinstance(x, m.Error))
                assert e.ref == "list_tables", e
                await ann.send_raw(b"\xc1")
                e = await ann.receive_until(lambda x: isinstance(x, m.Error))
                assert e.ref is None, e
