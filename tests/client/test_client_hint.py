"""`hint` in the line mode: the expert's choice for your own seat, a move the server
accepts (docs/PLAYING.md "Hints and analysis")."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from proc import LineReader


async def test_hint_in_plain_names_a_legal_move_and_the_server_takes_it(tmp_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1", WILDTABLE_STATE_DIR=str(tmp_path / "state"))
    with trio.fail_after(60):
        player = await trio.lowlevel.open_process(
            [sys.executable, "-m", "wildtable", "play", "--bots", "3", "--game", "wild-shots", "--bot-delay", "0.05",
             "--plain"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        try:
            out = LineReader(player.stdout, timeout=30)

            async def send(text: str) -> None:
                await player.stdin.send_all(text.encode() + b"\n")

            await out.until(r"^turn you: ")
            hand = [x for x in out.seen if x.startswith("hand ")][-1].split()[1:]
            await send("hint")
            line = (await out.until(r"^hint (.*)$")).group(1)
            move, _, why = line.partition(" - ")
            assert why.startswith("the expert's choice, worth "), line
            word, card = move.split()
            assert word == "play" and card in [c.split("(")[0] for c in hand], (move, hand)
            await send(move)
            await out.until(rf"^ok {move}$")
            await send("quit")
            await out.until(r"^info bye$")
            assert await player.wait() == 0
        finally:
            if player.returncode is None:
                player.kill()
                await player.wait()


def test_f2_in_the_full_screen_client_shows_the_hint(monkeypatch, tmp_path):
    """F2 asks for a hint: at your turn the result line names a card you may play."""
    import asyncio

    from wildtable.client.session import Launch
    from wildtable.client.tui import PlayApp

    from uikit import text_of, until
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(tmp_path / "state"))

    async def scenario():
        app = PlayApp(Launch(name="ann", game="wild-shots", bots=3, bot_delay=0.05))
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, "ann's turn", lambda: app.core is not None and app.core.mirror.view.get("turn") == 0
                        and app.core.mirror.view.get("phase") == "playing")
            await pilot.press("f2")
            await until(pilot, "the hint", lambda: text_of(app, "#result").startswith("hint: "))
            move = text_of(app, "#result")[len("hint: "):].split(" - ")[0]
            assert app.core.plugin.parse(move.split(), app.core.mirror.view)["card"] in \
                app.core.mirror.view["playable"], move
            await pilot.press("ctrl+q")
            await pilot.pause()

    asyncio.run(scenario())



def test_the_client_remembers_what_its_seat_saw_for_the_hint():
    """The tricks of a round leave the view as the round goes on (it shows the current and
    the last one); the client's memory, fed by its own updates alone, holds them all."""
    from wildtable.headless.appraise import wire
    from wildtable.headless.reducer import Reducer
    from wildtable.protocol import messages as m
    from wildtable.protocol.engine import game as find_game
    from wildtable.selfplay import play

    game = find_game("wild-shots")
    r = Reducer("ann")
    r.absorb(m.Joined("t1", game.NAME, 0, "secret", 0, {}, ()), 0.0)
    at = {"seq": 0, "round_1": None}
    played: list[int] = []

    def on_step(before, after, action, seat, req, events):
        at["seq"] += 1
        if seat is not None and before.round == 0:
            played.append(action.card)
        if before.round == 0 and after.round == 1 and at["round_1"] is None:
            at["round_1"] = set(r.memo["ws_played"])        # all round 1's updates, before round 2's
        r.absorb(m.Update(at["seq"], (), wire(game.view(after, 0))), 0.0)

    play(game, 4, {}, seed=4, on_step=on_step)
    assert len(played) == 40 and set(played[:36]) <= at["round_1"] <= set(played)
