"""The full-screen UI driven headless (Textual's run_test, 80x24) against a real server on
127.0.0.1 that runs in a Trio thread, with a second player (bob) acting from that thread.

The deck is stacked through the server's chance source (as the server tests seed it),
so the test knows what everyone holds: ann can meld and go out, bob holds a Draw-3."""

from __future__ import annotations

import asyncio
import socket
import threading

import trio
from textual.widgets import DataTable, RichLog

from wildtable.headless.net import connect
from wildtable.client.session import Launch
from wildtable.client.tui import PlayApp
from wildtable.protocol import messages as m
from wildtable.protocol.games.run_wild import DECK_SIZE, card_id

from serverkit import create, join, reply_to, running_server
from uikit import screen_text, text_of, until


def cid(label: str) -> int:
    return 69 if label == "D3" else card_id(label[0], int(label[1:]))


def stacked_deck(seat0: list[str], seat1: list[str]) -> tuple[int, ...]:
    """A deck order dealing ``seat0``/``seat1`` on top of those seats' piles (two seats,
    dealer seat 0: the deal goes seat 1, seat 0, seat 1, ...)."""
    top0, top1 = [cid(x) for x in seat0], [cid(x) for x in seat1]
    rest = [c for c in range(DECK_SIZE) if c not in top0 + top1]
    pile0 = top0 + rest[:36 - len(top0)]
    pile1 = top1 + rest[36 - len(top0):]
    deck = []
    for a, b in zip(pile1, pile0):
        deck += [a, b]
    return tuple(deck)


class ServerThread:
    """A real server and bob's connection, in their own Trio run on another thread."""

    def __init__(self, data_dir, deck: tuple[int, ...]):
        self.data_dir, self.deck = data_dir, deck
        self.started = threading.Event()
        self.url = self.table = None
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._next_intent = 1

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as e:
            self.failure = e
            self.started.set()

    async def _main(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        with trio.fail_after(60):
            async with running_server(self.data_dir, chance=lambda size: self.deck) as (server, url):
                self.server, self.url = server, url
                async with connect(url, "bob") as bob:
                    self.bob = bob
                    self.table = await create(bob, "run-wild", 2, rounds=1, hand_size=3, first_dealer=0)
                    await join(bob, self.table, 1)
                    self.started.set()
                    await self._stop.wait()

    def __enter__(self) -> "ServerThread":
        self._thread.start()
        assert self.started.wait(15), "the server thread did not start"
        if self.failure:
            raise self.failure
        return self

    def __exit__(self, *exc) -> None:
        trio.from_thread.run_sync(self._stop.set, trio_token=self.token)
        self._thread.join(15)

    async def bob_does(self, action: dict):
        """Bob sends one intent; returns the server's answer (runs in the Trio thread)."""
        async def go():
            iid = self._next_intent
            self._next_intent += 1
            await self.bob.send(m.Intent(iid, action))
            return await reply_to(self.bob, iid)
        return await asyncio.to_thread(trio.from_thread.run, go, trio_token=self.token)


def events_text(app) -> str:
    log = app.query_one("#events", RichLog)
    return "\n".join(line.text for line in log.lines)


async def type_line(pilot, text: str) -> None:
    await pilot.press(*text, "enter")


def test_join_meld_live_updates_rejection_flashes_and_out(tmp_path, monkeypatch):
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(tmp_path / "state"))   # the seat book, not in $HOME
    deck = stacked_deck(["B6", "G6", "Y6", "R2", "R3", "R4"], ["D3", "B1", "P9"])

    async def scenario():
        with ServerThread(tmp_path / "data", deck) as srv:
            app = PlayApp(Launch(url=srv.url, name="ann"))
            async with app.run_test(size=(80, 24)) as pilot:
                # the lobby lists bob's table; Tab completes the command word
                await until(pilot, "the lobby list", lambda: app.query_one("#tables", DataTable).row_count == 1)
                await until(pilot, "the lobby row on screen", lambda: srv.table in screen_text(app))
                assert "waiting" in screen_text(app) and "1/2" in screen_text(app)
                await pilot.press("j", "o", "tab")
                assert app.query_one("#cmd").value == "join "
                await type_line(pilot, "1 0")
                await until(pilot, "the deal", lambda: "Your hand (3)" in text_of(app, "#board-bottom"))
                assert "B6 G6 Y6" in text_of(app, "#board-bottom")
                assert "type ready" in text_of(app, "#board-bottom")
                await type_line(pilot, "ready")
                assert (await srv.bob_does({"kind": "ready"})).__class__ is m.Accepted
                await until(pilot, "Go!", lambda: "Go! round 1 has started" in events_text(app))
                # bob acts: it shows up without a key press
                await srv.bob_does({"kind": "draw"})
                await until(pilot, "bob's draw", lambda: "bob drew a card" in events_text(app))
                assert "bob        hand  4" in text_of(app, "#board-top")
                # a refusal is shown with its reason next to the command
                await type_line(pilot, "take B1 from m99")
                await until(pilot, "the refusal", lambda: "no_such_meld" in text_of(app, "#result"))
                assert text_of(app, "#result") == ("refused: take B1 from m99 - no_such_meld: "
                                                   "There is no meld 99 on the table.")
                # bob's Draw-3 flashes and deals ann three more cards
                await srv.bob_does({"kind": "draw3", "card": 69})
                await until(pilot, "the Draw 3 flash", lambda: app.query_one("#flash").display)
                assert "Draw 3! (bob)" in text_of(app, "#flash")
                await until(pilot, "ann's 3 new cards", lambda: "Your hand (6)" in text_of(app, "#board-bottom"))
                # ann plays a meld: it appears on the table with its handle
                await type_line(pilot, "meld B6 G6 Y6")
                await until(pilot, "the meld", lambda: "m1" in text_of(app, "#melds"))
                assert text_of(app, "#result") == "ok: meld B6 G6 Y6"
                assert "set of 6s" in text_of(app, "#melds")
                screen = screen_text(app)
                for seen in ("Run Wild at " + srv.table, "> ann", "bob", "m1 set of 6s", "Your hand (3)",
                             "R2 R3 R4", "ok: meld B6 G6 Y6"):
                    assert seen in screen, (seen, screen)
                assert len(screen.splitlines()) == 24 and max(map(len, screen.splitlines())) <= 80
                # her last three cards: Out!, and (one round) the game is over
                await type_line(pilot, "meld R2 R3 R4")
                await until(pilot, "Out!", lambda: any(f.startswith("Out! (you)") for f in app.flashes))
                await until(pilot, "game over", lambda: "game over: ann wins" in text_of(app, "#result"))
                assert "game over" in text_of(app, "#board-top")
                assert app.flashes == ["Draw 3! (bob)", "Out! (you)", "Game over!"]
                await pilot.press("ctrl+q")
            assert app.return_code == 0

    asyncio.run(scenario())


