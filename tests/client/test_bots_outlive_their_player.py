"""Bots a player seats with `bots N` are run by the server (seat_bots), not by the
player's client: through the real CLI (`wildtable serve` and `wildtable play --plain`
subprocesses), ann types `bots 2`, leaves and quits, and the game goes on to its end with
a third bot (`wildtable bots --count 1`) in the seat she released; also across a
restart of the server, whose bots take their seats back with the tokens it kept in
its data dir (0600). A spectator cannot seat bots: refused by the client and by the
server, in a sentence that says why.

Turn timers are off, so a seat whose bot is gone would hold the game for ever (before
the server ran them, the bots died with ann's client and these tests never ended)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys

import trio

from wildtable.headless.core import ClientCore, Notice
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from proc import LineReader, quit_plain
from serverkit import create, join, running_server, server_config
from waitkit import wait_until

WILDTABLE = [sys.executable, "-m", "wildtable"]
ENV = dict(os.environ, PYTHONUNBUFFERED="1")


async def _serve(nursery, data) -> tuple[trio.Process, str]:
    proc = await trio.lowlevel.open_process(WILDTABLE + ["serve", "--port", "0", "--data-dir", str(data)],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    out = LineReader(proc.stdout, timeout=30)
    url = (await out.until(r"^serving on (ws://\S+)$"))[1]
    nursery.start_soon(out.read_to_end)
    nursery.start_soon(LineReader(proc.stderr, timeout=None, errors="replace").read_to_end)
    return proc, url


async def _ann_seats_two_bots_and_goes(url: str) -> tuple[str, list[str]]:
    """ann creates a Go Wild! table for three, types `bots 2`, sees the deal, leaves and
    quits; the table's id and what her client printed."""
    ann = await trio.lowlevel.open_process(
        WILDTABLE + ["play", url, "--plain", "--name", "ann", "--bot-delay", "0.05"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    out = LineReader(ann.stdout, timeout=30)
    try:
        await ann.stdin.send_all(b"create go-wild 3 turn_timer=0 target=10\n")
        table = (await out.until(r"^info joined table (\S+) \(Go Wild!\) at seat 0 as ann$"))[1]
        await ann.stdin.send_all(b"bots 2\n")
        await out.until(r"^hand \S")                 # dealt: every seat was taken
        await ann.stdin.send_all(b"leave\n")
        await out.until(rf"^info you left table {table}$")
        await quit_plain(ann, out)
    finally:
        if ann.returncode is None:
            ann.kill()
    return table, out.seen


def _said_who_runs_them(lines: list[str]) -> None:
    seated = [line for line in lines if line.startswith("info seated 2 bot(s)")]
    assert seated == ["info seated 2 bot(s) (normal): bot1 (seat 1), bot2 (seat 2); the server runs them, "
                      "so they play on if you leave"], lines


async def _a_bot_takes_the_free_seat_and_the_game_ends(url: str, table: str) -> str:
    done = await trio.run_process(WILDTABLE + ["bots", url, "--table", table, "--count", "1", "--delay", "0.05"],
                                  capture_stdout=True, capture_stderr=True, check=False, env=ENV)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, (out, err)
    assert f"bot1: seat 0 at table {table}" in out, out
    assert "game over" in out, out
    return out


async def test_bots_seated_with_bots_n_play_on_after_their_player_quits(tmp_path):
    with trio.fail_after(180):
        async with trio.open_nursery() as nursery:
            server, url = await _serve(nursery, tmp_path / "data")
            try:
                table, said = await _ann_seats_two_bots_and_goes(url)
                await _a_bot_takes_the_free_seat_and_the_game_ends(url, table)
                _said_who_runs_them(said)
            finally:
                server.send_signal(signal.SIGTERM)
                assert await server.wait() == 0


async def test_the_servers_bots_come_back_after_a_restart(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(180):
        async with trio.open_nursery() as nursery:
            server, url = await _serve(nursery, data)
            try:
                table, _ = await _ann_seats_two_bots_and_goes(url)
            finally:
                server.send_signal(signal.SIGTERM)
                assert await server.wait() == 0
            book = data / "bots.json"
            assert stat.S_IMODE(book.stat().st_mode) == 0o600
            assert book.read_text().count(table) == 2       # a secret token per bot, for the next start

            server, url = await _serve(nursery, data)        # another port: the bots find it all the same
            try:
                await _a_bot_takes_the_free_seat_and_the_game_ends(url, table)
            finally:
                server.send_signal(signal.SIGTERM)
                assert await server.wait() == 0


async def test_a_spectator_cannot_seat_bots(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "sam") as sam:
                table = await create(ann, "go-wild", 3)
                await join(ann, table, 0)
                await sam.send(m.Spectate(table))
                await sam.receive_until(lambda x: isinstance(x, m.Spectating))
                await sam.send(m.SeatBots(table, 2))
                err = await sam.receive_until(lambda x: isinstance(x, (m.Error, m.BotsSeated)))
                assert isinstance(err, m.Error) and (err.code, err.ref) == ("not_seated", "seat_bots"), err
                assert err.message == (f"you are watching table {table} as a spectator: only a player at the "
                                       "table can seat bots at it")
                # nobody was seated: the two seats are still free
                await ann.send(m.SeatBots("tnosuch", 1))
                err = await ann.receive_until(lambda x: isinstance(x, (m.Error, m.BotsSeated)))
                assert err.code == "not_at_table", err

            # the client says so before sending anything
            done = await trio.run_process(
                WILDTABLE + ["play", url, "--plain", "--name", "sam", "--table", table, "--spectate"],
                stdin=b"bots 1\nquit\n", capture_stdout=True, capture_stderr=True, check=False, env=ENV)
            lines = done.stdout.decode().splitlines()
            assert ("rejected bots 1 :: bad_command: you are watching this table: only a player at the table can "
                    "seat bots at it") in lines, lines
            assert done.returncode == 0, lines


async def bots_gone(server, within: float = 5.0) -> None:
    """The server's bots have all ended: a bot's task ends just after its table is
    forgotten or its seat released, so the count is awaited (bounded), not read at once."""
    await wait_until(lambda: server.bots.running == 0, timeout=within,
                     what="every bot ended after they were alone", show=lambda: server.bots.running)


async def test_bots_left_alone_at_a_waiting_table_leave_it_and_it_expires(tmp_path):
    """ann seats two bots at a table for four and goes before it fills: the server's bots
    do not hold it for ever. Once they have been alone at it for --waiting-expiry they
    leave, and the table expires like any table nobody is at."""
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", waiting_expiry=1.0)) as (server, url):
            async with connect(url, "ann") as ann:
                table = await create(ann, "go-wild", 4)
                await join(ann, table, 0)
                await ann.send(m.SeatBots(table, 2, None, 50))
                before: list = []
                seated = await ann.receive_until(lambda x: isinstance(x, (m.Error, m.BotsSeated)), keep=before)
                assert isinstance(seated, m.BotsSeated) and seated.seats == (1, 2), seated
                # the answer comes once they sat: ann was told of them at the table first
                shown = [x for x in before if isinstance(x, m.Players)]
                assert shown and [p["name"] for p in shown[-1].players] == ["ann", "bot1", "bot2", None], before
            async with connect(url, "lee") as lee:
                async def listed() -> bool:
                    await lee.send(m.ListTables())
                    return all(t["table"] != table for t in (await lee.receive_until(
                        lambda x: isinstance(x, m.TableList))).tables)
                await wait_until(listed, step=0.2, timeout=30, what="the table gone from the list")
            await bots_gone(server)
            assert (tmp_path / "data" / "expired" / f"{table}.wlog").exists()
            assert table not in (tmp_path / "data" / "bots.json").read_text()


async def test_bots_alone_at_a_game_that_cannot_go_on_leave_it(tmp_path):
    """With no turn timer, a game whose other players are gone cannot go on: bots alone
    at it with nothing happening for --waiting-expiry leave (their seats are free for
    anyone), rather than hold a connection and a bot of the server's for ever."""
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", waiting_expiry=1.0)) as (server, url):
            async with connect(url, "ann") as ann:
                table = await create(ann, "go-wild", 2, turn_timer=0)
                await join(ann, table, 0)
                await ann.send(m.SeatBots(table, 1, None, 50))
                await ann.receive_until(lambda x: isinstance(x, m.BotsSeated))     # the bot sat: dealt
            async with connect(url, "lee") as lee:
                async def listed() -> dict | None:
                    await lee.send(m.ListTables())
                    (entry,) = [t for t in (await lee.receive_until(lambda x: isinstance(x, m.TableList))).tables
                                if t["table"] == table]
                    return entry if entry["connected"] == [False, False] else None
                entry = await wait_until(listed, step=0.2, timeout=30, what="both seats shown offline")
            assert entry["status"] == "playing"
            await bots_gone(server)
            assert table not in (tmp_path / "data" / "bots.json").read_text()


async def test_a_seat_released_mid_game_is_filled_with_bots_n(tmp_path):
    """bob leaves mid-game: his seat keeps his name, shown offline, yet it is free, and
    ann's `bots 1` fills it (the client used to count it taken, by its name)."""
    notes: list[Notice] = []
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "bob") as bob, trio.open_nursery() as nursery:
                table = await create(bob, "go-wild", 2, turn_timer=0)
                await join(bob, table, 1)
                ann = ClientCore(url, "ann", notes.append, bot_delay=0.05)
                await nursery.start(ann.run)
                await ann.join(table, 0)
                await bob.send(m.Leave())
                await bob.receive_until(lambda x: isinstance(x, m.Left))
                await wait_until(lambda: ann.mirror.seq > 0 and ann.mirror.players[1].get("connected") is False,
                                 what="ann's mirror showing bob offline")
                assert ann.mirror.players[1]["name"] == "bob"
                await ann.command("bots 1")
                def answer() -> list:
                    return [n for n in notes if n.kind in ("error", "rejected") or n.text.startswith("seated ")]
                (said,) = await wait_until(answer, what="an answer to `bots 1`")
                assert (said.kind, said.text.split(";")[0]) == ("info", "seated 1 bot(s) (normal): bot1 (seat 1)"), said
                nursery.cancel_scope.cancel()
