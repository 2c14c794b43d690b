"""The client core and the bots against a real server on 127.0.0.1: lobby commands, whole
games between bots (and the log they leave replays), and reconnecting by itself after
the server went away, back into the same seat with the seat token."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import trio

from wildtable.headless.bots import Bot
from wildtable.headless import notices
from wildtable.headless.core import ClientCore, Notice, completions
from wildtable.headless.net import connect
from wildtable.headless.seats import SeatBook
from wildtable.protocol import messages as m
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.logfmt import read_log
from wildtable.protocol.replay import replay
from wildtable.server.app import Server
from wildtable.server.config import ServerConfig

from proc import LineReader
from serverkit import create, running_server

RW = find_game("run-wild")


class Recorder:
    """Collects a core's notices; ``wait`` blocks until one arriving after the previous
    match satisfies ``pred`` (so each wait reads on from where the last one stopped)."""

    def __init__(self):
        self.notices: list[Notice] = []
        self._changed = trio.Event()
        self._pos = 0

    def __call__(self, n: Notice) -> None:
        self.notices.append(n)
        self._changed.set()

    async def wait(self, pred, timeout: float = 10) -> Notice:
        with trio.fail_after(timeout):
            seen = self._pos
            while True:
                for i in range(seen, len(self.notices)):
                    if pred(self.notices[i]):
                        self._pos = i + 1
                        return self.notices[i]
                seen = len(self.notices)
                self._changed = trio.Event()
                await self._changed.wait()

    def texts(self, kind: str) -> list[str]:
        return [n.text for n in self.notices if n.kind == kind]


async def test_bots_play_a_whole_game_and_its_log_replays(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "host") as conn:
                table = await create(conn, "run-wild", 3, rounds=2)
            bots = [Bot(url, table, f"bot{i}", delay=0.0) for i in range(3)]
            results = [None] * 3

            async def play(i):
                results[i] = await bots[i].run()

            async with trio.open_nursery() as nursery:
                for i in range(3):
                    nursery.start_soon(play, i)
            live = server.tables[table]
            path = live.logfile.path
            assert live.finished
        assert all(r is not None for r in results)
        assert len({(r.scores, r.winners) for r in results}) == 1
        assert sorted(b.seat for b in bots) == [0, 1, 2]
        assert all(b.actions > 10 for b in bots)
        result = replay(read_log(path.read_bytes()))
        o = RW.outcome(result.state)
        assert o.over and o.scores == results[0].scores and o.winners == results[0].winners


async def test_lobby_commands_and_errors_through_the_core(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            ann_seen, bob_seen = Recorder(), Recorder()
            ann = ClientCore(url, "ann", ann_seen)
            bob = ClientCore(url, "bob", bob_seen)
            async with trio.open_nursery() as nursery:
                await nursery.start(ann.run)
                await nursery.start(bob.run)
                await ann.command("meld B1 B2 B3")
                n = await ann_seen.wait(lambda n: n.kind == "rejected")
                assert n.code == "bad_command" and "not at a table" in n.reason
                await ann.command("create run-wild 2 rounds=1")
                await ann_seen.wait(lambda n: n.kind == "info" and "joined table" in n.text)
                assert ann.mirror.seat == 0 and ann.mirror.game == "run-wild"
                # bob lists the tables and joins the first by its number
                await bob.command("list")
                await bob_seen.wait(lambda n: n.kind == "tables" and n.asked)
                assert completions(bob, "join t") == [ann.mirror.table]
                await bob.command("join 1")
                await bob_seen.wait(lambda n: n.kind == "info" and "joined table" in n.text)
                await ann_seen.wait(lambda n: n.kind == "info" and "bob took seat 1" in n.text)
                await ann_seen.wait(lambda n: n.kind == "event" and "round 1 dealt" in n.text)
                # a raw JSON action, and a game command: both reach the server
                await ann.command('act {"kind": "ready"}')
                await ann_seen.wait(lambda n: n.kind == "accepted" and n.text.startswith("act"))
                await ann.command("ready")
                n = await ann_seen.wait(lambda n: n.kind == "rejected" and n.text == "ready")
                assert n.code == "already_ready" and "already ready" in n.reason
                # errors from the lobby carry the server's code and sentence
                await bob.command("spectate tnosuch")
                n = await bob_seen.wait(lambda n: n.kind == "error")
                assert n.text.startswith("no_such_table:")
                await bob.command("leave")
                await bob_seen.wait(lambda n: n.kind == "info" and n.text.startswith("you left"))
                assert not bob.at_table
                await bob.command(f"spectate {ann.mirror.table}")
                await bob_seen.wait(lambda n: n.kind == "info" and n.text.startswith("watching"))
                await bob.command("draw")
                n = await bob_seen.wait(lambda n: n.kind == "rejected" and n.text == "draw")
                assert "watching" in n.reason
                await bob.command("help take")
                assert (await bob_seen.wait(lambda n: n.kind == "help")).text.startswith("take CARD from mN")
                await bob.command("show")
                shown = (await bob_seen.wait(lambda n: n.kind == "show")).text
                assert shown.startswith("Run Wild - round 1 of 1") and "ann" in shown
                # bots N seats bots at the table from inside the client
                await ann.command("leave")
                await ann_seen.wait(lambda n: n.kind == "info" and n.text.startswith("you left"))
                await ann.command("create run-wild 3")
                await ann_seen.wait(lambda n: n.kind == "info" and "joined table" in n.text)
                await ann.command("bots 2")
                await ann_seen.wait(lambda n: n.kind == "event" and "round 1 dealt" in n.text)
                assert sorted(p["name"] for p in ann.mirror.players[1:]) == ["bot1", "bot2"]
                await ann.command("bots 1")
                n = await ann_seen.wait(lambda n: n.kind == "rejected" and n.text == "bots 1")
                assert "0 seat(s) free" in n.reason
                nursery.cancel_scope.cancel()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def seated_then_server_gone(outer: trio.Nursery, core: ClientCore, data, port: int, seen: Recorder):
    """A server on ``port`` (data dir ``data``); ``core`` (started in ``outer``) sits at seat 0
    of a Run Wild table, bob at seat 1, the cards are dealt; then the server stops and the
    core says its connection dropped. The table's TableCreated."""
    first = Server(ServerConfig(data_dir=data))
    async with trio.open_nursery() as first_lifetime:
        await first_lifetime.start(first.run, "127.0.0.1", port)
        await outer.start(core.run)
        reply = await core.create("run-wild", 2, {"rounds": 1})
        await core.join(reply.table, 0)
        async with connect(f"ws://127.0.0.1:{port}", "bob") as bob:
            await bob.send(m.Join(reply.table, 1))
            await bob.receive_until(lambda x: isinstance(x, m.Joined))
            await seen.wait(lambda n: n.kind == "event" and "dealt" in n.text)
        await first.shutdown("restart")
    # the first server is gone (its run() returned): nothing listens on the port
    await seen.wait(lambda n: isinstance(n, notices.ConnectionLost))
    return reply


