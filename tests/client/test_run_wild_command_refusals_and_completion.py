"""Run Wild commands at a real table (a private server in the process, the deck stacked
through its chance source so the test knows every hand):

- `meld B5 W D3` (a Draw-3 named with a wild) is refused with a sentence; it used to end
  the whole client with a traceback (StopIteration out of the wild-value guess);
- `add W to mN` when mN already runs 1-12 says so, instead of a server refusal about a
  value 0 the player never typed;
- Tab completion and the grey hint offer nothing more once add/take/swap name their
  meld and cards (they used to offer the meld handle again: `add B5 to m1 m1`), and
  `meld` offers W only while the hand holds a wild not yet named.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import trio

from wildtable.headless.core import ClientCore, Notice, complete_line, completions
from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.games import run_wild as E

from serverkit import create, join, reply_to, running_server
from waitkit import wait_until


def stacked(hands: list[list[str]]) -> tuple[int, ...]:
    """A deck dealing ``hands[s]`` (labels, "W", "D3") as the top of seat s's pile, at a
    table of len(hands) seats dealt by seat 0 (the deal starts at seat 1)."""
    n = len(hands)
    wilds = list(range(E.FIRST_WILD, E.FIRST_DRAW3))
    d3s = list(range(E.FIRST_DRAW3, E.DECK_SIZE))
    tops = [[wilds.pop(0) if x == "W" else d3s.pop(0) if x == "D3" else E.card_id(x[0], int(x[1:]))
             for x in labels] for labels in hands]
    used = {c for top in tops for c in top}
    rest = iter(c for c in range(E.DECK_SIZE) if c not in used)
    piles = [iter(top) for top in tops]
    deck = []
    for i in range(E.DECK_SIZE):
        c = next(piles[(1 + i) % n], None)
        deck.append(next(rest) if c is None else c)
    return tuple(deck)


@asynccontextmanager
async def at_table(tmp_path, ann: list[str], bob: list[str], **settings):
    """ann (a ClientCore, seat 0) and bob (a raw connection, seat 1), both ready: play is on."""
    notes: list[Notice] = []
    deck = stacked([ann, bob])
    async with running_server(tmp_path / "data", chance=lambda size: deck) as (server, url):
        async with connect(url, "bob") as conn:
            table = await create(conn, "run-wild", 2, first_dealer=0, **settings)     # the deck is stacked for it
            await join(conn, table, 1)
            core = ClientCore(url, "ann", notes.append)
            async with trio.open_nursery() as nursery:
                await nursery.start(core.run)
                await core.join(table, 0)
                await conn.send(m.Intent(1, {"kind": "ready"}))
                assert isinstance(await reply_to(conn, 1), m.Accepted)
                await core.command("ready")
                await wait_until(lambda: core.mirror.view.get("phase") == "playing", what="the mirror playing")
                yield core, notes
                nursery.cancel_scope.cancel()


async def answer(notes: list[Notice], text: str) -> Notice:
    """The accepted/rejected notice of the command ``text``."""
    def found():
        return next((n for n in notes if n.kind in ("accepted", "rejected") and n.text == text), None)
    return await wait_until(found, what=f"an answer to {text!r}")


async def test_a_draw3_named_in_a_meld_is_refused_and_the_client_goes_on(tmp_path):
    with trio.fail_after(15):
        async with at_table(tmp_path, ["B5", "B6", "W", "D3", "R1", "G2", "Y3", "P4"],
                            ["B7", "B8", "G9", "R9", "B12", "Y7", "P8", "R2"]) as (core, notes):
            for text in ("meld B5 W D3", "m D3 B5 W=5", "meld B5 B6 D3"):
                await core.command(text)
                n = await answer(notes, text)
                assert n.kind == "rejected", n
                assert "a Draw-3 is never part of a set or run: play it with draw3" in n.reason, n
            await core.command("meld B5 B6 W")          # the client is alive and plays on
            assert (await answer(notes, "meld B5 B6 W")).kind == "accepted"


async def test_a_wild_added_to_a_full_run_is_refused_with_the_reason(tmp_path):
    blues = [f"B{k}" for k in range(1, 13)]
    with trio.fail_after(15):
        async with at_table(tmp_path, blues + ["W", "W"], ["G1", "G2", "G3", "R9", "Y7", "P8", "R2", "Y1"],
                            hand_size=14) as (core, notes):
            await core.command("meld " + " ".join(blues))
            assert (await answer(notes, "meld " + " ".join(blues))).kind == "accepted"
            await wait_until(lambda: core.mirror.view.get("melds"), what="the meld in the mirror")
            await core.command("add W to m1")
            n = await answer(notes, "add W to m1")
            assert n.kind == "rejected" and n.code == "bad_command", n
            assert "m1 already runs from 1 to 12" in n.reason, n
            await core.command("add W=12 to m1")        # W=N still goes to the server, which says why
            assert (await answer(notes, "add W=12 to m1")).code == "does_not_fit"


async def test_completion_stops_once_the_command_is_whole(tmp_path):
    with trio.fail_after(15):
        async with at_table(tmp_path, ["B5", "B6", "B7", "W", "B9", "G9", "R9", "P1"],
                            ["B1", "G2", "Y3", "R4", "B12", "Y7", "P8", "R2"]) as (core, notes):
            await core.command("meld B5 B6 B7")
            assert (await answer(notes, "meld B5 B6 B7")).kind == "accepted"
            await wait_until(lambda: core.mirror.view.get("melds"), what="the meld in the mirror")
            # still wanted: a meld handle, a card
            assert completions(core, "add B9 to ") == ["m1"]
            assert completions(core, "add m1 ") == ["B9", "G9", "R9", "P1", "W"]
            assert completions(core, "take m1 ") == ["B5", "B6", "B7"]
            # whole commands: nothing more to offer (Tab used to type a second meld handle)
            for text in ("add B9 to m1 ", "add m1 W ", "take B5 from m1 ", "swap B7 for W in m1 ",
                         "a W m1 ", "t m1 B7 "):
                assert completions(core, text) == [], text
                assert complete_line(core, text) is None, text
            # one wild in hand: W is offered once
            assert "W" in completions(core, "meld B9 ")
            assert "W" not in completions(core, "meld W B9 ")
            assert "W" not in completions(core, "meld w=9 B9 ")
