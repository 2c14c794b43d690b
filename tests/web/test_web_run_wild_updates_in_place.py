"""A Run Wild table is redrawn in place: when another player melds, draws or takes a card
from a meld, the page shows exactly the new view (every meld's cards, the hand, the
players' counts, what happened), and what did not change stays as it was: the card the
player selected stays selected and focused, the meld taken from is the same element with
one card fewer, and its "add" button acts on the current selection."""

from __future__ import annotations

from wildtable.headless.games.run_wild import find_melds
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from webkit import DESKTOP

# Every part of the table the page drew, against the view it holds: a list of differences.
DRAWN_AS_VIEW = """() => {
  const at = window.wildtable.at, v = at.view, bad = [];
  const same = (what, a, b) => { if (JSON.stringify(a) !== JSON.stringify(b)) bad.push(`${what}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`); };
  const all = (sel) => [...document.querySelectorAll(sel)];
  same("seq", Number(document.querySelector("#table").dataset.seq), at.seq);
  const melds = v.melds || [];
  same("melds", all(".board [data-meld]").map((li) => Number(li.dataset.meld)), melds.map((x) => x.id));
  for (const x of melds) {
    const li = document.querySelector(`.board [data-meld="${x.id}"]`);
    if (!li) continue;
    same(`m${x.id} name`, li.querySelector(".meld-name").textContent, `m${x.id} ${x.kind}`);
    const cards = [...li.querySelectorAll("[data-card]")];
    same(`m${x.id} cards`, cards.map((b) => Number(b.dataset.card)), x.cards);
    cards.forEach((b, i) => {
      // a wild's face (faces.js) and its name show its value
      if (x.cards[i] >= 60 && x.cards[i] < 69) same(`m${x.id} wild ${x.cards[i]}`, [b.querySelector("svg.face").textContent.includes(`W=${x.values[i]}`),
        b.getAttribute("aria-label").startsWith(`wild as ${x.values[i]}, W=${x.values[i]} `)], [true, true]);
    });
  }
  same("hand", all(".hand [data-card]").map((b) => Number(b.dataset.card)).sort((a, b) => a - b), [...(v.hand || [])].sort((a, b) => a - b));
  same("selected", all(".hand .selected").map((b) => Number(b.dataset.card)).sort((a, b) => a - b), [...at.ui.selected].sort((a, b) => a - b));
  same("pressed", all('.hand [aria-pressed="true"]').length, at.ui.selected.size);
  for (const p of v.players || []) {
    const li = document.querySelector(`.players [data-seat="${p.seat}"]`);
    same(`seat ${p.seat}`, li !== null && li.textContent.includes(` hand ${p.hand}, pile ${p.pile},`), true);
  }
  same("events", all("#events li").map((li) => li.textContent), at.events.slice(-12).reverse());
  same("draw button", document.querySelector('[data-action="draw"]').textContent, `Draw (${v.pile ?? 0} left)`);
  return bad;
}"""


class Bob:
    """The other player: a client of the test's own at seat 1. Each step connects, takes
    the seat back with its token, sends one action and waits for the answer and the
    update it makes."""

    def __init__(self, server, table: str):
        self.server, self.table = server, table
        self.token = ""
        self.view: dict = {}

    def join(self) -> None:
        async def go() -> None:
            async with connect(self.server.url, "bob") as c:
                await c.send(m.Join(self.table, 1))
                joined = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                assert isinstance(joined, m.Joined), joined
                self.token, self.view = joined.token, joined.view
        self.server.run(go)

    def act(self, action: dict) -> tuple[str | None, int]:
        """(None, the seq it made) if accepted, else (the code, 0)."""
        async def go():
            async with connect(self.server.url, "bob") as c:
                await c.send(m.Rejoin(self.table, 1, self.token))
                joined = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                assert isinstance(joined, m.Joined), joined
                await c.send(m.Intent(1, action))
                seen: list = []
                answer = await c.receive_until(lambda x: isinstance(x, (m.Accepted, m.Rejected)), keep=seen)
                if isinstance(answer, m.Rejected):
                    return answer.code, 0
                update = next((x for x in seen if isinstance(x, m.Update) and x.seq >= answer.seq), None)
                if update is None:
                    update = await c.receive_until(lambda x: isinstance(x, m.Update) and x.seq >= answer.seq)
                self.view = update.view
                return None, answer.seq
        return self.server.run(go)


