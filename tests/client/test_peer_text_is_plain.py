"""Names and text that other people chose reach the screen as plain text: a player named
`[/]` and a table named like a link are shown literally in the full-screen client's
lobby and at the table (Textual reads a `str` cell as markup: `[/]` crashed every
client that opened the lobby, and `[link=...]` showed as a link), and in the line mode.

A real server on 127.0.0.1 runs in a Trio thread; the hostile players create and join
the table over real sockets; the client is the full-screen UI, headless (run_test)."""

from __future__ import annotations

import asyncio
import io

import attrs
import trio
from textual.widgets import DataTable

from wildtable.headless.net import connect
from wildtable.client.plain import run_plain
from wildtable.client.session import Launch
from wildtable.client.tui import PlayApp
from wildtable.protocol import messages as m

from uikit import screen_text, server_in_thread, text_of, until

PLAYER = "[/]"
TABLE_NAME = "[link=https://x.io]hi[/link]"
SHOUT = "[bold red]boo"          # a second player: markup that would style, not crash
# a table name from before the server refused unprintable ones (back from its log)
OLD_NAME = "old\x1b[2Jtable\nforged"
OLD_SHOWN = "old?[2Jtable?forged"


@attrs.frozen
class Tables:
    hostile: str        # TABLE_NAME: PLAYER and SHOUT hold seats 0 and 1 of 3
    old: str            # OLD_NAME, nobody at it


async def hostile_lobby(server, url) -> Tables:
    async with connect(url, PLAYER) as a, connect(url, SHOUT) as b:
        await a.send(m.CreateTable("run-wild", 3, {}, TABLE_NAME))
        made = await a.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
        assert isinstance(made, m.TableCreated), made
        for conn, seat in ((a, 0), (b, 1)):
            await conn.send(m.Join(made.table, seat))
            assert isinstance(await conn.receive_until(lambda x: isinstance(x, (m.Joined, m.Error))), m.Joined)
    # closed without leave: their seats stay held, under their names
    old = await server.create_table("run-wild", 2, {}, OLD_NAME)     # the server's own call, as a log would
    return Tables(made.table, old.id)


def test_hostile_names_show_literally_in_the_lobby_and_at_the_table(tmp_path, monkeypatch):
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(tmp_path / "state"))   # the seat book, not in $HOME

    async def scenario():
        with server_in_thread(tmp_path / "data", hostile_lobby) as (url, tables):
            app = PlayApp(Launch(url=url, name="ann"))
            async with app.run_test(size=(140, 24)) as pilot:
                await until(pilot, "the lobby list", lambda: app.query_one("#tables", DataTable).row_count == 2)
                await until(pilot, "the lobby rows on screen", lambda: tables.old in screen_text(app))
                screen = screen_text(app)
                for literal in (PLAYER, TABLE_NAME, SHOUT, OLD_SHOWN):
                    assert literal in screen, (literal, screen)
                # refusal reasons that quote what a peer typed are plain too
                await pilot.press(*f"spectate {PLAYER}", "enter")
                await until(pilot, "the refusal", lambda: "no_such_table" in text_of(app, "#result"))
                assert f"'{PLAYER}'" in text_of(app, "#result"), text_of(app, "#result")
                # at the table: the board, the events pane
                await pilot.press(*"join 1", "enter")
                await until(pilot, "the table", lambda: tables.hostile in text_of(app, "#top"))
                await until(pilot, "the names on the board", lambda: PLAYER in text_of(app, "#board-top"))
                assert SHOUT[:10] in text_of(app, "#board-top"), text_of(app, "#board-top")
                screen = screen_text(app)
                assert PLAYER in screen and SHOUT[:10] in screen, screen
                assert app.fatal is None
                await pilot.press("ctrl+q")
            assert app.return_code == 0

    asyncio.run(scenario())


def test_line_mode_lists_the_table_name_and_player_names_as_they_are(tmp_path, monkeypatch):
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(tmp_path / "state"))
    with server_in_thread(tmp_path / "data", hostile_lobby) as (url, tables):
        out = io.StringIO()
        code = trio.run(run_plain, Launch(url=url, name="ann"), io.StringIO("list\nquit\n"), out)
    assert code == 0, out.getvalue()
    rows = [line for line in out.getvalue().splitlines() if line.startswith("table ")]
    assert rows[:2] == [
        f"table 1 {tables.hostile} run-wild waiting seats 2/3 players {PLAYER}, {SHOUT}, - name {TABLE_NAME}",
        f"table 2 {tables.old} run-wild waiting seats 0/2 players -, - name {OLD_SHOWN}",
    ], out.getvalue()
