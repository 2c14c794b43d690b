"""A spectator's view has no `hand` (docs/PROTOCOL.md, "What a seat may know"), in every
game; the line mode then prints no `hand` line for a spectator (a view with `hand: []`
printed an empty one). A real server on 127.0.0.1; the line-mode client spectates."""

from __future__ import annotations

import io

import pytest
import trio

from wildtable.client.plain import run_plain
from wildtable.client.session import Launch

from serverkit import running_server, seated
from waitkit import wait_until


@pytest.mark.parametrize("game", ["run-wild", "go-wild", "wild-shots", "go-fish-wildcard"])
async def test_a_spectator_gets_no_hand_and_the_line_mode_prints_none(tmp_path, monkeypatch, game):
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(tmp_path / "state"))
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            seats = 3 if game == "go-wild" else 2
            async with seated(url, game, seats) as (table, conns, joined):
                await wait_until(lambda: server.tables[table].seq > 0, what="dealt (or the first chance record made)")
                out = io.StringIO()
                code = await run_plain(Launch(url=url, name="watcher"), io.StringIO(f"spectate {table}\nshow\nquit\n"), out)
            view = server.tables[table].game.view(server.tables[table].state, None)
    lines = out.getvalue().splitlines()
    assert code == 0 and any(x.startswith("info watching table") for x in lines), lines
    assert not [x for x in lines if x.startswith("hand")], lines
    assert "hand" not in view, view
