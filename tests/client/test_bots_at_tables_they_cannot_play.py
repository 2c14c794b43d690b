"""`wildtable bots` against a real server at tables it cannot play: a full table, a
finished one, more bots than free seats, a name the server would refuse, and a table
that is gone when the server comes back. Each is one clear line and an exit status, never
a traceback, and never a process that waits for ever. A Bot that cannot take its seat
raises BotError itself (not wrapped in an ExceptionGroup), so a player's client that
seats bots survives a seat taken in the meantime."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import trio

from wildtable.headless.bots import Bot, BotError, run_bot
from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server.app import Server
from wildtable.server.config import ServerConfig

from proc import LineReader
from serverkit import create, join, running_server, seated
from waitkit import wait_until

WILDTABLE = [sys.executable, "-m", "wildtable"]
ENV = dict(os.environ, PYTHONUNBUFFERED="1")


async def _bots(url: str, table: str, *more: str) -> subprocess.CompletedProcess:
    return await trio.run_process(WILDTABLE + ["bots", url, "--table", table, *more], capture_stdout=True,
                                  capture_stderr=True, check=False, env=ENV)


def _text(done) -> tuple[str, str]:
    return done.stdout.decode(), done.stderr.decode()


async def test_a_full_or_finished_table_or_too_many_bots_is_one_line_and_exit_1(tmp_path):
    with trio.fail_after(40):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "go-wild", 2, names=["ann", "bob"]) as (full, (ann, bob), _):
                done = await _bots(url, full, "--count", "1")
                out, err = _text(done)
                assert done.returncode == 1, (out, err)
                # in play, a full table is found by trying to join (see the next test): one line
                lines = (out + err).strip().splitlines()
                assert "Traceback" not in err and len(lines) == 1, (out, err)
                assert "cannot join table" in lines[0] and "table_full" in lines[0], lines

            async with connect(url, "eve") as eve:
                waiting = await create(eve, "go-wild", 2)
                await join(eve, waiting, 0)
                done = await _bots(url, waiting, "--count", "2")
                out, err = _text(done)
                assert done.returncode == 1 and out == "", (out, err)
                assert err.strip() == f"wildtable bots: table {waiting} has 1 free seat(s) of 2; --count 1 or fewer"

            async with connect(url, "cat") as cat:
                roomy = await create(cat, "go-wild", 3)
                await join(cat, roomy, 0)
                done = await _bots(url, roomy, "--count", "5", "--delay", "0")
                out, err = _text(done)
                assert done.returncode == 1 and out == "", (out, err)
                assert err.strip() == f"wildtable bots: table {roomy} has 2 free seat(s) of 3; --count 2 or fewer"
                done = await _bots(url, roomy, "--count", "10" + "0" * 30)
                assert done.returncode == 1 and "--count 2 or fewer" in _text(done)[1]
                # a name prefix the server would refuse (its names are 40 characters at most)
                done = await _bots(url, roomy, "--count", "2", "--name", "b" * 40)
                out, err = _text(done)
                assert done.returncode == 2 and "Traceback" not in err and "40 characters at most" in err, err

            # a game played to its end, then bots for it: nothing left to play
            async with connect(url, "dan") as dan:
                over = await create(dan, "wild-shots", 2)
            async with trio.open_nursery() as nursery:
                for i in range(2):
                    nursery.start_soon(Bot(url, over, f"r{i}", delay=0.0, verbose=False).run)
            assert server.tables[over].finished
            done = await _bots(url, over, "--count", "1")
            out, err = _text(done)
            assert done.returncode == 1 and "Traceback" not in err, err
            assert err.strip() == f"wildtable bots: the game at table {over} is over; there is nothing left to play"


async def test_a_seat_left_mid_game_is_taken_by_a_bot_although_it_keeps_its_name(tmp_path):
    """A seat released by `leave` mid-game is listed with its player's name (it keeps the
    cards) yet anyone may take it: `wildtable bots` must not call such a table full."""
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "go-wild", 2, names=["ann", "bob"]) as (table, (ann, bob), _):
                await ann.send(m.Leave())
                await ann.receive_until(lambda x: isinstance(x, m.Left))
                t = server.tables[table]
                assert t.info()["players"][0] == "ann" and t.info()["status"] == "playing"
                proc = await trio.lowlevel.open_process(
                    WILDTABLE + ["bots", url, "--table", table, "--count", "1", "--delay", "5"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
                try:
                    def sat() -> bool:
                        assert proc.poll() is None, "the bots command gave up"
                        return t.seats[0].conn is not None
                    await wait_until(sat, step=0.05, what="a bot in seat 0")
                    assert t.seats[0].name == "bot1"
                finally:
                    proc.terminate()
                    await proc.wait()


async def test_a_bot_that_cannot_take_its_seat_raises_bot_error_and_run_bot_reports_it(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2, names=["ann", "bob"]) as (table, (ann, bob), _):
                with pytest.raises(BotError, match="table_full"):
                    await Bot(url, table, "late", delay=0.0).run()
                said: list[str] = []
                # what a player's client does for `bots 1`: a refusal is a line, not a crash
                assert await run_bot(url, table, "late", 0.0, said.append) is None
                assert len(said) == 1 and "cannot join table" in said[0] and "table_full" in said[0], said
        with pytest.raises(BotError, match="cannot connect"):
            await Bot(url, table, "gone", delay=0.0).run()


async def test_bots_stop_with_exit_1_when_the_server_comes_back_without_their_table(tmp_path):
    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            async with running_server(tmp_path / "a") as (server, url):
                port = server.port
                async with connect(url, "ann") as ann:
                    table = await create(ann, "go-wild", 2)
                    await join(ann, table, 0)
                bots = await trio.lowlevel.open_process(
                    WILDTABLE + ["bots", url, "--table", table, "--delay", "0"], stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, env=ENV)
                out = LineReader(bots.stdout, timeout=15)
                await out.until(f"bot1: seat 1 at table {table}")
            await out.until("connection lost")
            # another server on the same port, with another data dir: the table is not there
            other = Server(ServerConfig(data_dir=tmp_path / "b", rate_limit=10_000.0, rate_burst=10_000.0))
            await nursery.start(other.run, "127.0.0.1", port)
            await out.until(f"bot1: no longer at table {table}; stopping")
            with trio.fail_after(10):
                rc = await bots.wait()
            text = await out.read_to_end()
            assert rc == 1, text
            assert "could not go back to the table: no_such_table" in text and "Traceback" not in text, text
            with trio.move_on_after(5):
                await other.shutdown("test over")
            nursery.cancel_scope.cancel()
