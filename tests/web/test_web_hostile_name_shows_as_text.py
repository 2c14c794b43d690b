"""Names and every other text that came from a peer are shown as text, never as markup:
a player and a table named with HTML and script show those characters, and nothing runs."""

from __future__ import annotations

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

MINE = '<img src=x onerror="window.pwned=1">'
THEIRS = "<script>window.pwned=2</script>&amp;"
TABLE = '<b>bold</b><img src=x onerror="window.pwned=3">'


def test_hostile_names_show_as_text(players, web_server):
    p = players("hostile").open()
    p.enter(MINE)
    page = p.page
    # a table with a hostile name, made by another player with a hostile name, in the lobby
    async def make() -> str:
        async with connect(web_server.url, THEIRS) as conn:
            await conn.send(m.CreateTable("go-wild", 2, {}, TABLE))
            made = await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
            assert isinstance(made, m.TableCreated), made
            await conn.send(m.Join(made.table, 1))
            await conn.receive_until(lambda x: isinstance(x, m.Joined))
            return made.table
    table = web_server.run(make)
    page.wait_for_selector(f'tr[data-table="{table}"]', timeout=5_000)
    row = page.inner_text(f'tr[data-table="{table}"]')
    assert TABLE in row and THEIRS in row
    page.click(f'tr[data-table="{table}"] [data-action="join"]')
    page.wait_for_selector("#table")
    page.wait_for_function("() => window.wildtable.at.view.phase === 'playing'", timeout=10_000)
    names = page.locator(".pname").all_inner_texts()
    assert THEIRS in names, names
    assert MINE in page.inner_text("#status") and MINE in page.inner_text("#conn")
    assert page.evaluate("() => document.querySelectorAll('#app img, #app b, #app script, #top img').length") == 0
    assert page.evaluate("() => window.pwned") is None
