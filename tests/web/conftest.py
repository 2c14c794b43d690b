"""Fixtures of the browser tests: Debian's Chromium through Playwright (one browser for
each run of browser tests on a worker, a fresh context per test), a real server in a thread
of its own, and pages that fail their test on any browser console error and leave a
screenshot when it fails."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from webkit import CHROMIUM, CHROMIUM_ARGS, PHONE, Player, ServerThread, screenshot_dir
from serverkit import server_config

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


class _Chromium:
    """One Chromium for a run of browser tests one after another on a worker (a launch is
    a second or more: once per module before, and more often when pytest-xdist gave a
    module's tests to several workers); each test still gets a browser context of its own
    (``players``: its own storage, cookies and cache), so no test sees another's.
    Playwright is stopped before a test that does not use the browser: its sync API leaves
    its asyncio loop set as the thread's running loop, and asyncio.run (the Textual
    client's tests) then refuses to run (seen: 25 client tests failed after a web test on
    their worker)."""

    pw = None
    browser = None

    @classmethod
    def get(cls):
        if cls.browser is not None and not cls.browser.is_connected():
            cls.stop()          # crashed by a test before: one crash fails one test, not all after it
        if cls.pw is None:
            if not Path(CHROMIUM).exists():
                pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
            from playwright.sync_api import sync_playwright
            cls.pw = sync_playwright().start()
        if cls.browser is None:
            cls.browser = cls.pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        return cls.browser

    @classmethod
    def stop(cls) -> None:
        browser, pw, cls.browser, cls.pw = cls.browser, cls.pw, None, None
        try:
            if browser is not None:
                try:
                    browser.close()
                except Exception:       # noqa: BLE001 - gone already: only the driver is let go
                    pass
        finally:
            if pw is not None:
                pw.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        if nextitem is None or "browser" not in nextitem.fixturenames:
            _Chromium.stop()


@pytest.fixture
def browser():
    """The worker's Chromium (``_Chromium``), launched for the first of a run of browser
    tests; a browser context a test made and left open is closed after it."""
    b = _Chromium.get()
    yield b
    if b.is_connected():
        for ctx in b.contexts:
            ctx.close()


@pytest.fixture
def web_server(tmp_path):
    with ServerThread(server_config(tmp_path / "data", durability="off")) as s:
        yield s
        assert not s.errors, s.errors


@pytest.fixture
def players(request, browser, web_server):
    """``players(label, viewport=PHONE, beside=None, **options)``: a new browser context (its own storage) and page
    at the server's web client. At the end of the test every page is checked for console
    errors; if the test failed, each page's screenshot is saved and its path printed."""
    made: list[Player] = []
    contexts = []

    def make(label: str = "page", viewport: dict = PHONE, beside: Player | None = None, **options) -> Player:
        """``beside``: another window of that player's browser context (same storage);
        ``options``: more of the new context's (Playwright's new_context: has_touch, or
        bypass_csp for a script a test injects, as the accessibility check does)."""
        if beside is None:
            ctx = browser.new_context(viewport=viewport, **options)
            contexts.append(ctx)
        else:
            ctx = beside.context
        p = Player(ctx, web_server.http, label)
        made.append(p)
        return p

    yield make
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    problems = [f"{p.label}: {x}" for p in made for x in p.problems]
    if failed or problems:
        where = screenshot_dir()
        for p in made:
            path = where / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', request.node.name)}-{p.label}.png"
            try:
                p.screenshot(path)
                print(f"screenshot of {p.label}: {path}")
            except Exception as e:       # noqa: BLE001 - the page may be gone
                print(f"no screenshot of {p.label}: {e}")
    for ctx in contexts:
        ctx.close()
    if problems:
        pytest.fail("the browser reported errors:\n" + "\n".join(problems))
