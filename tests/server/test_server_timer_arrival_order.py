"""The turn timer and an intent that arrived in time: the log's order is the order things
happened. Found: when the timer's deadline passed while the table's arbiter waited for a
commit, the timer's move went first, and the seat's own play, which had reached the
server before the deadline, was refused with not_your_turn."""

from __future__ import annotations

import time

import pytest
import trio

from wildtable.headless.games import go_wild as gw
from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, read_log

from serverkit import create, join, reply_to, running_server, server_config

# alone under pytest -n (tests/conftest.py): a play 0.4 s or 0.1 s from the timer's deadline
pytestmark = pytest.mark.alone

TIMER = 1.0


@pytest.mark.parametrize("arrives, in_time", [(0.6, True), (1.1, False)])
async def test_a_play_and_the_timer_go_in_the_order_they_happened(tmp_path, arrives, in_time):
    """ann's play reaches the server before the deadline (+1.0 s) or after it, while the
    arbiter is busy committing across the deadline: before, it goes first; after, the
    timer's move for her goes first and her play is refused (it is bob's turn then)."""
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(server_config(data, durability="always")) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                table = await create(ann, "go-wild", 2, turn_timer=TIMER, first_player=0, target=100)
                joined = await join(ann, table, 0)
                await join(bob, table, 1)
                # ann's turn begins: the timer will play for her TIMER s from now
                view = joined.view
                while not (view.get("phase") == "playing" and view.get("turn") == 0):
                    view = (await ann.receive_until(lambda x: isinstance(x, m.Update))).view
                began = trio.current_time()
                play = gw.choose(view)
                assert play is not None

                # From now on every commit takes 0.8 s (the disk is slow): bob's refused
                # play, logged at +0.4 s, is being committed across the deadline (+1.0 s)
                writer = server.writer
                write = writer._write_group

                def slow_write(*args):
                    time.sleep(0.8)
                    write(*args)
                writer._write_group = slow_write
                await trio.sleep_until(began + 0.4)
                await bob.send(m.Intent(1, {"kind": "draw"}))
                # ... while ann's play reaches the server before or after the deadline
                await trio.sleep_until(began + arrives)
                await ann.send(m.Intent(7, play))
                answer = await reply_to(ann, 7)
                writer._write_group = write
                if not in_time:
                    assert isinstance(answer, m.Rejected) and answer.code == "not_your_turn", answer
                    return
                assert isinstance(answer, m.Accepted), answer

        records = read_log((data / f"{table}.wlog").read_bytes()).records
        mine = next(r for r in records if type(r) is ActionAccepted and r.intent == 7)
        before = [r for r in records if type(r) is ActionAccepted and r.seq < mine.seq]
        assert not any(r.by == "timer" for r in before), [r for r in before if r.by == "timer"]
