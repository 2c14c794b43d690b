"""Accessibility checked by axe-core (issue #26): no serious or critical violation on the
lobby, each game's table (a game under way against a bot, the hand drawn) and the replay
viewer. axe-core is the tests' own npm package (tests/web/axe, installed by .ci/run with
`npm ci`), never served to players: it is put into the page by the test, in a browser
context that bypasses the page's CSP (which allows no script but the page's own: that
stays so for players, test_web_page_is_served.py checks it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from serverkit import play_out_with_a_refusal
from webkit import DESKTOP, PHONE

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
BAD = ("serious", "critical")
GAMES = {"run-wild": {"rounds": 1}, "go-wild": {}, "wild-shots": {}, "go-fish-wildcard": {}}


def violations(page) -> list[str]:
    """axe-core's serious and critical violations of what the page shows now, one line each."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => {
        const r = await window.axe.run(document, {resultTypes: ["violations"]});
        return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + ": " + n.failureSummary.split("\\n").slice(0, 2).join(" "))}));
    }""")
    return [f"{v['impact']} {v['id']} ({v['help']}): {v['nodes']}" for v in found if v["impact"] in BAD]


@pytest.fixture(scope="module", autouse=True)
def axe_installed():
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/web/axe (.ci/run does)")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_lobby_and_each_game_table_have_no_serious_violation(players, web_server, viewport):
    p = players("axe", viewport=viewport, bypass_csp=True).open()
    page = p.page
    page.wait_for_selector("#name")
    problems = {"name screen": violations(page)}
    p.enter("ann")
    page.wait_for_selector("#tables-box")
    problems["lobby"] = violations(page)
    for game, settings in GAMES.items():
        table = p.create(game, 2, **settings)
        web_server.bots(table, 1, delay=0.3)
        page.wait_for_selector("#table .hand .card", timeout=10_000)
        problems[game] = violations(page)
        page.click("#leave")
        page.wait_for_selector("#create-btn")
    problems["lobby with tables"] = violations(page)
    problems = {k: v for k, v in problems.items() if v}
    assert not problems, "\n".join(f"{k}: {line}" for k, v in problems.items() for line in v)


def test_the_replay_viewer_has_no_serious_violation(players, web_server):
    table = web_server.run(play_out_with_a_refusal, web_server.url)
    p = players("axe", viewport=DESKTOP, bypass_csp=True).open()
    page = p.page
    p.enter("cat")
    page.click("#to-replays")
    page.wait_for_selector(f'[data-open="{table}"]')
    problems = {"replay list": violations(page)}
    page.click(f'[data-open="{table}"]')
    page.wait_for_selector(f'#replay[data-table="{table}"][data-step="0"]')
    page.click("#replay-next-rejected")
    page.wait_for_selector("#replay-refusal")
    problems["replay at a refusal"] = violations(page)
    page.keyboard.press("a")
    page.wait_for_selector('#replay[data-view="all"]')
    problems["replay, all-seeing"] = violations(page)
    problems = {k: v for k, v in problems.items() if v}
    assert not problems, "\n".join(f"{k}: {line}" for k, v in problems.items() for line in v)
