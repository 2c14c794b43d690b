"""Recovery of each game stopped at awkward points (right before and right after a
chance record, mid-game, after the game ended, with a seat released by leave). Logs are
written the way the server writes them (selfplay records + seat records), cut at the
point, and a real server is started on the data dir: the recovered table must be exactly
the replayed log (and stay so after it settles what it owes), seats and tokens intact,
finished games not reopened, timers running again."""

from __future__ import annotations

import random

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.engine import game as find_game, state_hash
from wildtable.protocol.logfmt import (
    ActionAccepted, ChanceRecorded, Header, SeatClaimed, encode_record, read_log,
)
from wildtable.protocol.replay import replay
from wildtable.selfplay import play
from wildtable.server.table import token_hash

from serverkit import running_server

GAMES = [
    ("run-wild", 2, {"rounds": 1}),
    ("go-wild", 3, {"target": 10}),
    ("wild-shots", 2, {}),
    ("go-fish-wildcard", 3, {}),
]


def _token(tid: str, seat: int) -> str:
    return f"tok-{tid}-{seat}"


def _log(tid: str, header: Header, records: list, seats: int, released: int | None = None) -> bytes:
    out = [encode_record(Header(header.format, header.game, tid, seats, header.settings, rules=header.rules))]
    for i in range(seats):
        out.append(encode_record(SeatClaimed(i, f"p{i}", token_hash(_token(tid, i)))))
    out += [encode_record(r) for r in records]
    if released is not None:
        out.append(encode_record(SeatClaimed(released, f"p{released}", b"")))
    return b"".join(out)


def _cut(records: list, seq: int) -> list:
    """The records up to and including seq (and the hash record right after it)."""
    out = []
    for r in records:
        if isinstance(r, (ActionAccepted, ChanceRecorded)) and r.seq > seq:
            break
        out.append(r)
    return out


def _cuts(records: list, last: int) -> dict[str, int]:
    chances = [r.seq for r in records if type(r) is ChanceRecorded]
    cuts = {}
    for s in chances[:3]:
        cuts[f"owes{s}"] = s - 1              # the chance is owed: the server must settle it
        cuts[f"after{s}"] = s                  # right after a deal / reshuffle
    cuts["mid"] = last // 2
    cuts["midplus"] = last // 2 + 1
    cuts["lastbutone"] = last - 1
    cuts["end"] = last                         # the game is over
    return cuts


@pytest.mark.parametrize("name,seats,settings", GAMES, ids=[g[0] for g in GAMES])
async def test_recovery_at_awkward_points_continues_exactly(tmp_path, name, seats, settings):
    g = find_game(name)
    p = play(g, seats, settings, seed=7, hash_every=16)
    cuts = _cuts(p.records, p.steps)
    data = tmp_path / "data"
    data.mkdir()
    written = {}
    for label, seq in cuts.items():
        for released in (None, 1):
            tid = f"t{label}r{released}"
            raw = _log(tid, p.header, _cut(p.records, seq), seats, released)
            (data / f"{tid}.wlog").write_bytes(raw)
            written[tid] = (seq, released, raw)
    rng = random.Random(3)

    def chance(n):
        perm = list(range(n))
        rng.shuffle(perm)
        return tuple(perm)

    with trio.fail_after(20):
        async with running_server(data, chance=chance) as (server, url):
            assert server.refused_logs == {}
            for tid, (seq, released, raw) in written.items():
                path = data / f"{tid}.wlog"
                if seq == p.steps:
                    assert server.tables[tid].readonly, f"{tid}: a finished game was reopened for play"
                    assert path.read_bytes() == raw
                    continue
                table = server.tables[tid]
                # wait until the arbiter settled what it owed and made it durable
                while True:
                    c = read_log(path.read_bytes())
                    r = replay(c)
                    settled = g.pending_chance(table.state) is None and g.auto_action(table.state) is None
                    if r.seq == table.seq and (settled or not table.started):   # a seat released before the deal
                        break
                    await trio.sleep(0.01)
                assert c.torn is None
                assert state_hash(g, r.state) == state_hash(g, table.state), tid
                assert table.seq >= seq
                for i, s in enumerate(table.seats):
                    want = b"" if i == released else token_hash(_token(tid, i))
                    assert s.token_hash == want and s.name == f"p{i}", (tid, i)
                if table.started:       # (one waiting for players has its expiry instead)
                    assert table.core.deadline(trio.current_time())[1] == g.timeout_action(table.state)

            # tokens still work over a real socket; the released seat's token does not
            tid = "tmidr1"
            async with connect(url, "p0") as a, connect(url, "p1") as b:
                await a.send(m.Rejoin(tid, 0, _token(tid, 0)))
                j = await a.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                assert isinstance(j, m.Joined) and j.seq == server.tables[tid].seq, j
                await b.send(m.Rejoin(tid, 1, _token(tid, 1)))
                e = await b.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                assert isinstance(e, m.Error) and e.code == "bad_token", e
                await b.send(m.Join(tid, 1))
                j = await b.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                assert isinstance(j, m.Joined) and j.seat == 1, j


async def test_a_pending_turn_timer_fires_after_recovery(tmp_path):
    """A Go Wild! table with a short turn timer, recovered mid-game: nobody acts, and the
    timer's action is applied and logged (by "timer") a timer's length after the start."""
    g = find_game("go-wild")
    p = play(g, 2, {"turn_timer": 0.3}, seed=5, hash_every=0)
    seq = p.steps // 2
    while g.outcome(replay(read_log(_log("tx", p.header, _cut(p.records, seq), 2))).state).over:
        seq -= 1
    data = tmp_path / "data"
    data.mkdir()
    (data / "tt.wlog").write_bytes(_log("tt", p.header, _cut(p.records, seq), 2))
    with trio.fail_after(10):
        async with running_server(data) as (server, url):
            path = data / "tt.wlog"
            while True:
                recs = read_log(path.read_bytes()).records
                if any(type(r) is ActionAccepted and r.by == "timer" and r.seq > seq for r in recs):
                    break
                await trio.sleep(0.05)
            assert replay(read_log(path.read_bytes())).seq >= seq + 1
