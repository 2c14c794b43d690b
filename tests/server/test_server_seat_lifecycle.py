"""The seat and lobby lifecycle over real sockets on 127.0.0.1: leave, rejoin,
spectate and join at every stage, races for one seat or one token, the caps, and table
creation with bad settings, for all four games."""

from __future__ import annotations

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.headless.wire import ConnectionClosed
from wildtable.protocol import messages as m

from serverkit import answer, create, info, join, reply_to, running_server, server_config

GAMES = ["run-wild", "go-wild", "wild-shots", "go-fish-wildcard"]
QUIET = {"run-wild": {}, "go-wild": {"turn_timer": 0.0}, "wild-shots": {"turn_timer": 0.0},
         "go-fish-wildcard": {"turn_timer": 0.0}}




@pytest.mark.parametrize("game", GAMES)
async def test_a_seat_left_while_waiting_is_free_and_the_game_waits_for_it(tmp_path, game):
    """Found: a seat released by `leave` before the deal kept its player's name, and the
    table counted named seats as taken: once the other seats filled, the game dealt with
    the released seat empty, and list_tables showed the leaver as seated."""
    with trio.fail_after(10):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "cat") as cat:
                table = await create(ann, game, 2, **QUIET[game])
                j = await join(ann, table, 0)
                await ann.send(m.Leave())
                assert isinstance(await answer(ann), m.Left)
                await join(bob, table, 1)
                t = await info(cat, table)
                assert t["status"] == "waiting", t
                assert t["players"] == [None, "bob"] and t["connected"] == [False, True], t
                assert server.tables[table].seq == 0            # nothing dealt
                await bob.send(m.Intent(1, {"kind": "ready"}))
                r = await reply_to(bob, 1)
                assert isinstance(r, m.Rejected) and r.code == "not_started", r
                # the leaver's token is dead; the seat is free to anyone, and then play starts
                await ann.send(m.Rejoin(table, 0, j.token))
                assert (await answer(ann)).code == "bad_token"
                j2 = await join(cat, table, None)
                assert j2.seat == 0
                await bob.receive_until(lambda x: isinstance(x, m.Update) and x.seq == 1)
                t = await info(ann, table)
                assert t["status"] in ("playing", "over") and t["players"] == ["cat", "bob"], t
                assert t["connected"] == [True, True]


async def test_concurrent_creates_respect_the_table_cap(tmp_path):
    """Found: the table cap was checked before the log file was created in a thread and
    counted only after, so creates arriving together all passed it."""
    with trio.fail_after(10):
        async with running_server(server_config(tmp_path / "data", max_tables=2)) as (server, url):
            answers = []
            async with trio.open_nursery() as nursery:
                async def one(i):
                    async with connect(url, f"c{i}") as c:
                        await c.send(m.CreateTable(GAMES[i % 4], 2, {}))
                        answers.append(await c.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error))))
                for i in range(8):
                    nursery.start_soon(one, i)
            created = [a for a in answers if isinstance(a, m.TableCreated)]
            refused = [a for a in answers if isinstance(a, m.Error)]
            assert len(created) == 2 and len(server.tables) == 2, answers
            assert {a.code for a in refused} == {"too_many_tables"} and len(refused) == 6


class Gate:
    """Holds the log writer's commits while closed, so that requests pile up in a
    table's inbox and the arbiter takes them as one group."""

    def __init__(self, writer):
        self.writer, self.real, self.open = writer, writer.commit, trio.Event()
        self.real_append = writer.append        # (refusals alone are appended, with no fsync of their own)
        writer.commit = self.commit
        writer.append = self.append
        self.held = 0

    async def commit(self, log, data):
        self.held += 1
        await self.open.wait()
        await self.real(log, data)

    async def append(self, log, data):
        self.held += 1
        await self.open.wait()
        await self.real_append(log, data)


async def until(pred, what):
    """Wait up to 5 s for ``pred()``; a timeout fails saying what was awaited."""
    with trio.move_on_after(5):
        while not pred():
            await trio.sleep(0.005)
    assert pred(), f"timed out waiting for {what}"