def drawn_as_view(page) -> None:
    bad = page.evaluate(DRAWN_AS_VIEW)
    assert bad == [], bad


def test_another_players_moves_redraw_only_what_they_changed(players, web_server):
    p = players("ann", viewport=DESKTOP).open()
    p.enter("ann")
    table = p.create("run-wild", 2, rounds=1, hand_size=18, idle_timeout=120)
    page = p.page
    bob = Bob(web_server, table)
    bob.join()
    page.wait_for_selector('[data-action="ready"]', timeout=10_000)
    page.click('[data-action="ready"]')
    assert bob.act({"kind": "ready"})[0] is None
    page.wait_for_function("() => window.wildtable.at.view.phase === 'playing'", timeout=10_000)

    # bob draws until he holds a meld of four cards or more, and plays it
    for _ in range(40):
        melds = [(cs, vs) for cs, vs in find_melds(bob.view["hand"], bob.view["settings"]) if len(cs) >= 4]
        if melds:
            break
        code, seq = bob.act({"kind": "draw"})
        assert code is None, code
        page.wait_for_function("s => window.wildtable.at.seq >= s", arg=seq)
        drawn_as_view(page)
    else:
        raise AssertionError(f"bob found no meld of four in {bob.view['hand']}")
    cards, values = melds[0]
    code, seq = bob.act({"kind": "meld", "cards": cards, "values": values})
    assert code is None, code
    mid = max(x["id"] for x in bob.view["melds"])
    page.wait_for_function("s => window.wildtable.at.seq >= s", arg=seq)
    drawn_as_view(page)

    # ann selects a card of her hand (the click focuses it); the page's elements are marked
    first = page.locator(".hand [data-card]").first
    mine = first.get_attribute("data-card")
    first.click()
    page.wait_for_selector(f'.hand [data-card="{mine}"][aria-pressed="true"]')
    page.evaluate("""mid => { window.before = {
        card: document.activeElement, meld: document.querySelector(`[data-meld="${mid}"]`),
        cards: [...document.querySelectorAll(`[data-meld="${mid}"] [data-card]`)],
        add: document.querySelector(`[data-add="${mid}"]`), hand: [...document.querySelectorAll(".hand [data-card]")] }; }""", mid)
    assert page.evaluate("() => window.before.card.dataset.card") == mine

    # bob takes an end card of his meld back (what stays is still a meld)
    for taken in (cards[-1], cards[0]):
        code, seq = bob.act({"kind": "take", "meld": mid, "card": taken})
        if code is None:
            break
    assert code is None, code
    page.wait_for_function("s => window.wildtable.at.seq >= s", arg=seq)
    drawn_as_view(page)
    kept = page.evaluate("""([mid, taken]) => {
        const b = window.before, now = document.querySelector(`[data-meld="${mid}"]`);
        return {
          meld: now === b.meld,
          cards: b.cards.filter((x) => Number(x.dataset.card) !== taken).every((x) => x.isConnected && now.contains(x)),
          taken: b.cards.filter((x) => Number(x.dataset.card) === taken).every((x) => !x.isConnected),
          add: document.querySelector(`[data-add="${mid}"]`) === b.add,
          hand: b.hand.every((x) => x.isConnected),
          focus: document.activeElement === b.card,
          pressed: b.card.getAttribute("aria-pressed"),
        }; }""", [mid, taken])
    assert kept == {"meld": True, "cards": True, "taken": True, "add": True, "hand": True, "focus": True, "pressed": "true"}, kept

    # another update (bob draws): still the same, still selected
    code, seq = bob.act({"kind": "draw"})
    assert code is None, code
    page.wait_for_function("s => window.wildtable.at.seq >= s", arg=seq)
    drawn_as_view(page)
    assert page.evaluate("() => document.activeElement === window.before.card && window.before.card.isConnected")
    assert page.locator(".hand .selected").count() == 1

    # the kept "add" button adds the card selected now: the server answers it (accepted, or
    # refused with its reason beside what was tried), it is not refused as "nothing selected"
    sent = page.evaluate("() => window.wildtable.nextIntent")
    page.click(f'[data-add="{mid}"]')
    assert page.evaluate("() => window.wildtable.nextIntent") == sent + 1, "the add button sent no intent"
    page.wait_for_function("() => window.wildtable.intents.size === 0", timeout=10_000)
    refusal = p.state()["refusal"]
    assert refusal is None or (refusal["code"] and refusal["what"].endswith(f" to m{mid}")), refusal
    drawn_as_view(page)
