"""Game commands typed after the game is over, or in the lobby after leaving a table of
another game than the client's default, are refused with the real reason (a real server
in the process; the turn timer plays both seats to a one-point game)."""

from __future__ import annotations

import trio

from wildtable.headless.core import ClientCore, Notice, completions
from wildtable.headless.net import connect

from serverkit import create, join, running_server
from waitkit import wait_until


async def test_game_commands_after_game_over_and_in_the_lobby_say_why(tmp_path):
    notes: list[Notice] = []

    def rejected(text: str) -> str:
        (n,) = [n for n in notes if n.kind == "rejected" and n.text == text]
        return n.reason

    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "bob") as bob:
                table = await create(bob, "go-wild", 2, target=1, turn_timer=0.05, first_player=0)
                await join(bob, table, 1)
                core = ClientCore(url, "ann", notes.append)          # default game: run-wild
                async with trio.open_nursery() as nursery:
                    await nursery.start(core.run)
                    await core.join(table, 0)
                    await wait_until(lambda: core.mirror.over is not None, what="game over in the mirror")
                    hand = core.mirror.view["hand"]
                    assert hand                       # cards left, so only the game's end stops a play
                    await core.command("play 1 red")
                    await core.command("slough")
                    for text in ("play 1 red", "slough"):
                        assert rejected(text).startswith("the game is over: no more moves"), rejected(text)
                    # and Tab no longer offers cards or colours for a move that would be refused
                    assert completions(core, "play ") == [] and completions(core, "play 1 ") == []
                    assert "leave" in completions(core, "l")
                    await core.command("leave")
                    await wait_until(lambda: not core.at_table, what="the client away from the table")
                    notes.clear()
                    await core.command("p 1 red")
                    assert rejected("p 1 red").startswith("you are not at a table"), rejected("p 1 red")
                    await core.command("frobnicate")
                    assert rejected("frobnicate").startswith("unknown command 'frobnicate'")
                    nursery.cancel_scope.cancel()