def test_play_alone_in_process_server_bots_help_and_clean_quit():
    """`wildtable play --bots 3` without a URL: a private server and three bots in this
    process; the table shows at once, commands work, F1 helps, Ctrl+Q stops it all."""

    async def scenario():
        # bots at 2 s a move: at 0.5 s one went out before the typed draw in a run beside
        # two busy loops, and the draw was refused (the game was over)
        app = PlayApp(Launch(name="ann", bots=3, bot_delay=2.0, settings={"rounds": 1}))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, "the table", lambda: "Your hand (8)" in text_of(app, "#board-bottom"))
            top = text_of(app, "#board-top")
            assert all(f"bot{i}" in top for i in (1, 2, 3)) and "> ann" in top
            await type_line(pilot, "ready")
            await until(pilot, "Go!", lambda: app.core.mirror.view.get("phase") == "playing")
            await type_line(pilot, "draw")
            await until(pilot, "the draw", lambda: text_of(app, "#result") == "ok: draw")
            assert "you drew a card" in events_text(app)
            await pilot.press("f1")
            await pilot.pause()
            assert "take CARD from mN" in screen_text(app)
            await pilot.press("escape")
            port = int(app.core.url.rsplit(":", 1)[1])
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app._done.done()
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, "the private server still listens after quitting"

    asyncio.run(scenario())


def test_unreachable_server_ends_the_ui_with_a_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(tmp_path / "state"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def scenario():
        app = PlayApp(Launch(url=f"ws://127.0.0.1:{port}", name="ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, "the exit", lambda: app.return_code == 1, 10)
        assert app.fatal.startswith(f"wildtable play: cannot connect to ws://127.0.0.1:{port}: ")

    asyncio.run(scenario())
