"""Helpers for the browser tests (tests/web/): a real server in a Trio thread of its own,
Debian's Chromium driven through Playwright's sync API, and a player at a page.

Playwright's sync API runs in the test's own thread; the server (serverkit.running_server)
and any bots run under trio.run in another thread, reached with trio.from_thread. Playwright
never downloads a browser here: it launches /usr/bin/chromium (Debian's package, which
.ci/run installs), with a fresh profile of its own (Playwright makes a temporary
user-data-dir for every launch and removes it at close).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import trio

import clusterkit
from clusterkit import both_live
from serverkit import running_server
from wildtable.headless.bots import Bot
from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server.config import ServerConfig

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}       # a phone-sized screen
DESKTOP = {"width": 1100, "height": 900}


# app/drag.js's SLOP: a press that moves less is a click
SLOP = 6
# Player.drag's reads of the page, each one call into it (a call is a round trip through
# Playwright's driver to the page: over half of a drag's time at load, seen at load 11-16,
# when a drag made a dozen of them): the box of an element is its place in the viewport,
# what Playwright's bounding_box gives for the page's own elements; an element is there
# when it is laid out (a box) and not hidden, what Playwright's wait_for calls visible.
BOX = """const box = (el) => { const r = el.getBoundingClientRect();
        return {x: r.left, y: r.top, width: r.width, height: r.height}; };
    const shown = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"
        && el.getBoundingClientRect().width > 0;"""
# the source and the target once both are there, scrolled as SCROLL_BETWEEN does (their
# middle at the viewport's); their boxes
PLACES = """([source, target]) => { """ + BOX + """
    const a = document.querySelector(source), b = document.querySelector(target);
    if (!shown(a) || !shown(b)) return false;
    const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
    const mid = (Math.min(ra.top, rb.top) + Math.max(ra.bottom, rb.bottom)) / 2;
    window.scrollBy(0, mid - innerHeight / 2);
    return [box(a), box(b)]; }"""
# whether the point (x, y) is on the source (the card to drag) now: null if so, else the
# source's box now (false if it is gone)
ON_SOURCE = """([x, y, source]) => { """ + BOX + """
    const el = document.querySelector(source), at = document.elementFromPoint(x, y);
    if (el && at && el.contains(at)) return null;
    return shown(el) ? box(el) : false; }"""
# once pressed and moved: whether the drag began (app/drag.js's ghost), and the target's box
# now (null if it is gone)
DRAGGING = """([target]) => { """ + BOX + """
    const b = document.querySelector(target);
    return {ghost: document.querySelector(".drag-ghost") !== null, target: shown(b) ? box(b) : null}; }"""

async def passive_player(url: str, table: str, seat: int) -> None:
    """A Run Wild opponent that only says ready, draws its pile and says stuck (our own
    client code): the round ends when the other player goes out or is stuck too, never by
    this one's doing, so a test's steps cannot lose a race with a bot that went out."""
    async with connect(url, "bob") as c:
        await c.send(m.Join(table, seat))
        joined = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
        assert isinstance(joined, m.Joined), joined
        view, iid = joined.view, 0
        while view.get("phase") != "over":
            me = view["players"][seat]
            action = None
            if view.get("phase") == "ready" and not me["ready"]:
                action = {"kind": "ready"}
            elif view.get("phase") == "playing" and me["in_round"]:
                action = {"kind": "draw"} if me["pile"] > 0 else None if me["stuck"] else {"kind": "stuck"}
            if action is not None:
                iid += 1
                await c.send(m.Intent(iid, action))
            view = (await c.receive_until(lambda x: isinstance(x, m.Update))).view


class ServerThread:
    """A wildtable server (serverkit.running_server) under trio.run in a thread, with a
    nursery for bots; ``url`` is its ws:// address and ``http`` the page's. ``config``: a
    ServerConfig or a data dir; ``runs_on``: what Server takes besides (chance, ...)."""

    def __init__(self, config, **runs_on):
        self.config, self.runs_on = config, runs_on
        self.data_dir = config.data_dir if isinstance(config, ServerConfig) else config
        self.errors: list[BaseException] = []
        self._ready = threading.Event()

    def __enter__(self) -> "ServerThread":
        self.thread = threading.Thread(target=self._run, name="wildtable-server", daemon=True)
        self.thread.start()
        if not self._ready.wait(30):
            raise RuntimeError(f"the server did not start: {self.errors!r}")
        if self.errors:
            raise self.errors[0]
        return self

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as e:           # noqa: BLE001 - handed to the test thread
            self.errors.append(e)
            self._ready.set()

    async def _main(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with self._serving():
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                self._ready.set()
                await self._stop.wait()
                nursery.cancel_scope.cancel()

    @asynccontextmanager
    async def _serving(self):
        async with running_server(self.config, **self.runs_on) as (server, url):
            self.server, self.url = server, url
            self.port = int(url.rsplit(":", 1)[1])
            self.http = f"http://127.0.0.1:{self.port}/"
            yield

    def __exit__(self, *exc) -> None:
        if self.thread.is_alive():
            trio.from_thread.run_sync(self._stop.set, trio_token=self.token)
            self.thread.join(20)
        assert not self.thread.is_alive(), "the server thread did not end"

    def run(self, afn, *args):
        """Run ``afn(*args)`` in the server's thread and wait for its result."""
        return trio.from_thread.run(afn, *args, trio_token=self.token)

    def passive(self, table: str, seat: int) -> None:
        """Seat ``passive_player`` at ``seat`` of the Run Wild ``table``, until game over."""
        async def start() -> None:
            self.nursery.start_soon(passive_player, self.url, table, seat)
        self.run(start)

    def bots(self, table: str, count: int, delay: float = 0.05) -> None:
        """Seat ``count`` bots at ``table`` (the first free seats), each playing until game over."""
        async def one(i: int) -> None:
            try:
                await Bot(self.url, table, f"bot{i}", delay=delay, verbose=False).run()
            except Exception as e:          # noqa: BLE001 - the test reports it
                self.errors.append(e)

        async def start() -> None:
            for i in range(count):
                self.nursery.start_soon(one, i)

        self.run(start)


