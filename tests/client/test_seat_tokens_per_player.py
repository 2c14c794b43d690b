"""Two players on one machine (one OS user, one state dir, so one seats.json) play side by
side at one table through the real CLI: `wildtable serve` and two `wildtable play --plain`
subprocesses. A kept seat token belongs to one player (its name and seat): bob's `join`
never resumes ann's seat, and each of them, restarted mid-game, takes back their own seat.
The game is played to its end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import trio

from wildtable.headless.seats import SeatBook

from proc import LineReader


class Player:
    """One `wildtable play --plain` subprocess, driven by its stdin and stdout."""

    def __init__(self, url: str, name: str, *extra: str):
        self.argv = [sys.executable, "-m", "wildtable", "play", url, "--plain", "--name", name, *extra]
        self.proc = None
        self.out: LineReader | None = None

    async def start(self, nursery) -> "Player":
        env = dict(os.environ, PYTHONUNBUFFERED="1")      # the shared (test's) state dir
        self.proc = await trio.lowlevel.open_process(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                     stderr=subprocess.PIPE, env=env)
        self.out = LineReader(self.proc.stdout, timeout=20)
        self.err = LineReader(self.proc.stderr, timeout=None, errors="replace")
        nursery.start_soon(self.err.read_to_end)
        return self

    async def send(self, text: str) -> None:
        await self.proc.stdin.send_all(text.encode() + b"\n")

    async def quit(self) -> list[str]:
        await self.send("quit")
        await self.out.until(r"^info bye")
        assert await self.proc.wait() == 0
        assert "Traceback" not in self.err.text, self.err.text
        return self.out.seen

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()


async def test_two_players_of_one_user_keep_their_own_seats_through_restarts(tmp_path):
    state_dir = Path(os.environ["WILDTABLE_STATE_DIR"])       # one state dir for both players
    data = tmp_path / "data"
    procs: list = []
    with trio.fail_after(120):
        server = await trio.lowlevel.open_process(
            [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data)],
            stderr=subprocess.PIPE, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        procs.append(server)
        try:
            async with trio.open_nursery() as nursery:
                err = LineReader(server.stderr, timeout=20, errors="replace")
                # port 0: a port picked here and handed over could be taken in between
                url = (await err.until(r"serving on (ws://\S+)"))[1]
                nursery.start_soon(err.read_to_end)

                ann = await Player(url, "ann").start(nursery)
                procs.append(ann)
                await ann.send("create run-wild 2 rounds=1")
                table = (await ann.out.until(r"^info joined table (\S+) \(Run Wild\) at seat 0 as ann$"))[1]

                bob = await Player(url, "bob").start(nursery)
                procs.append(bob)
                await bob.send("list")
                await bob.out.until(rf"^table 1 {table} ")
                await bob.send("join 1")
                # bob gets the free seat, not ann's seat "back" with her token
                hit = await bob.out.until(rf"^(info|error) .*table {table}")
                assert hit.string == f"info joined table {table} (Run Wild) at seat 1 as bob", hit.string
                book = SeatBook(state_dir / "seats.json")
                assert book.find(url, table, "ann")[0] == 0 and book.find(url, table, "bob")[0] == 1

                for p in (ann, bob):
                    await p.send("ready")
                for p in (ann, bob):
                    await p.out.until(r"^event Go! round 1 has started")
                    await p.send("draw")
                    await p.out.until(r"^ok draw$")

                # each restarts in the middle of the round and takes back their own seat
                for name, seat in (("ann", 0), ("bob", 1)):
                    old = ann if name == "ann" else bob
                    await old.quit()
                    new = await Player(url, name, "--table", table).start(nursery)
                    procs.append(new)
                    back = await new.out.until(r"^(info|error) ")
                    assert back.string.startswith(f"info took your seat {seat} back at table {table} (Run Wild)"), \
                        back.string
                    await new.out.until(r"^hand ")
                    if name == "ann":
                        ann = new
                    else:
                        bob = new

                for p in (ann, bob):
                    await p.send("draw")
                    await p.out.until(r"^ok draw$")
                await ann.send("stuck")
                await ann.out.until(r"^ok stuck$")
                await bob.send("stuck")
                # everyone stuck ends the round; a tie for the lowest total plays another, which
                # the phase line names "tie-break round (after 1 round)", not "round 2"
                for _ in range(10):
                    ends = [(await p.out.until(r"^(over .*|phase ready .*round.*)$"))[1] for p in (ann, bob)]
                    if all(x.startswith("over ") for x in ends):
                        break
                    assert not any(x.startswith("over ") for x in ends), ends
                    for p in (ann, bob):
                        await p.send("ready")
                    for p in (ann, bob):
                        await p.out.until(r"^event Go! round \d+ has started")
                    for p in (ann, bob):
                        await p.send("stuck")
                        await p.out.until(r"^(ok|rejected) stuck")
                for x in ends:
                    assert x.startswith("over game over: "), x
                seen = {p: "\n".join(await p.quit()) for p in (ann, bob)}
                for text in seen.values():
                    assert "resumed from another connection" not in text
                    assert "seat_taken" not in text
                # the finished game's tokens are forgotten; nothing of the other player's was used
                assert book.find(url, table, "ann") is None and book.find(url, table, "bob") is None
                assert json.loads((state_dir / "seats.json").read_text()) == []
                server.terminate()
                assert await server.wait() == 0
        finally:
            for p in procs:
                if isinstance(p, Player):
                    p.kill()
                elif p.returncode is None:
                    p.kill()
