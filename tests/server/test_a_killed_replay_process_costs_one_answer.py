"""A replay process that dies (killed, out of memory) costs the answer it was working
on, 503 with a sentence, and no more: the next request starts a new process and is
answered; one that died while idle costs no answer at all (server/replay_process.py)."""

from __future__ import annotations

import os
import random
import signal
import time

import trio

from wildtable.protocol.engine import game
from wildtable.protocol.logfmt import encode_record
from wildtable.selfplay import play
from wildtable.server.replays import OneLog, ReplayRefused, Replays

GAME = play(game("go-wild"), 2, {}, rng=random.Random(3))
DATA = encode_record(GAME.header) + b"".join(encode_record(r) for r in GAME.records)


def _state(pid: int) -> str | None:
    """Process ``pid``'s state letter (Z: ended, not yet reaped); None once it is reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


async def _ended(pid: int) -> None:
    while _state(pid) not in (None, "Z"):
        await trio.sleep(0.05)


async def _step(replays: Replays) -> int:
    status, _ = await replays.answer("/replay/t1.json", "step=9&view=0")
    return status


async def test_a_killed_replay_process_costs_the_answer_it_worked_on_and_no_more(tmp_path):
    replays = Replays(OneLog("t1", tmp_path / "t1.wlog", DATA))
    proc = replays.process
    try:
        with trio.fail_after(60):
            assert await _step(replays) == 200
            first = proc.pid

            # killed while it works on an answer: that answer is 503, the next is answered
            refused = []

            async def stuck() -> None:
                try:
                    await proc.serve(lambda: proc.call(time.sleep, 3600))
                except ReplayRefused as e:
                    refused.append(e)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(stuck)
                while proc.turn.borrowed_tokens == 0:       # its turn has come: the call is under way
                    await trio.sleep(0.01)
                os.kill(first, signal.SIGKILL)
            (e,) = refused
            assert e.status == 503 and "ended" in e.message and "try again" in e.message
            assert await _step(replays) == 200
            second = proc.pid
            assert second not in (None, first, os.getpid())
            while _state(first) is not None:        # reaped, not left a zombie
                await trio.sleep(0.05)

            # killed while idle: seen before the next request is sent, which is answered
            os.kill(second, signal.SIGKILL)
            await _ended(second)
            assert await _step(replays) == 200
            assert proc.pid not in (first, second, None) and _state(second) is None
    finally:
        replays.close()