async def test_reconnects_by_itself_and_takes_its_seat_back(tmp_path):
    """The server goes away mid-game and comes back (recovering the table from its log):
    the client says the connection dropped, reconnects, rejoins with its seat token,
    says so, and plays on."""
    data, port = tmp_path / "data", _free_port()
    url = f"ws://127.0.0.1:{port}"
    seen = Recorder()
    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            core = ClientCore(url, "ann", seen)
            reply = await seated_then_server_gone(outer, core, data, port, seen)
            hand_before = list(core.mirror.view["hand"])
            seen._pos = len(seen.notices)
            second = Server(ServerConfig(data_dir=data))
            await outer.start(second.run, "127.0.0.1", port)
            back = await seen.wait(lambda n: isinstance(n, notices.BackAtTable))
            assert (back.table, back.seat) == (reply.table, 0)
            assert back.text == f"back at table {reply.table} (seat 0) at seq {back.seq}"
            assert core.mirror.view["hand"] == hand_before and core.online
            await core.command("ready")
            await seen.wait(lambda n: n.kind == "accepted" and n.text == "ready")
            await second.shutdown("test over")
            outer.cancel_scope.cancel()


async def test_a_frozen_server_is_noticed_by_ping_and_the_client_comes_back(tmp_path):
    """A `wildtable serve` process is stopped (SIGSTOP): no pong comes back, the client
    drops the connection and says so; when the process resumes, it is back at its seat."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(tmp_path / "data")],
        stderr=subprocess.PIPE)
    try:
        with trio.fail_after(40):
            stderr = LineReader(proc.stderr, timeout=40, errors="replace")
            url = (await stderr.until(r"serving on (ws://[0-9.]+:\d+)")).group(1)
            seen = Recorder()
            core = ClientCore(url, "ann", seen, heartbeat=0.3, pong_timeout=0.5)
            async with trio.open_nursery() as nursery:
                await nursery.start(core.run)
                reply = await core.create("run-wild", 2, {"rounds": 1})
                await core.join(reply.table, 0)
                proc.send_signal(signal.SIGSTOP)
                lost = await seen.wait(lambda n: isinstance(n, notices.ConnectionLost))
                assert "no answer to a ping within 0.5 s" in lost.text
                proc.send_signal(signal.SIGCONT)
                back = await seen.wait(lambda n: isinstance(n, notices.BackAtTable), 20)
                assert (back.table, back.seat) == (reply.table, 0)
                nursery.cancel_scope.cancel()
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        with trio.move_on_after(10):
            await proc.wait()


async def test_a_new_client_takes_the_seat_back_with_the_saved_token(tmp_path):
    """Quit without leave, start again, join the same table: the same seat comes back
    (the token was kept in the seat book, privately); leave forgets it."""
    book = SeatBook(tmp_path / "state" / "seats.json")
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            first_seen = Recorder()
            async with trio.open_nursery() as nursery:
                first = ClientCore(url, "ann", first_seen, seat_book=book)
                await nursery.start(first.run)
                await first.command("create run-wild 2")
                await first_seen.wait(lambda n: n.kind == "info" and "joined table" in n.text)
                table = first.mirror.table
                nursery.cancel_scope.cancel()        # the client quits; the seat stays held
            assert book.find(url, table, "ann")[0] == 0
            assert oct(book.path.stat().st_mode & 0o777) == "0o600"
            seen = Recorder()
            async with trio.open_nursery() as nursery:
                again = ClientCore(url, "ann", seen, seat_book=book)
                await nursery.start(again.run)
                await again.command(f"join {table}")
                n = await seen.wait(lambda n: n.kind in ("info", "error"))
                assert n.text.startswith(f"took your seat 0 back at table {table}"), n
                await again.command("leave")
                await seen.wait(lambda n: n.kind == "info" and n.text.startswith("you left"))
                assert book.find(url, table, "ann") is None
                # a stale token (the seat was released) quietly falls back to a new seat
                book.remember(url, table, "ann", 1, "not-the-token")
                await again.command(f"join {table}")
                n = await seen.wait(lambda n: n.kind in ("info", "error"))
                assert n.kind == "info" and n.text.startswith(f"joined table {table}")
                nursery.cancel_scope.cancel()