class ClusterThread(ServerThread):
    """Nodes of a cluster instead: ``count`` `wildtable serve --store DSN` subprocesses
    (tests/clusterkit.py), each with a data dir under ``base``, ended at exit; ``nodes``
    (clusterkit.Node: ``url``, ``port``), ``http_of(node)`` the page a node serves."""

    def __init__(self, base, dsn: str, count: int = 2, lease: float | None = clusterkit.LEASE):
        super().__init__(base)
        self.dsn, self.count, self.lease = dsn, count, lease

    @asynccontextmanager
    async def _serving(self):
        async with clusterkit.cluster(self.data_dir, self.dsn, self.count, lease=self.lease) as nodes:
            self.nodes = nodes
            yield

    @staticmethod
    def http_of(node) -> str:
        return f"http://127.0.0.1:{node.port}/"

    def seated_across(self, ctx, name: str = "ann") -> tuple["Player", str]:
        """Once both nodes know each other: a page served by node A (nodes[0]) that joined
        a fresh table of node B (nodes[1]), redirected there; the page and the table."""
        a, b = self.nodes[:2]
        self.run(both_live, a.url, b.url)
        table = self.run(table_at, b.url)
        p = Player(ctx, self.http_of(a), name).open()
        p.enter(name)
        join = f'[data-key="join-{table}"]'
        p.page.wait_for_selector(join, timeout=10_000)      # the lobby lists B's table (from the store)
        p.page.click(join)
        p.page.wait_for_selector(f'#table[data-table="{table}"]', timeout=10_000)
        return p, table


async def table_at(url: str) -> str:
    """A two-seat go-wild table made at that node (``here``), nobody at it."""
    async with connect(url, "host") as c:
        await c.send(m.CreateTable("go-wild", 2, {"turn_timer": 0}, "", True))
        reply = await c.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error, m.Redirect)))
    assert isinstance(reply, m.TableCreated), reply
    return reply.table


