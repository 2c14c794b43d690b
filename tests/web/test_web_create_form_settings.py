"""The lobby's "New table" form offers every setting of the game's own schema (/games.json,
made from the engines), map-valued ones too (Wild Shots' symbols, card -> symbol, and
snake_oil, symbol -> count): each entry is a field of its type, the strings of the default
offered as choices; a value the engine refuses is said with the engine's reason."""

from __future__ import annotations

import json
import urllib.request

from wildtable.protocol.games import wild_shots
from webkit import DESKTOP


def test_the_create_form_offers_every_setting_maps_too(players, web_server):
    with urllib.request.urlopen(web_server.http + "games.json", timeout=10) as r:
        schema = {g["name"]: g for g in json.load(r)["games"]}["wild-shots"]
    p = players("ann", viewport=DESKTOP).open()
    page = p.page
    p.enter("ann")
    page.select_option("#game", "wild-shots")
    page.click("#create summary")
    for s in schema["settings"]:
        assert page.locator(f'[data-setting="{s["name"]}"]').count() == 1, s["name"]
    symbols = page.locator('[data-map="symbols"]')
    assert symbols.count() == 40
    assert page.eval_on_selector_all("#choices-symbols option", "os => os.map(o => o.value)") == \
        sorted(set(wild_shots.default_settings()["symbols"].values()))
    assert page.get_attribute('[data-map="snake_oil"][data-entry="hat"]', "type") == "number"

    # counts that do not add up: the engine's reason, and no table
    page.click('[data-setting="snake_oil"] summary')
    page.fill('[data-map="snake_oil"][data-entry="revolver"]', "9")
    page.fill("#seats", "2")
    page.click("#create-btn")
    page.wait_for_selector("#lobby-note")
    assert "must add up to 14" in page.inner_text("#lobby-note"), page.inner_text("#lobby-note")
    assert page.locator("#table").count() == 0

    # a symbol changed, and a split that adds up: the table has them
    page.click('[data-setting="symbols"] summary')
    page.fill('[data-map="symbols"][data-entry="red 3"]', "hat")
    page.fill('[data-map="snake_oil"][data-entry="revolver"]', "3")
    page.fill('[data-map="snake_oil"][data-entry="hat"]', "5")
    page.click("#create-btn")
    page.wait_for_selector("#table")
    view = p.state()["view"]
    assert view["symbols"][wild_shots.LABELS.index("red 3")] == "hat"
    assert view["symbols"][wild_shots.LABELS.index("red 4")] == wild_shots.default_settings()["symbols"]["red 4"]
    assert view["snake_oil"] == {"revolver": 3, "hat": 5, "star": 3, "poster": 3}
