"""Card faces drawn for each game's deck (issue #26; web/app/faces.js): every card on the
table and in the hand is an SVG the page makes itself (nothing fetched, the CSP as it is:
the page fails its test on any console error, a CSP refusal included), hidden from the
accessibility tree, inside the card's element, whose accessible name holds every text the
face shows, in order; and over each whole deck colour is never the only cue: two cards that differ
only by colour differ in what a face draws besides its colour (shape, letter), and a wild
and a Draw-3 are faces of their own."""

from __future__ import annotations

import pytest

from webkit import DESKTOP

# For every card of the page: its face (one svg.face, aria-hidden), the words it shows
# (its texts) and whether the accessible name holds them in order, as axe-core's
# label-content-name-mismatch reads them: the card's own aria-label, or that of the
# role="img" group it lies in (a trick, a set).
FACES_ON_PAGE = """() => {
  const words = (s) => (s || "").toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  const within = (hay, needle) => hay.some((_, i) => needle.every((w, j) => hay[i + j] === w));
  return [...document.querySelectorAll("#table [data-card]")].map((el) => {
    const faces = el.querySelectorAll(":scope > svg.face");
    const svg = faces[0];
    const shows = svg ? words(svg.textContent) : [];
    const named = el.getAttribute("aria-label") !== null ? el : el.closest("[role=img]");
    const name = named ? (named.getAttribute("aria-label") || "") : "";
    return { card: el.dataset.card, faces: faces.length, hidden: svg ? svg.getAttribute("aria-hidden") : null,
      ownText: [...el.childNodes].filter((n) => n.nodeType === 3 && n.data.trim()).length,
      drawn: svg ? [...svg.querySelectorAll("text")].map((t) => t.textContent).join(" ") : "",
      shows, name, holds: within(words(name), shows) };
  });
}"""

# Every card id of each deck drawn by faces.js, as markup: a face's colour is its element's
# (the class the game gives it), so two faces that differ only by colour are the same markup.
DECKS = """async () => {
  const f = await import("/app/faces.js");
  const ids = (n) => Array.from({ length: n }, (_, i) => i);
  const html = (svg) => svg.outerHTML;
  return {
    "run-wild": ids(72).map((c) => html(f.runWildFace(c))),
    "go-wild": ids(108).map((c) => html(f.goWildFace(c))),
    "wild-shots": ids(40).map((c) => html(f.wildShotsFace(c, null))),
    "go-fish-wildcard": ids(52).map((c) => html(f.goFishFace(c))),
    sameTwice: f.runWildFace(5) !== f.runWildFace(5) && f.runWildFace(5).isEqualNode(f.runWildFace(5)),
  };
}"""


def colour_and_value(game: str, c: int) -> tuple:
    """(colour, the rest) of a card, by each deck's ids (protocol/games/*.py)."""
    if game == "run-wild":
        return (c // 12, c % 12) if c < 60 else (None, "wild" if c < 69 else "draw3")
    if game == "go-wild":
        return (min(c // 18, 5), None)
    if game == "wild-shots":
        return (c // 10, c % 10)
    return ((c % 4) in (1, 2), (c // 4, c % 4))        # Go Fish: red or black, then rank and suit


def test_over_each_deck_colour_is_never_the_only_cue(players):
    p = players("decks", viewport=DESKTOP).open()
    decks = p.page.evaluate(DECKS)
    assert decks.pop("sameTwice"), "a face is a fresh clone of its card's template each time"
    for game, faces in decks.items():
        for a in range(len(faces)):
            for b in range(a + 1, len(faces)):
                ca, ra = colour_and_value(game, a)
                cb, rb = colour_and_value(game, b)
                if ca != cb or ra != rb:
                    # different cards (not two copies of one Go Wild! colour) look different
                    # even to someone who sees no colour
                    assert faces[a] != faces[b], (game, a, b, faces[a])
    rw = decks["run-wild"]
    assert len({rw[60], rw[69], rw[0]}) == 3, "a wild, a Draw-3 and a number card are each a face of their own"


@pytest.mark.parametrize("game, settings", [
    ("run-wild", {"rounds": 1}), ("go-wild", {"turn_timer": 0}), ("wild-shots", {"turn_timer": 0}),
    ("go-fish-wildcard", {"turn_timer": 0}),
])
def test_each_card_on_the_table_is_an_svg_face_its_name_reads(players, web_server, game, settings):
    p = players(game, viewport=DESKTOP).open()
    fetched = []
    p.page.on("request", lambda r: fetched.append(r.url) if r.resource_type == "image" else None)
    p.enter("ann")
    table = p.create(game, 2, **settings)
    # a slow bot: a card we lead stays alone in the trick while the bot thinks (2 s)
    web_server.bots(table, 1, delay=2.0 if game in ("go-wild", "wild-shots") else 0.05)
    page = p.page
    page.wait_for_selector("#table .hand [data-card]", timeout=10_000)
    if game in ("go-wild", "wild-shots"):       # a card in the trick too, the bot's or ours
        page.wait_for_function("() => window.wildtable.at.view.turn === window.wildtable.at.seat"
                               " && window.wildtable.intents.size === 0", timeout=15_000)
        if page.locator("#table .trick [data-card]").count() == 0:
            p.click_and_wait(".hand .card" if game == "go-wild" else '.hand [data-playable="true"]')
            if game == "go-wild":
                p.click_and_wait('[data-action="play"]')
            page.wait_for_selector("#table .trick [data-card]", timeout=10_000)
    cards = page.evaluate(FACES_ON_PAGE)
    assert len(cards) >= 3, cards
    for c in cards:
        assert c["faces"] == 1 and c["hidden"] == "true", c
        assert c["ownText"] == 0, c                  # no text beside the face's
        assert c["shows"] and c["holds"], c          # the name reads what the face shows
    # nothing fetched for the faces (the favicon is the page's only image)
    assert all(u.endswith("/favicon.svg") for u in fetched), fetched
