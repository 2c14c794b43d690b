"""Run Wild over real WebSockets on 127.0.0.1: whole games, races, Draw-3, Out!,
reconnects, restarts, malformed frames and leaks."""

from __future__ import annotations

import random
import subprocess
import sys

import msgpack
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.engine import ChanceOutcome, TableConfig, game as find_game, state_hash
from wildtable.protocol.logfmt import read_log
from wildtable.protocol.replay import replay

from scripted import play_to_end
from serverkit import check_views, create, join, replay_by_seq, reply_to, running_server, seated, server_config

RW = find_game("run-wild")


def seeded_chance(seed: int):
    rng = random.Random(seed)

    def chance(size: int):
        p = list(range(size))
        rng.shuffle(p)
        return p
    return chance


def dealt(seats: int, seed: int, settings: dict | None = None):
    """The state the server reaches at the first "Go!" with ``seeded_chance(seed)``,
    every seat having said ready (in seat order)."""
    chance = seeded_chance(seed)
    s = RW.new_table(TableConfig("run-wild", seats, settings or {}))
    for _ in range(50):
        if (req := RW.pending_chance(s)) is not None:
            s, _ = RW.apply(s, None, ChanceOutcome(req.purpose, tuple(chance(req.size))))
        elif (a := RW.auto_action(s)) is not None:
            s, _ = RW.apply(s, None, a)
        elif RW.view(s, None)["phase"] == "playing":
            return s
        else:
            s, _ = RW.apply(s, RW.to_move(s)[0], RW.ACTIONS.decode({"kind": "ready"}))
    raise AssertionError("the round did not start")


def log_path(server, table):
    return server.tables[table].logfile.path


async def test_whole_game_between_scripted_clients_then_replay_verify(tmp_path):
    with trio.fail_after(120):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 4) as (table, conns, joined):
                results = [None] * 4

                async def player(i):
                    results[i] = await play_to_end(conns[i], joined[i], timeout=100)

                async with trio.open_nursery() as n:
                    for i in range(4):
                        n.start_soon(player, i)
            t = server.tables[table]
            assert t.finished
            over = [r.over for r in results]
            assert all(o is not None for o in over)
            assert len({(o.scores, o.winners, o.seq) for o in over}) == 1
            assert over[0].scores == tuple(RW.outcome(t.state).scores)
            live_hash = state_hash(RW, t.state)
            path = log_path(server, table)
    proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(path), "--verify"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"final hash: {live_hash.hex()}" in proc.stdout
    assert "game over: yes" in proc.stdout


def _four_card_meld(hand: list[int]):
    """A set of four of a number, or a run of four of a colour, from ``hand``: (cards, take)."""
    numbers = {}
    for c in hand:
        if c < 60:
            numbers.setdefault(c % 12, []).append(c)
    for cards in numbers.values():
        if len(cards) >= 4:
            return sorted(cards[:4]), sorted(cards[:4])[0]
    have = set(hand)
    for colour in range(5):
        for start in range(0, 9):
            run = [colour * 12 + start + k for k in range(4)]
            if all(c in have for c in run):
                return run, run[0]
    return None


def _race_seed():
    for seed in range(500):
        s = dealt(3, seed)
        for _ in range(RW.view(s, 0)["pile"]):
            s, _ = RW.apply(s, 0, RW.ACTIONS.decode({"kind": "draw"}))
        found = _four_card_meld(RW.view(s, 0)["hand"])
        if found:
            return seed, found
    raise AssertionError("no seed gives seat 0 a four-card meld")


async def _send_all_ready(conns):
    for i, c in enumerate(conns):
        await c.send(m.Intent(10_000 + i, {"kind": "ready"}))
    for i, c in enumerate(conns):
        r = await reply_to(c, 10_000 + i)
        assert isinstance(r, m.Accepted), r


