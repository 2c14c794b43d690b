"""A replay answer not worked out within its time is cut off: 503 with a sentence, the
replay process ended with the work it was doing, so the next request has the process to
itself (a new one) and is answered; a request waiting behind it past its time is 503 too,
and past REPLAY_WAITING waiting, a request is refused at once (server/replay_process.py)."""

from __future__ import annotations

import json
import os
import random
import time

import pytest
import trio
import trio.testing

from wildtable.protocol.engine import game
from wildtable.protocol.logfmt import encode_record
from wildtable.selfplay import play
from wildtable.server.replay_process import REPLAY_TIMEOUT
from wildtable.server.replays import OneLog, ReplayRefused, Replays

GAME = play(game("go-wild"), 2, {}, rng=random.Random(5))
DATA = encode_record(GAME.header) + b"".join(encode_record(r) for r in GAME.records)


async def _gone(pid: int) -> None:
    while os.path.exists(f"/proc/{pid}"):
        await trio.sleep(0.05)


async def test_an_answer_over_its_time_is_503_and_frees_the_process_for_the_next(tmp_path):
    replays = Replays(OneLog("t1", tmp_path / "t1.wlog", DATA))
    proc = replays.process
    try:
        with trio.fail_after(60):
            status, _ = await replays.answer("/replay/t1.json", "step=4")
            assert status == 200
            first = proc.pid
            proc.timeout = 0.5
            answers = []

            async def asked() -> None:
                answers.append(await replays.answer("/replay/t1.json", "step=5"))
            async with trio.open_nursery() as nursery:
                async def stuck() -> None:
                    with pytest.raises(ReplayRefused) as cut:
                        await proc.serve(lambda: proc.call(time.sleep, 3600))     # never done in time
                    answers.append(cut.value)
                nursery.start_soon(stuck)
                while proc.turn.borrowed_tokens == 0:
                    await trio.sleep(0.01)
                nursery.start_soon(asked)               # waits behind it, past its own time
            cut, (status, body) = answers[0], answers[1]
            assert cut.status == 503 and "took over 0.5 s" in cut.message and "try again" in cut.message
            assert status == 503 and "took over 0.5 s" in json.loads(body)["error"]
            await _gone(first)                          # the work was given up with the process
            proc.timeout = REPLAY_TIMEOUT
            status, answer = await replays.answer("/replay/t1.json", "step=6&view=0")
            assert status == 200 and json.loads(answer)["step"] == 6
            assert proc.pid not in (None, first)

            # more than max_waiting waiting: refused at once, not queued
            proc.max_waiting = 1
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: proc.serve(lambda: proc.call(time.sleep, 0.2)))
                await trio.testing.wait_all_tasks_blocked()
                status, body = await replays.answer("/replay/t1.json", "step=7")
            assert status == 503 and "many replay steps" in json.loads(body)["error"]
    finally:
        replays.close()
