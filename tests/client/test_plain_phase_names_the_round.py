"""The line mode's `phase` line names the round in Go Wild!, which has no fixed number of
rounds (a real server in the process; the turn timer plays both seats)."""

from __future__ import annotations

import io

import trio

from wildtable.headless.core import ClientCore
from wildtable.headless.net import connect
from wildtable.client.plain import PlainOutput

from serverkit import create, join, running_server
from waitkit import wait_until


async def test_plain_phase_line_names_the_round_in_go_wild(tmp_path):
    """Each new round's `phase playing` line says which round it is (it used to print a
    bare `phase playing` every round, the same line again)."""
    out = io.StringIO()
    box: list[ClientCore] = []
    plain = PlainOutput(lambda: box[0], out)
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "bob") as bob:
                table = await create(bob, "go-wild", 2, turn_timer=0.02, first_player=0)
                await join(bob, table, 1)
                core = ClientCore(url, "ann", plain)
                box.append(core)
                async with trio.open_nursery() as nursery:
                    await nursery.start(core.run)
                    await core.join(table, 0)
                    await wait_until(lambda: core.mirror.over is not None or core.mirror.view.get("round", 0) >= 2,
                                     what="round 2 (or game over) in the mirror")
                    def phases() -> list[str]:
                        return [x for x in out.getvalue().splitlines() if x.startswith("phase playing")]
                    await wait_until(lambda: len(phases()) >= 2, timeout=5, what="two phase lines printed",
                                     show=out.getvalue)
                    got = phases()
                    assert got[:2] == ["phase playing round 1", "phase playing round 2"], out.getvalue()
                    nursery.cancel_scope.cancel()