@pytest.mark.parametrize("game", GAMES)
async def test_a_rejoin_or_spectate_grouped_after_an_update_gets_its_snapshot_first(tmp_path, game):
    """Found: updates went to whoever was at the table when they were delivered, not when
    they happened, so a rejoin or spectate handled in the same group as the deal got
    `update` seq 1 before its `joined`/`spectating` snapshot of seq 1 (an update for a
    table it had not been told it was at, and that seq twice)."""
    with trio.fail_after(10):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "cat") as cat, \
                    connect(url, "ann2") as ann2, connect(url, "wes") as wes:
                table = await create(cat, game, 3, **QUIET[game])
                t = server.tables[table]
                token = (await join(ann, table, 0)).token
                await join(cat, table, 2)
                await ann.close()                                   # seat 0 held, its player gone
                await until(lambda: t.seats[0].conn is None, "ann gone")
                gate = Gate(server.writer)
                await cat.send(m.Intent(1, {"kind": "ready"}))      # refused (not started), logged: held
                await until(lambda: gate.held == 1, "the refusal's commit held")
                await bob.send(m.Join(table, 1))                    # completes the table: the deal
                await ann2.send(m.Rejoin(table, 0, token))
                await wes.send(m.Spectate(table))
                await until(lambda: t.inbox.statistics().current_buffer_used == 3, "three waiting")
                gate.open.set()
                for conn, first in ((ann2, m.Joined), (wes, m.Spectating)):
                    got = []
                    snap = await conn.receive_until(lambda x: isinstance(x, first), keep=got)
                    assert not [x for x in got if isinstance(x, (m.Update, m.Players, m.GameOver))], (first, got)
                    assert snap.seq == t.seq >= 1


TIMED = {"go-wild": {"turn_timer": 0.02, "target": 20}, "wild-shots": {"turn_timer": 0.02},
         "go-fish-wildcard": {"turn_timer": 0.02}}


@pytest.mark.parametrize("game", sorted(TIMED))
async def test_disconnect_rejoin_leave_and_take_over_a_seat_mid_game(tmp_path, game):
    """A turn-based game played by its turn timer: seat 1 drops and rejoins with its
    token, seat 0 leaves on its own turn (the timer plays on for the empty seat) and a
    newcomer joins that seat mid-game. Every snapshot and update each of them got is the
    engine's view of the state the log replays to at that seq, gapless; list_tables
    tells the truth at each step."""
    from wildtable.protocol.logfmt import read_log
    from serverkit import check_views, replay_by_seq

    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "cat") as cat, \
                    connect(url, "bob2") as bob2, connect(url, "wes") as wes:
                table = await create(ann, game, 2, **TIMED[game])
                t = server.tables[table]
                got = {k: [] for k in ("ann", "bob", "bob2", "cat")}
                got["ann"].append(await join(ann, table, 0))
                j1 = await join(bob, table, 1)
                got["bob"].append(j1)
                # seat 1 drops after a few moves: its seat stays held, shown as not connected
                got["bob"].append(await bob.receive_until(lambda x: isinstance(x, m.Update) and x.seq >= 3,
                                                          keep=got["bob"]))
                await bob.close()
                await until(lambda: t.seats[1].conn is None, "bob gone")
                i = await info(wes, table)
                assert i["status"] == "playing" and i["players"] == ["ann", "bob"] and i["connected"] == [True, False]
                # seat 0 leaves on its own turn; the timer plays on for the empty seat
                got["ann"].append(await ann.receive_until(lambda x: isinstance(x, m.Update) and x.view.get("turn") == 0,
                                                          keep=got["ann"]))
                await ann.send(m.Leave())
                got["ann"].append(await ann.receive_until(lambda x: isinstance(x, m.Left), keep=got["ann"]))
                left_at = t.seq
                await until(lambda: t.seq >= left_at + 2, "the timer plays for both empty seats")
                i = await info(wes, table)
                assert i["players"] == ["ann", "bob"] and i["connected"] == [False, False], i
                # bob rejoins from a new connection; cat takes ann's released seat
                await bob2.send(m.Rejoin(table, 1, j1.token))
                got["bob2"].append(await answer(bob2))
                assert isinstance(got["bob2"][0], m.Joined) and got["bob2"][0].token == j1.token
                got["cat"].append(await join(cat, table, None))
                assert got["cat"][0].seat == 0
                i = await info(wes, table)
                assert i["players"] == ["cat", "bob"] and i["connected"] == [True, True], i
                over = await bob2.receive_until(lambda x: isinstance(x, m.GameOver), timeout=25, keep=got["bob2"])
                await cat.receive_until(lambda x: isinstance(x, m.GameOver), keep=got["cat"])
                i = await info(wes, table)
                assert i["status"] == "over" and over.seq == t.seq
                # after the game: join is refused, rejoin and spectate show the final table
                async with connect(url, "late") as late:
                    await late.send(m.Join(table, None))
                    assert (await answer(late)).code == "game_over"
                    await late.send(m.Spectate(table))
                    s = await answer(late)
                    assert isinstance(s, m.Spectating) and s.seq == t.seq
            path = t.logfile.path
    log = replay_by_seq(read_log(path.read_bytes()))
    check_views(got["ann"], log, 0)
    check_views(got["bob"], log, 1)
    assert len(check_views(got["bob2"], log, 1)) == t.seq - got["bob2"][0].seq
    assert len(check_views(got["cat"], log, 0)) == t.seq - got["cat"][0].seq
    # every update up to her leaving, gapless (the timer, 0.02 s, may move again between her
    # leave and the test reading t.seq, so left_at bounds her last update without naming it)
    seqs = [x.seq for x in got["ann"] if isinstance(x, m.Update)]
    assert seqs == list(range(1, len(seqs) + 1)) and seqs[-1] <= left_at, (seqs, left_at)