# Run Wild's cards (docs/RULES.md "Run Wild"): numbers below FIRST_WILD, then wilds, then Draw-3s
FIRST_WILD, FIRST_DRAW3 = 60, 69


def fits(c: int, meld: dict) -> bool:
    """A number card that surely fits ``meld`` (wilds are left to melds)."""
    if c >= FIRST_WILD:
        return False
    num, col = c % 12 + 1, c // 12
    vals = meld["values"]
    if meld["kind"] == "set":
        return num == vals[0] and all(x >= FIRST_WILD or x // 12 != col for x in meld["cards"])
    colours = {x // 12 for x in meld["cards"] if x < FIRST_WILD}
    return colours == {col} and num in (min(vals) - 1, max(vals) + 1)


def swaps_for(c: int, meld: dict) -> int | None:
    """The wild of ``meld`` that number card ``c`` can replace, if any."""
    if c >= FIRST_WILD:
        return None
    num, col = c % 12 + 1, c // 12
    colours = {x // 12 for x in meld["cards"] if x < FIRST_WILD}
    for x, v in zip(meld["cards"], meld["values"]):
        if FIRST_WILD <= x < FIRST_DRAW3 and v == num:
            if (meld["kind"] == "set" and col not in colours) or (meld["kind"] == "run" and colours == {col}):
                return x
    return None


SCROLL_BETWEEN = """([a, b]) => {
    const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
    const mid = (Math.min(ra.top, rb.top) + Math.max(ra.bottom, rb.bottom)) / 2;
    window.scrollBy(0, mid - innerHeight / 2); }"""


class Player:
    """One browser page at the server's web client; every browser console error and page
    error is kept (``problems``), and the tests fail on any."""

    def __init__(self, context, http: str, label: str = "page"):
        self.context, self.http, self.label = context, http, label
        self.problems: list[str] = []
        self.page = context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))

    def _console(self, msg) -> None:
        if msg.type == "error":
            self.problems.append(f"console error: {msg.text}")

    def open(self) -> "Player":
        self.page.goto(self.http)
        return self

    def enter(self, name: str) -> "Player":
        self.page.fill("#name", name)
        self.page.click("#enter")
        self.page.wait_for_selector("#create-btn")
        self.page.wait_for_function("() => window.wildtable.conn && window.wildtable.conn.ready")
        return self

    def create(self, game: str, seats: int, **settings) -> str:
        """Create a table through the lobby's form (and so take its first free seat); its id."""
        page = self.page
        page.select_option("#game", game)
        page.fill("#seats", str(seats))
        if settings:
            page.click("#create summary")
        for k, v in settings.items():
            field = page.locator(f'[data-setting="{k}"]')
            if isinstance(v, bool):
                field.set_checked(v)
            else:
                field.fill(str(v))
        page.click("#create-btn")
        page.wait_for_selector("#table")
        return self.table_id()

    def table_id(self) -> str:
        return self.page.get_attribute("#table", "data-table")

    def state(self) -> dict:
        """What the page holds of its table (read only: the tests act by clicking)."""
        return self.page.evaluate("""() => {
            const at = window.wildtable.at;
            return at ? {table: at.id, seat: at.seat, seq: at.seq, view: at.view, players: at.players,
                         over: at.over, refusal: at.refusal} : null; }""")

    def click_and_wait(self, selector: str, timeout: float = 10_000) -> None:
        """Click, then wait until the server answered every intent the page sent."""
        self.page.click(selector)
        self.page.wait_for_function("() => window.wildtable.intents.size === 0", timeout=timeout)

    def try_click(self, selector: str, then_wait: bool = False) -> bool:
        """Click if the element is there and enabled within a moment (in Run Wild the table
        may change under the pointer: a round ends, a card is taken); False if not."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try:
            self.page.click(selector, timeout=1_000)
        except PlaywrightTimeout:
            return False
        if then_wait:
            self.page.wait_for_function("() => window.wildtable.intents.size === 0", timeout=10_000)
        return True

    def drag(self, source: str, target: str, wait: bool = True, timeout: float = 1_000) -> bool:
        """Drag the element ``source`` onto ``target`` (CSS selectors: the first element of
        each) with the mouse (press, moves in steps, release: the page's pointer events,
        app/drag.js), then, with ``wait``, until the server answered every intent the page
        sent. False if either is not there and visible within ``timeout`` ms (the table may
        change under the pointer)."""
        from playwright.sync_api import Error as PlaywrightError
        page = self.page
        try:
            # both in the viewport, their middle at its middle
            a, b = page.wait_for_function(PLACES, arg=[source, target], timeout=timeout).json_value()
        except PlaywrightError:          # not there in time, or gone meanwhile
            return False
        # The table can move under the pointer between a measure and the press (a trick
        # cleared, a line added): a press beside the card selects text instead of dragging
        # it (seen at load 13). So the press is made only where the card is now, and the
        # drag is checked to have begun (app/drag.js's ghost) before it goes on; else the
        # button is let go where it is and the card measured again.
        # Measured again, the card may be gone (a Run Wild bot took it, a round ended):
        # False, as above, not a timeout (seen at load 7 with two busy loops)
        down = False
        try:
            for _ in range(5):
                x, y = a["x"] + a["width"] / 2, a["y"] + a["height"] / 2
                page.mouse.move(x, y)
                moved = page.evaluate(ON_SOURCE, [x, y, source])
                if moved is False:
                    return False
                if moved is not None:        # not under the pointer: measured again
                    a = moved
                    continue
                page.mouse.down()
                down = True
                page.mouse.move(x, y - 2 * SLOP, steps=2)
                now = page.evaluate(DRAGGING, [target])
                if now["ghost"]:
                    b = now["target"] or b          # where the target is now
                    break
                page.mouse.up()
                down = False
                a = page.evaluate(ON_SOURCE, [-1, -1, source])
                if not a:
                    return False
            else:
                return False
        except PlaywrightError:
            if down:
                page.mouse.up()
            return False
        page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=5)
        page.mouse.up()
        if wait:
            page.wait_for_function("() => window.wildtable.intents.size === 0", timeout=10_000)
        return True

    def screenshot(self, path: Path) -> None:
        self.page.screenshot(path=str(path), full_page=True)


def screenshot_dir() -> Path:
    path = Path(os.environ.get("WILDTABLE_SCREENSHOTS") or tempfile.gettempdir()) / "wildtable-web-failures"
    path.mkdir(parents=True, exist_ok=True)
    return path


def wait_until(predicate, timeout: float, what: str, step: float = 0.05):
    """Poll ``predicate`` (in the test's thread) until it is truthy; its value."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(step)


def doc_shot(player: Player, name: str) -> None:
    """With WILDTABLE_DOC_SHOTS=DIR, save what the page shows now as DIR/name: the
    replay viewer's screenshot in docs/PLAYING.md is taken this way, by the suite (each
    game's: test_web_screenshots_of_each_game.py; docs/PLAYING.md says how to refresh them)."""
    where = os.environ.get("WILDTABLE_DOC_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        player.page.screenshot(path=str(Path(where) / name))


def open_a_finished_game(players, web_server, name: str = "viewer", viewport=DESKTOP) -> tuple["Player", str]:
    """A game played out on ``web_server`` (with a refused intent: serverkit's
    play_out_with_a_refusal), and a browser player ``name`` who opened its replay from the
    lobby's list of finished games, at step 0: the player and the table."""
    from serverkit import play_out_with_a_refusal
    table = web_server.run(play_out_with_a_refusal, web_server.url)
    p = players(name, viewport=viewport).open()
    p.enter("cat")
    p.page.click("#to-replays")
    p.page.click(f'[data-open="{table}"]')
    p.page.wait_for_selector(f'#replay[data-table="{table}"][data-step="0"]')
    return p, table
