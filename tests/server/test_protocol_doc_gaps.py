"""What docs/PROTOCOL.md says about the points a client written from it alone tripped on,
held against a real server over real sockets, with raw msgpack frames read by a raw
wsproto parser (so an `error` before or after the close frame shows as it is sent)."""

from __future__ import annotations

import msgpack
import trio
from wsproto.events import BytesMessage, CloseConnection

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from rawclient import RawClient
from serverkit import answer, create, join, running_server, server_config


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


async def _raw(rc: RawClient, obj: dict) -> None:
    await rc.stream.send_all(rc.ws.send(BytesMessage(msgpack.packb(obj, use_bin_type=True))))


async def _said_hello(port: int) -> RawClient:
    rc = await RawClient.open(port)
    await _raw(rc, {"type": "hello", "version": m.PROTOCOL_VERSION, "name": "raw"})
    assert isinstance(await rc.message(), m.Welcome)
    return rc


async def test_joined_at_a_waiting_table_carries_seq_0_and_the_first_record_is_seq_1(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as a, connect(url, "bob") as b:
                table = await create(a, "run-wild", 2)
                seqs = [(await join(a, table, 0)).seq]
                assert server.tables[table].seq == 0          # no log record yet: seq 0 is none
                seqs.append((await join(b, table, 1)).seq)    # the last seat: the deal follows
                first = await a.receive_until(lambda x: isinstance(x, m.Update))
    assert seqs == [0, 0] and first.seq == 1, (seqs, first)


async def test_intent_ids_outside_0_to_2_53_get_an_error_not_a_rejection(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            rc = await _said_hello(_port(url))
            for good in (0, 2**53):
                await _raw(rc, {"type": "intent", "id": good, "action": {"kind": "draw"}})
                got = await rc.message()
                assert isinstance(got, m.Rejected) and got.intent == good and got.code == "not_seated", got
            for bad in (-1, 2**53 + 1):
                await _raw(rc, {"type": "intent", "id": bad, "action": {"kind": "draw"}})
                got = await rc.message()
                assert isinstance(got, m.Error), got
                assert (got.code, got.path, got.ref) == ("bad_field", "$.id", "intent"), got


async def test_seat_16_is_bad_field_and_a_seat_the_table_lacks_is_no_such_seat(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as a:
                table = await create(a, "run-wild", 2)
                for seat, code in ((16, "bad_field"), (-1, "bad_field"), (2, "no_such_seat"), (15, "no_such_seat")):
                    await a.send(m.Join(table, seat))
                    e = await answer(a)
                    assert isinstance(e, m.Error) and (e.code, e.path) == (code, "$.seat"), (seat, e)
                    await a.send(m.Rejoin(table, seat, "x"))
                    e = await answer(a)
                    assert isinstance(e, m.Error) and (e.code, e.path) == (code, "$.seat"), (seat, e)
                for seats, code in ((17, "bad_field"), (0, "bad_field"), (16, "bad_seats"), (1, "bad_seats")):
                    await a.send(m.CreateTable("run-wild", seats, {}))
                    e = await a.receive_until(lambda x: isinstance(x, (m.Error, m.TableCreated)))
                    assert isinstance(e, m.Error) and e.code == code, (seats, e)


async def test_the_21st_bad_frame_gets_its_error_then_the_close(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            rc = await _said_hello(_port(url))
            for i in range(21):
                await _raw(rc, {"type": "launch"})
            for i in range(21):
                got = await rc.event()
                assert isinstance(got, bytes), (i, got)
                e = m.decode(got)
                assert isinstance(e, m.Error) and e.code == "unknown_message_type", (i, e)
            close = await rc.event()
            assert isinstance(close, CloseConnection) and close.code == 1008, close
            await rc.stream.aclose()


async def test_lobby_errors_do_not_count_as_bad_frames(tmp_path):
    """40 lobby errors (no_such_table, bad_settings, unknown_game, not_at_table) and the
    connection still serves; then 20 bad frames are still tolerated, the 21st closes."""
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            rc = await _said_hello(_port(url))
            lobby = [({"type": "join", "table": "t00000000", "seat": None}, "no_such_table"),
                     ({"type": "create_table", "game": "run-wild", "seats": 2, "settings": {"nope": 1}}, "bad_settings"),
                     ({"type": "create_table", "game": "chess", "seats": 2}, "unknown_game"),
                     ({"type": "leave"}, "not_at_table")]
            for i in range(40):
                frame, code = lobby[i % len(lobby)]
                await _raw(rc, frame)
                e = await rc.message()
                assert isinstance(e, m.Error) and e.code == code, e
            for i in range(20):
                await _raw(rc, {"type": "launch"})
                assert (await rc.message()).code == "unknown_message_type"
            await _raw(rc, {"type": "list_tables"})
            assert isinstance(await rc.message(), m.TableList)
            await _raw(rc, {"type": "launch"})
            assert (await rc.message()).code == "unknown_message_type"
            close = await rc.event()
            assert isinstance(close, CloseConnection) and close.code == 1008, close
            await rc.stream.aclose()


async def test_hello_counts_against_the_burst(tmp_path):
    """A burst of 10 (and a refill too slow to matter): hello and 9 more messages pass,
    the 11th message is dropped with rate_limited."""
    with trio.fail_after(20):
        async with running_server(server_config(tmp_path / "data", rate_limit=0.001, rate_burst=10)) as (server, url):
            rc = await _said_hello(_port(url))
            for i in range(10):
                await _raw(rc, {"type": "list_tables"})
            for i in range(9):
                assert isinstance(await rc.message(), m.TableList), i
            e = await rc.message()
            assert isinstance(e, m.Error) and (e.code, e.ref) == ("rate_limited", "list_tables"), e
            await rc.stream.aclose()


async def test_settings_hold_lists_and_strings_past_the_field_caps(tmp_path):
    """Inside the free-form `settings` map only nesting (16), string keys, the integer
    range and the frame cap hold: a 5,000-item list or a 5,000-character string there is
    the game's to refuse (bad_settings), not the codec's (bad_field)."""
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as a:
                for settings in ({"rounds": [0] * 5000}, {"rounds": "x" * 5000}, {"x" * 5000: 1},
                                 {"symbols": {"a": [1] * 600}}):
                    await a.send(m.CreateTable("wild-shots" if "symbols" in settings else "run-wild", 2, settings))
                    e = await a.receive_until(lambda x: isinstance(x, (m.Error, m.TableCreated)))
                    assert isinstance(e, m.Error) and e.code == "bad_settings", e
                deep: dict = {"rounds": 1}
                for _ in range(16):
                    deep = {"a": deep}
                await a.send(m.CreateTable("run-wild", 2, deep))
                e = await a.receive_until(lambda x: isinstance(x, (m.Error, m.TableCreated)))
                assert isinstance(e, m.Error) and e.code == "bad_field" and e.path.startswith("$.settings"), e