async def test_two_clients_racing_for_the_same_card_100_times(tmp_path):
    seed, (meld_cards, contested) = _race_seed()
    with trio.fail_after(120):
        async with running_server(server_config(tmp_path / "data", rate_limit=1000, rate_burst=1000),
                                  chance=seeded_chance(seed)) as (server, url):
            async with seated(url, "run-wild", 3) as (table, (a, b, c), joined):
                await _send_all_ready([a, b, c])
                pile = RW.view(server.tables[table].state, 0)["pile"]
                for i in range(pile):
                    await a.send(m.Intent(i + 1, {"kind": "draw"}))
                for i in range(pile):
                    assert isinstance(await reply_to(a, i + 1), m.Accepted)
                await a.send(m.Intent(999, {"kind": "meld", "cards": meld_cards, "values": []}))
                assert isinstance(await reply_to(a, 999), m.Accepted)
                meld_id = server.tables[table].game.view(server.tables[table].state, 0)["melds"][0]["id"]
                wins = {"b": 0, "c": 0}
                for round_no in range(100):
                    iid = 2 * round_no + 1
                    take = {"kind": "take", "meld": meld_id, "card": contested}
                    # both intents leave before either answer is read: they race at the server
                    first, second = (b, c) if round_no % 2 == 0 else (c, b)
                    await first.send(m.Intent(iid, take))
                    await second.send(m.Intent(iid, take))
                    rb, rc = await reply_to(b, iid), await reply_to(c, iid)
                    results = sorted([type(rb).__name__, type(rc).__name__])
                    assert results == ["Accepted", "Rejected"], (rb, rc)
                    loser = rb if isinstance(rb, m.Rejected) else rc
                    assert loser.code == "card_taken"
                    assert str(contested) in loser.reason or "taken" in loser.reason
                    winner = b if isinstance(rb, m.Accepted) else c
                    wins["b" if winner is b else "c"] += 1
                    await winner.send(m.Intent(iid + 1, {"kind": "add", "meld": meld_id, "card": contested, "value": None}))
                    assert isinstance(await reply_to(winner, iid + 1), m.Accepted)
                assert wins["b"] + wins["c"] == 100


