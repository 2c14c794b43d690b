"""`wildtable replay LOG --json --seat N --upto S` (issue #27) is what a real client at
seat N received at seq S: the same view and events as its update, on a game played on a
real server (a two-seat Go Wild!)."""

from __future__ import annotations

import json

import trio

from wildtable.cli import main
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from scripted import play_to_end
from serverkit import QUICK_GO_WILD, at_a_new_table, create, join, lowest_card, running_server


async def _game(data_dir):
    """Both seats play their lowest card to the end; what seat 1 received, and the log."""
    with trio.fail_after(40):
        async with running_server(data_dir) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                table, first, _ = await at_a_new_table(ann, lambda: create(ann, "go-wild", 2, **{**QUICK_GO_WILD, "target": 25}),
                                                       lambda t: m.Join(t, 0))
                second = await join(bob, table, 1)
                seen: list = [second]
                async with trio.open_nursery() as n:
                    n.start_soon(lambda: play_to_end(ann, first, lowest_card, timeout=30))
                    n.start_soon(lambda: play_to_end(bob, second, lowest_card, timeout=30, log=seen))
            return seen, server.tables[table].logfile.path


def test_json_seat_equals_the_update_the_seat_received(tmp_path, capsys):
    seen, log = trio.run(_game, tmp_path / "data")
    updates = [x for x in seen if isinstance(x, m.Update)]
    assert len(updates) > 5
    picks = {updates[0].seq, updates[len(updates) // 2].seq, updates[-1].seq}
    for u in (x for x in updates if x.seq in picks):
        rc = main(["replay", str(log), "--json", "--seat", "1", "--upto", str(u.seq)])
        doc = json.loads(capsys.readouterr().out)
        assert rc == 0 and doc["seq"] == u.seq and doc["view_as"] == 1
        assert doc["view"] == json.loads(json.dumps(u.view)), f"seq {u.seq}"
        assert doc["events"] == json.loads(json.dumps(list(u.events))), f"seq {u.seq}"
        assert doc["players"] == ["ann", "bob"]
    # the spectator's view hides both hands
    rc = main(["replay", str(log), "--json", "--seat", "spectator", "--upto", str(updates[2].seq)])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["view_as"] == "spectator" and "hand" not in doc["view"]
