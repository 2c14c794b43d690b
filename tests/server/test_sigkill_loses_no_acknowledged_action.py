"""Crash: `wildtable serve` runs as a subprocess, clients play at five tables (all four
games), and the server is killed with SIGKILL in the middle of the games. Restarted on the
same data dir, every action whose acceptance any client received is in the rebuilt state;
the clients come back with their tokens and play every game to the end; `wildtable replay
--verify` passes on every log."""

from __future__ import annotations

import contextlib
import io
import signal

import trio

from wildtable.cli import main as cli_main
from wildtable.headless.net import Connection, Mirror, connect
from wildtable.headless.wire import HandshakeError
from wildtable.protocol import messages as m
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from adversarial_kit import GONE, choose, start_serve
from serverkit import as_sent
from waitkit import wait_until

TABLES = [
    ("run-wild", 2, {"rounds": 3}),
    ("run-wild", 3, {"rounds": 2}),
    ("go-wild", 3, {"turn_timer": 0.0, "target": 30}),
    ("wild-shots", 2, {"turn_timer": 0.0}),
    ("go-fish-wildcard", 3, {"turn_timer": 0.0}),
]
KILL_AFTER = 10        # acknowledged actions at every table before the kill


class Player:
    def __init__(self, table: str, game: str, seat: int):
        self.table, self.game, self.seat = table, game, seat
        self.token: str | None = None
        self.before: list = []        # every message received before the kill
        self.after: list = []         # ... and after the restart
        self.over: m.GameOver | None = None

    def acks(self) -> list[m.Accepted]:
        return [x for x in self.before if isinstance(x, m.Accepted)]


async def play(conn: Connection, joined: m.Joined, log: list, delay: float, first_id: int) -> Mirror:
    """Play this seat from its own view until the game is over (a short pause per move so
    that the kill finds every game running)."""
    mirror = Mirror()
    mirror.absorb(joined)
    next_id = first_id
    inflight = None
    while mirror.over is None:
        if inflight is None:
            action = choose(mirror.view)
            if action is not None:
                await trio.sleep(delay)
                inflight = next_id
                next_id += 1
                await conn.send(m.Intent(inflight, action))
        msg = await conn.receive()
        log.append(msg)
        mirror.absorb(msg)
        if isinstance(msg, (m.Accepted, m.Rejected)) and msg.intent == inflight:
            inflight = None
    return mirror


async def first_life(url: str, p: Player) -> None:
    try:
        async with connect(url, f"{p.game}-{p.seat}") as c:
            await c.send(m.Join(p.table, p.seat))
            j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
            assert isinstance(j, m.Joined), j
            p.token = j.token
            p.before.append(j)
            await play(c, j, p.before, delay=0.01, first_id=1)
    except GONE:
        pass                                # the server was killed under us
    except HandshakeError:
        pass


async def second_life(url: str, p: Player, rebuilt: dict) -> None:
    async with connect(url, f"{p.game}-{p.seat}") as c:
        await c.send(m.Rejoin(p.table, p.seat, p.token))
        j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
        assert isinstance(j, m.Joined), j
        assert j.seq >= rebuilt[p.table]
        p.after.append(j)
        mirror = await play(c, j, p.after, delay=0, first_id=1_000_000)
        p.over = mirror.over


def _acked(players) -> dict:
    out = {}
    for p in players:
        out[p.table] = out.get(p.table, 0) + len(p.acks())
    return out


async def test_sigkill_mid_game_loses_no_acknowledged_action(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(150):
        async with trio.open_nursery() as bg:
            srv = await start_serve(bg, data, "--rate-limit", "100000", "--max-waiting-per-address", "0")
            players: list[Player] = []
            async with connect(srv.url, "host") as host:
                for game, seats, settings in TABLES:
                    await host.send(m.CreateTable(game, seats, settings))
                    created = await host.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
                    assert isinstance(created, m.TableCreated), created
                    players += [Player(created.table, game, s) for s in range(seats)]
            tables = sorted({p.table for p in players})

            async with trio.open_nursery() as n:
                for p in players:
                    n.start_soon(first_life, srv.url, p)
                while True:
                    await trio.sleep(0.002)
                    acked = _acked(players)
                    if len(acked) == len(tables) and min(acked.values()) >= KILL_AFTER:
                        break
                srv.proc.send_signal(signal.SIGKILL)
            with trio.fail_after(10):
                await srv.proc.wait()
            assert srv.proc.returncode == -signal.SIGKILL
            assert not any(isinstance(x, m.GameOver) for p in players for x in p.before), "a game ended before the kill"

            # the restart rebuilds every table from its log
            srv2 = await start_serve(bg, data, "--rate-limit", "100000")
            await wait_until(lambda: f"recovered {len(tables)} unfinished table(s)" in srv2.log, timeout=10,
                             what=f"the restart saying it recovered {len(tables)} table(s)")
            rebuilt = {}
            for table in tables:
                contents = read_log((data / f"{table}.wlog").read_bytes())
                logged = {r.seq: r for r in contents.records if type(r) is ActionAccepted}
                g = find_game(contents.header.game)
                rebuilt[table] = replay(contents).seq
                for p in (p for p in players if p.table == table):
                    # every acceptance a client heard of is in the log, as that seat's intent
                    for a in p.acks():
                        r = logged.get(a.seq)
                        assert r is not None and r.seat == p.seat and r.intent == a.intent, (table, a, r)
                        assert a.seq <= rebuilt[table]
                    # and the last thing the client saw is what the log replays to at that seq
                    last = [x for x in p.before if isinstance(x, (m.Update, m.Joined))][-1]
                    assert last.seq <= rebuilt[table]
                    state = replay(contents, upto=last.seq).state
                    assert last.view == as_sent(g.view(state, p.seat)), (table, p.seat, last.seq)

            # everyone comes back with their token and plays to the end
            async with trio.open_nursery() as n:
                for p in players:
                    n.start_soon(second_life, srv2.url, p, rebuilt)
            for table in tables:
                overs = {(p.over.seq, p.over.scores, p.over.winners) for p in players if p.table == table}
                assert len(overs) == 1, overs
            srv2.proc.send_signal(signal.SIGTERM)
            with trio.fail_after(15):
                await srv2.proc.wait()
            assert srv2.proc.returncode == 0, srv2.log
    for table in tables:
        # `wildtable replay --verify`, in this process: the command, not its start-up, is the point
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(["replay", str(data / f"{table}.wlog"), "--verify"])
        assert code == 0, out.getvalue() + err.getvalue()
        assert "game over: yes" in out.getvalue() and "warning" not in err.getvalue(), out.getvalue() + err.getvalue()