BAD_SETTINGS = {
    "run-wild": [({"rounds": 0}, "rounds"), ({"rounds": "2"}, "rounds"), ({"rounds": True}, "rounds"),
                 ({"idle_timeout": float("nan")}, "idle_timeout"), ({"hand_size": 19}, "hand_size"),
                 ({"max_set_size": 2}, "max_set_size"), ({"round": 2}, "round")],
    "go-wild": [({"target": 0}, "target"), ({"target": 2.5}, "target"), ({"turn_timer": -1}, "turn_timer"),
                ({"turn_timer": float("inf")}, "turn_timer"), ({"first_player": 2}, "first_player"),
                ({"first_player": None}, "first_player")],
    "wild-shots": [({"turn_timer": float("nan")}, "turn_timer"), ({"first_player": -2}, "first_player"),
                   ({"first_player": 3}, "first_player"), ({"symbols": {"black 1": "hat"}}, "symbols"),
                   ({"snake_oil": {"hat": 13}}, "snake_oil"), ({"snake_oil": {"hat": "x"}}, "snake_oil"),
                   ({"rotate_starter": 1}, "rotate_starter")],
    "go-fish-wildcard": [({"dealer": 2}, "dealer"), ({"dealer": -2}, "dealer"),
                         ({"turn_timer": float("nan")}, "turn_timer"), ({"turn_timer": [1]}, "turn_timer"),
                         ({"deck": {"a": {"b": 1}}}, "deck")],
}


@pytest.mark.parametrize("game", GAMES)
async def test_bad_tables_are_refused_clearly_and_the_connection_stays_usable(tmp_path, game):
    with trio.fail_after(10):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann:
                for settings, key in BAD_SETTINGS[game]:
                    await ann.send(m.CreateTable(game, 2, settings))
                    e = await answer(ann, (m.Error, m.TableCreated))
                    assert isinstance(e, m.Error) and e.code == "bad_settings" and e.ref == "create_table", (settings, e)
                    assert repr(key) in e.message, (settings, e.message)
                for seats in (1, 7, 16):
                    await ann.send(m.CreateTable(game, seats, {}))
                    e = await answer(ann, (m.Error, m.TableCreated))
                    assert e.code == "bad_seats" and str(seats) in e.message, e
                await ann.send(m.CreateTable(game.upper(), 2, {}))
                e = await answer(ann, (m.Error, m.TableCreated))
                assert e.code == "unknown_game" and game in e.message, e
                assert server.tables == {} and not list((tmp_path / "data").glob("*.wlog"))
                table = await create(ann, game, 2, **QUIET[game])     # still usable
                assert (await join(ann, table, 1)).seat == 1


async def test_lobby_errors_at_each_stage_leave_the_connection_usable(tmp_path):
    with trio.fail_after(10):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "wes") as wes:
                table = await create(ann, "go-wild", 2, turn_timer=0.0)
                await wes.send(m.Leave())
                assert (await answer(wes)).code == "not_at_table"
                for msg in (m.Join("tnope", None), m.Spectate("tnope"), m.Rejoin("tnope", 0, "x")):
                    await wes.send(msg)
                    assert (await answer(wes)).code == "no_such_table"
                await wes.send(m.Join(table, 2))
                e = await answer(wes)
                assert e.code == "no_such_seat" and e.path == "$.seat"
                # a spectator must leave before joining
                await wes.send(m.Spectate(table))
                assert isinstance(await answer(wes), m.Spectating)
                assert (await info(ann, table))["spectators"] == 1
                await wes.send(m.Join(table, None))
                assert (await answer(wes)).code == "already_at_table"
                await wes.send(m.Leave())
                assert isinstance(await answer(wes), m.Left)
                assert (await info(ann, table))["spectators"] == 0
                await join(wes, table, 0)
                await bob.send(m.Join(table, 0))
                e = await answer(bob)
                assert e.code == "seat_taken" and "1" in e.message
                await join(bob, table, None)
                await ann.send(m.Join(table, None))
                assert (await answer(ann)).code == "table_full"
                i = await info(ann, table)
                assert i["status"] == "playing" and i["players"] == ["wes", "bob"] and i["connected"] == [True, True]