async def test_reconnect_with_token_and_refusals(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                async with connect(url, "other") as o:
                    other_table = await create(o, "run-wild", 2)
                    other = await join(o, other_table, 0)
                    token = joined[1].token
                    # the seat holder drops: its seat stays held
                    await conns[1].close()
                    async with connect(url, "p1-again") as c:
                        for bad, what in [(token[:-2] + "xx", "wrong token"), (other.token, "another table's token")]:
                            await c.send(m.Rejoin(table, 1, bad))
                            err = await c.receive_until(lambda x: isinstance(x, (m.Error, m.Joined)))
                            assert isinstance(err, m.Error) and err.code == "bad_token", (what, err)
                            assert "token" in err.message
                        await c.send(m.Rejoin(table, 1, token))
                        back = await c.receive_until(lambda x: isinstance(x, (m.Error, m.Joined)))
                        assert isinstance(back, m.Joined) and back.seat == 1 and back.seq >= joined[1].seq
                        assert back.view["seat"] == 1 and "hand" in back.view
                        # the table is full: a newcomer is refused, clearly
                        async with connect(url, "late") as late:
                            await late.send(m.Join(table, None))
                            err = await late.receive_until(lambda x: isinstance(x, (m.Error, m.Joined)))
                            assert isinstance(err, m.Error) and err.code == "table_full"
                            await late.send(m.Join(table, 0))
                            err = await late.receive_until(lambda x: isinstance(x, (m.Error, m.Joined)))
                            assert err.code == "seat_taken"
                            await late.send(m.Join("nope", None))
                            err = await late.receive_until(lambda x: isinstance(x, (m.Error, m.Joined)))
                            assert err.code == "no_such_table"
                        # a token stops working once its holder leaves the seat
                        await c.send(m.Leave())
                        await c.receive_until(lambda x: isinstance(x, m.Left))
                        await c.send(m.Rejoin(table, 1, token))
                        err = await c.receive_until(lambda x: isinstance(x, (m.Error, m.Joined)))
                        assert isinstance(err, m.Error) and err.code == "bad_token"
                        # an intent without a seat is refused
                        await c.send(m.Intent(5, {"kind": "draw"}))
                        r = await reply_to(c, 5)
                        assert isinstance(r, m.Rejected) and r.code == "not_seated"


async def test_malformed_frames_get_errors_and_another_table_plays_on(tmp_path):
    with trio.fail_after(120):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                finished = []

                async def game():
                    async with trio.open_nursery() as n:
                        for i in range(2):
                            async def p(i=i):
                                finished.append(await play_to_end(conns[i], joined[i], timeout=100))
                            n.start_soon(p)

                async def abuse():
                    async with connect(url, None) as bad:
                        await bad.send(m.Intent(1, {"kind": "draw"}))          # before hello
                        e = await bad.receive_until(lambda x: isinstance(x, m.Error))
                        assert e.code == "hello_first"
                        await bad.hello("mallory")
                        cases = [
                            (b"\xc1\xc1not msgpack", "bad_frame", None),
                            (msgpack.packb({"type": "intent", "id": "7", "action": {}}), "bad_field", "$.id"),
                            (msgpack.packb({"type": "join", "table": 5}), "bad_field", "$.table"),
                            (msgpack.packb({"type": "launch_missiles"}), "unknown_message_type", "$.type"),
                            (msgpack.packb([1, 2, 3]), "bad_field", "$"),
                            (msgpack.packb({"type": "create_table", "game": "run-wild", "seats": 2, "settings": {"a": {"b": "c"}}, "zzz": 1}), "unknown_field", "$.zzz"),
                        ]
                        for data, code, path in cases:
                            await bad.send_raw(data)
                            e = await bad.receive_until(lambda x: isinstance(x, m.Error))
                            assert e.code == code, (data[:30], e)
                            if path:
                                assert e.path == path, e
                        await bad.send_raw("a text frame")
                        e = await bad.receive_until(lambda x: isinstance(x, m.Error))
                        assert e.code == "text_frame"
                        # still served
                        await bad.send(m.ListTables())
                        lst = await bad.receive_until(lambda x: isinstance(x, m.TableList))
                        assert any(t["table"] == table for t in lst.tables)

                async with trio.open_nursery() as n:
                    n.start_soon(game)
                    n.start_soon(abuse)
                assert len(finished) == 2 and all(f.over is not None for f in finished)


async def test_version_mismatch_is_refused_clearly(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, None) as c:
                await c.send(m.Hello(99, "future"))
                e = await c.receive_until(lambda x: isinstance(x, m.Error))
                assert e.code == "version_mismatch" and f"version {m.PROTOCOL_VERSION}" in e.message


async def test_restart_resumes_mid_round_with_no_accepted_action_lost(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(120):
        async with running_server(data) as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                await _send_all_ready(conns)
                accepted = []
                for k in range(5):
                    for i, c in enumerate(conns):
                        iid = 100 + 10 * k + i
                        await c.send(m.Intent(iid, {"kind": "draw"}))
                for k in range(5):
                    for i, c in enumerate(conns):
                        r = await reply_to(c, 100 + 10 * k + i)
                        assert isinstance(r, m.Accepted)
                        accepted.append(r.seq)
                last_views = [RW.view(server.tables[table].state, i) for i in range(2)]
                tokens = [j.token for j in joined]
                # the server stops; every client hears goodbye
                await server.shutdown("restart test")
                for c in conns:
                    bye = await c.receive_until(lambda x: isinstance(x, m.Goodbye))
                    assert "restart test" in bye.reason
        async with running_server(data) as (server2, url2):
            assert table in server2.tables
            t2 = server2.tables[table]
            assert t2.seq >= max(accepted)
            results = [None, None]
            async with trio.open_nursery() as n:
                for i in range(2):
                    async def p(i=i):
                        async with connect(url2, f"p{i}") as c:
                            await c.send(m.Rejoin(table, i, tokens[i]))
                            back = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                            assert isinstance(back, m.Joined), back
                            assert back.seq == t2.seq
                            assert sorted(back.view["hand"]) == sorted(last_views[i]["hand"])
                            assert back.view["melds"] == last_views[i]["melds"]
                            results[i] = await play_to_end(c, back, timeout=100)
                    n.start_soon(p)
            assert all(r.over is not None for r in results)
            contents = read_log(t2.logfile.path.read_bytes())
            seqs = {r.seq for r in contents.records if hasattr(r, "seq") and type(r).__name__ == "ActionAccepted"}
            assert set(accepted) <= seqs
            assert replay(contents).state == t2.state


def _draw3_then_out_seed():
    """A seed where seat 0's 4-card hand is a Draw-3 plus a three-card meld."""
    for seed in range(20_000):
        s = dealt(3, seed, {"hand_size": 4})
        hand = RW.view(s, 0)["hand"]
        d3 = [c for c in hand if c >= 69]
        rest = [c for c in hand if c < 69]
        if len(d3) != 1 or len(rest) != 3 or any(c >= 60 for c in rest):
            continue
        try:
            RW.apply(s, 0, RW.ACTIONS.decode({"kind": "meld", "cards": rest, "values": []}))
        except Exception:
            continue
        return seed, d3[0], rest
    raise AssertionError("no seed found")


async def test_draw3_lands_amid_intents_and_out_refuses_late_intents(tmp_path):
    seed, d3, meld = _draw3_then_out_seed()
    with trio.fail_after(60):
        async with running_server(tmp_path / "data", chance=seeded_chance(seed)) as (server, url):
            async with seated(url, "run-wild", 3, {"hand_size": 4}) as (table, (a, b, c), joined):
                await _send_all_ready([a, b, c])
                before = [RW.view(server.tables[table].state, i) for i in range(3)]
                logs = {1: [], 2: []}
                answers = {1: {}, 2: {}}
                out_seq = None

                async def spam(i, conn):
                    # intents keep leaving while the Draw-3 and the Out! land
                    for k in range(12):
                        await conn.send(m.Intent(k + 1, {"kind": "draw"}))
                        await trio.sleep(0.002)
                    while len(answers[i]) < 12:
                        msg = await conn.receive()
                        logs[i].append(msg)
                        if isinstance(msg, (m.Accepted, m.Rejected)):
                            assert msg.intent not in answers[i], "an intent answered twice"
                            answers[i][msg.intent] = msg

                async def actor():
                    nonlocal out_seq
                    await trio.sleep(0.005)
                    await a.send(m.Intent(1, {"kind": "draw3", "card": d3}))
                    assert isinstance(await reply_to(a, 1), m.Accepted)
                    await a.send(m.Intent(2, {"kind": "meld", "cards": meld, "values": []}))
                    r = await reply_to(a, 2)
                    assert isinstance(r, m.Accepted)
                    out_seq = r.seq

                async with trio.open_nursery() as n:
                    n.start_soon(spam, 1, b)
                    n.start_soon(spam, 2, c)
                    n.start_soon(actor)
                # a seat whose 12 answers all came before the Out! has not read its update
                # yet (a loaded machine answered every draw first): read on to it
                for i, conn in ((1, b), (2, c)):
                    while not any(isinstance(u, m.Update) and u.seq >= out_seq for u in logs[i]):
                        logs[i].append(await conn.receive())
                for i in (1, 2):
                    for msg in answers[i].values():
                        if isinstance(msg, m.Rejected):
                            assert msg.code == "round_over", msg
                            assert "over" in msg.reason
                        else:
                            assert msg.seq < out_seq
                    updates = [u for u in logs[i] if isinstance(u, m.Update)]
                    # the Draw-3 reached this seat: its hand grew by 3 at that seq
                    d3_updates = [u for u in updates if any(e.get("event") == "draw3_played" for e in u.events)]
                    assert len(d3_updates) == 1
                    u = d3_updates[0]
                    prev = [x for x in updates if x.seq < u.seq]
                    hand_before = prev[-1].view["players"][i]["hand"] if prev else before[i]["players"][i]["hand"]
                    assert u.view["players"][i]["hand"] == hand_before + 3
                    # Out! ends the round for everyone in the same update
                    outs = [x for x in updates if any(e.get("event") == "player_out" for e in x.events)]
                    assert len(outs) == 1 and outs[0].seq == out_seq
                    assert any(e.get("event") == "round_ended" for e in outs[0].events)
                    # no update shows an empty hand still playing
                    for x in updates:
                        if x.view["phase"] == "playing":
                            assert all(p["hand"] > 0 for p in x.view["players"] if p["in_round"])


def _card_ids(view: dict) -> set[int]:
    ids = set(view.get("hand") or ())
    for meld in view.get("melds", ()):
        ids.update(meld["cards"])
    for p in view.get("players", ()):
        ids.update(p.get("draw3s", ()))
    return ids


async def test_no_update_carries_another_hand_or_a_pile_card(tmp_path):
    with trio.fail_after(120):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 3) as (table, conns, joined):
                logs = [[], [], []]
                async with trio.open_nursery() as n:
                    for i in range(3):
                        n.start_soon(lambda i=i: play_to_end(conns[i], joined[i], timeout=100, log=logs[i]))
                async with connect(url, "watcher") as w:
                    await w.send(m.Spectate(table))
                    spec = await w.receive_until(lambda x: isinstance(x, (m.Spectating, m.Error)))
            contents = read_log(server.tables[table].logfile.path.read_bytes())
    log = replay_by_seq(contents)
    states = log.states
    checked = 0
    for seat, msgs in enumerate(logs):
        for u in check_views(msgs, log, seat):
            st = states[u.seq]
            public = _card_ids(RW.view(st, None))
            own = set(RW.view(st, seat)["hand"])
            assert _card_ids(u.view) <= own | public
            for e in u.events:
                for key in ("card", "cards"):
                    v = e.get(key)
                    ids = set(v) if isinstance(v, list) else ({v} if isinstance(v, int) else set())
                    before = _card_ids(RW.view(states[u.seq - 1], None)) if u.seq - 1 in states else set()
                    assert ids <= public | before, e
            checked += 1
    assert checked > 50
    assert "hand" not in spec.view or not spec.view["hand"]


async def test_idle_timeout_ends_the_round_as_a_logged_timer_action(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2, {"idle_timeout": 1.0}) as (table, conns, joined):
                await _send_all_ready(conns)
                # nobody acts: the table ends the round by itself
                ended = await conns[0].receive_until(
                    lambda x: isinstance(x, m.Update) and any(e.get("event") == "round_ended" for e in x.events))
                ev = [e for e in ended.events if e["event"] == "round_ended"][0]
                assert ev["reason"] == "idle_timeout"
                assert ended.view["phase"] != "playing"
                # a stuck declaration is public and clears with the seat's next action
                await _send_all_ready(conns)
                await conns[1].send(m.Intent(1, {"kind": "stuck"}))
                assert isinstance(await reply_to(conns[1], 1), m.Accepted)
                u = await conns[0].receive_until(
                    lambda x: isinstance(x, m.Update) and any(e.get("event") == "stuck_declared" for e in x.events))
                assert u.view["players"][1]["stuck"] is True
            records = read_log(server.tables[table].logfile.path.read_bytes()).records
            timers = [r for r in records if type(r).__name__ == "ActionAccepted" and r.by == "timer"]
            assert timers and timers[0].action == {"kind": "idle_timeout"} and timers[0].seat is None
