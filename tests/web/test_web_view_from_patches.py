"""The page builds its view from patches (docs/PROTOCOL.md, "Updates are patches": changed
keys, removed keys, list items) and holds exactly the view the engine gives its seat
after another player's moves: draws change the counts in the players list item by item,
a meld grows the melds list, a take changes one meld."""

from __future__ import annotations

import functools
import json

from wildtable.headless.games.run_wild import find_melds
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from webkit import DESKTOP


def _plain(x):
    return json.loads(json.dumps(x))


def test_the_pages_view_is_the_engines_after_every_move(players, web_server):
    p = players("ann", viewport=DESKTOP).open()
    p.enter("ann")
    table = p.create("run-wild", 2, rounds=1, hand_size=18, idle_timeout=120)
    page = p.page
    arbiter = web_server.server.tables[table]
    state: dict = {}

    async def bob(actions_left: int) -> int:
        """Seat 1: ready, then draw (and, once a meld of four shows, meld it and take a
        card back) until ``actions_left`` moves are made or the pile is empty; returns
        the number of moves made."""
        made = 0
        async with connect(web_server.url, "bob") as c:
            await c.send(m.Rejoin(table, 1, state["token"]))
            joined = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
            assert isinstance(joined, m.Joined), joined
            view = joined.view
            state["intent"] = 0

            async def act(action: dict):
                state["intent"] += 1
                await c.send(m.Intent(state["intent"], action))
                seen: list = []
                answer = await c.receive_until(lambda x: isinstance(x, (m.Accepted, m.Rejected)), keep=seen)
                if isinstance(answer, m.Rejected):
                    return None, answer
                up = next((x for x in seen if isinstance(x, m.Update) and x.seq >= answer.seq), None)
                if up is None:
                    up = await c.receive_until(lambda x: isinstance(x, m.Update) and x.seq >= answer.seq)
                return up.view, answer

            async def wait_playing():
                nonlocal view
                while view.get("phase") != "playing":
                    view = (await c.receive_until(lambda x: isinstance(x, m.Update))).view

            v, _ = await act({"kind": "ready"})
            view = v or view
            state["ready"] = True
            await wait_playing()
            melded = False
            while made < actions_left:
                melds = [(cs, vs) for cs, vs in find_melds(view["hand"], view["settings"]) if len(cs) >= 4]
                if melds and not melded:
                    cards, values = melds[0]
                    v, a = await act({"kind": "meld", "cards": cards, "values": values})
                    if v is not None:
                        mid = max(x["id"] for x in v["melds"])
                        v2, _ = await act({"kind": "take", "meld": mid, "card": cards[-1]})
                        view = v2 or v
                        made += 2
                        melded = True
                        continue
                v, a = await act({"kind": "draw"})
                if v is None:
                    break
                view = v
                made += 1
        return made

    async def sit() -> None:
        async with connect(web_server.url, "bob") as c:
            await c.send(m.Join(table, 1))
            joined = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
            assert isinstance(joined, m.Joined), joined
            state["token"] = joined.token

    web_server.run(sit)
    page.wait_for_selector('[data-action="ready"]', timeout=10_000)
    page.click('[data-action="ready"]')
    made = web_server.run(functools.partial(bob, 12))
    assert made >= 6, made
    # nothing acts now: the page catches up to the table's last seq, whose view it must hold
    seq = arbiter.seq
    page.wait_for_function("s => window.wildtable.at.seq >= s", arg=seq, timeout=10_000)
    st = p.state()
    assert st["seq"] == seq == arbiter.seq
    want = _plain(arbiter.game.view(arbiter.state, 0))
    assert st["view"] == want, {k: (st["view"].get(k), want.get(k)) for k in set(want) | set(st["view"])
                                if st["view"].get(k) != want.get(k)}