@pytest.mark.parametrize("game", GAMES)
async def test_races_for_one_seat_and_one_token_have_one_winner(tmp_path, game):
    with trio.fail_after(10):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "host") as host:
                table = await create(host, game, 2, **QUIET[game])
                t = server.tables[table]
                async with connect(url, "a") as a, connect(url, "b") as b, connect(url, "c") as c:
                    res = {}

                    async def try_join(conn, key):
                        await conn.send(m.Join(table, 0))
                        res[key] = await answer(conn)
                    async with trio.open_nursery() as n:
                        for conn, key in ((a, "a"), (b, "b"), (c, "c")):
                            n.start_soon(try_join, conn, key)
                    winners = [k for k, v in res.items() if isinstance(v, m.Joined)]
                    assert len(winners) == 1 and all(v.code == "seat_taken" for k, v in res.items() if k not in winners), res
                    token = res[winners[0]].token
                    i = await info(host, table)
                    assert i["players"] == [winners[0], None] and i["status"] == "waiting"
                # the winner has gone; three connections race to rejoin with its token
                await until(lambda: t.seats[0].conn is None, "winner gone")
                async with connect(url, "x") as x, connect(url, "y") as y, connect(url, "z") as z:
                    conns = {"x": x, "y": y, "z": z}
                    firsts = {}

                    async def try_rejoin(key):
                        await conns[key].send(m.Rejoin(table, 0, token))
                        firsts[key] = await answer(conns[key])
                    async with trio.open_nursery() as n:
                        for key in conns:
                            n.start_soon(try_rejoin, key)
                    # each resumed the seat in turn (all joined); all but the last were then
                    # taken over and closed
                    assert all(isinstance(v, m.Joined) for v in firsts.values()), firsts
                    holder = t.seats[0].conn
                    alive = []
                    for key, conn in conns.items():
                        try:
                            e = await conn.receive_until(lambda x: isinstance(x, m.Error), timeout=0.5)
                            assert e.code == "seat_taken_over"
                            with pytest.raises(ConnectionClosed):
                                await conn.receive_until(lambda x: False, timeout=2)
                        except trio.TooSlowError:
                            alive.append(key)
                    assert len(alive) == 1 and holder is not None and holder.name == alive[0]
                    i = await info(host, table)
                    assert i["connected"] == [True, False] and i["players"][0] is not None
                    await conns[alive[0]].send(m.Leave())
                    assert isinstance(await answer(conns[alive[0]]), m.Left)
                    i = await info(host, table)
                    assert i["players"] == [None, None] and i["connected"] == [False, False]


async def test_a_connection_whose_seat_is_taken_over_hears_its_answers_first(tmp_path):
    """Found: `seat_taken_over` was sent, and the connection closed, while the arbiter
    handled the rejoin, before the group was durable: the answers already owed to the old
    connection in that group (here a `rejected` for its intent) were dropped, so one of
    its intents never got an answer."""
    with trio.fail_after(10):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "ann2") as ann2:
                table = await create(bob, "wild-shots", 2, turn_timer=0.0)
                t = server.tables[table]
                token = (await join(ann, table, 0)).token
                gate = Gate(server.writer)
                await bob.send(m.Intent(1, {"kind": "play", "card": 0}))    # not seated: not logged
                assert (await reply_to(bob, 1)).code == "not_seated"
                await bob.send(m.Join(table, 1))                            # completes: held
                await until(lambda: gate.held == 1, "the join's commit held")
                await ann.send(m.Intent(7, {"kind": "play", "card": 0}))
                await ann2.send(m.Rejoin(table, 0, token))
                await until(lambda: t.inbox.statistics().current_buffer_used == 2, "two waiting")
                gate.open.set()
                got = []
                e = await ann.receive_until(lambda x: isinstance(x, m.Error), keep=got)
                assert e.code == "seat_taken_over"
                assert [x.intent for x in got if isinstance(x, (m.Accepted, m.Rejected))] == [7], got
                with pytest.raises(ConnectionClosed):
                    await ann.receive_until(lambda x: False, timeout=3)
                j = await answer(ann2)
                assert isinstance(j, m.Joined) and j.seq == t.seq
