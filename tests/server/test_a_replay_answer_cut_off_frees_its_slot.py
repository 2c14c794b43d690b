"""A replay answer not worked out within its time is cut off: 503 with a sentence, the
replay process ended with the work it was doing, so the next request has the process to
itself (a new one) and is answered; a request waiting behind it past its time is 503 too,
and past REPLAY_WAITING waiting, a request is refused at once (server/replay_process.py)."""

from __future__ import annotations

import json
import os
import random
import signal
import time

import pytest
import trio

from wildtable.protocol.engine import game
from wildtable.protocol.logfmt import encode_record
from wildtable.selfplay import play
from wildtable.server.listener import HANDSHAKE_TIMEOUT
from wildtable.server.replay_process import REPLAY_TIMEOUT
from wildtable.server.replays import OneLog, ReplayRefused, Replays

GAME = play(game("go-wild"), 2, {}, rng=random.Random(5))
DATA = encode_record(GAME.header) + b"".join(encode_record(r) for r in GAME.records)


async def _gone(pid: int) -> None:
    while os.path.exists(f"/proc/{pid}"):
        await trio.sleep(0.05)


async def _cut_off(proc, seconds: float) -> ReplayRefused:
    """What a call the process never finishes gets, given ``seconds``."""
    proc.timeout = seconds
    with pytest.raises(ReplayRefused) as cut:
        await proc.serve(lambda: proc.call(time.sleep, 3600))
    return cut.value


async def _busy(proc) -> None:
    """Wait until a request holds the process."""
    while proc.turn.borrowed_tokens == 0:
        await trio.sleep(0.01)


async def test_an_answer_over_its_time_is_503_and_frees_the_process_for_the_next(tmp_path):
    replays = Replays(OneLog("t1", tmp_path / "t1.wlog", DATA))
    proc = replays.process
    try:
        with trio.fail_after(60):
            status, _ = await replays.answer("/replay/t1.json", "step=4")
            assert status == 200
            first = proc.pid

            # never done in time: 503, and the work is given up with the process
            cut = await _cut_off(proc, 0.5)
            assert cut.status == 503 and "took over 0.5 s" in cut.message and "try again" in cut.message
            await _gone(first)
            proc.timeout = REPLAY_TIMEOUT
            status, answer = await replays.answer("/replay/t1.json", "step=6&view=0")
            assert status == 200 and json.loads(answer)["step"] == 6
            second = proc.pid
            assert second not in (None, first)

            # a request waiting behind one that holds the process, past its own time: 503
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_cut_off, proc, 3600)
                await _busy(proc)
                proc.timeout = 0.5
                status, body = await replays.answer("/replay/t1.json", "step=5")
                assert status == 503 and "took over 0.5 s" in json.loads(body)["error"]
                os.kill(second, signal.SIGKILL)         # the one holding it ends (503 too)
            proc.timeout = REPLAY_TIMEOUT

            # more than max_waiting in line: refused at once, not queued
            proc.max_waiting = 1
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: proc.serve(lambda: proc.call(time.sleep, 0.2)))
                await _busy(proc)
                status, body = await replays.answer("/replay/t1.json", "step=7")
            assert status == 503 and "many replay steps" in json.loads(body)["error"]
    finally:
        replays.close()


async def test_an_answer_over_the_default_time_is_503_before_the_listener_cuts_the_request(tmp_path):
    """As above at the default (REPLAY_TIMEOUT, 8 s), on the real clock (the work is in
    another process): cut off after 8 s, soon enough that the 503 goes out before the
    listener gives up on the HTTP request (its handshake timeout, 10 s)."""
    assert REPLAY_TIMEOUT == 8.0 and REPLAY_TIMEOUT < HANDSHAKE_TIMEOUT
    replays = Replays(OneLog("t1", tmp_path / "t1.wlog", DATA))
    proc = replays.process
    try:
        with trio.fail_after(30):
            status, _ = await replays.answer("/replay/t1.json", "step=4")      # the process up
            assert status == 200 and proc.timeout == REPLAY_TIMEOUT
            began = trio.current_time()
            with pytest.raises(ReplayRefused) as cut:
                await proc.serve(lambda: proc.call(time.sleep, 3600))
            took = trio.current_time() - began
            assert cut.value.status == 503 and "took over 8 s" in cut.value.message, cut.value.message
            assert REPLAY_TIMEOUT <= took < HANDSHAKE_TIMEOUT, took
    finally:
        replays.close()
