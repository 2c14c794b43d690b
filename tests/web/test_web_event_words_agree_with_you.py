"""The browser's "What happened" lines speak to the player (issue #26, words a player
uses): an event of the player's own seat reads "you deal round 1", "you are ready",
never "you deals" or "you ready". Every kind of event the four engines emit in whole
games is put through each game's own describe() of the page (web/app/games/*.js, run
by Node: no browser needed), once as the seat's own player and once as another seat's."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from wildtable.protocol.codec import to_data
from wildtable.protocol.games import REGISTRY
from wildtable.selfplay import play

WEB = Path(__file__).resolve().parents[2] / "web" / "app" / "games"
FILES = {"run-wild": "run_wild", "go-wild": "go_wild", "wild-shots": "wild_shots",
         "go-fish-wildcard": "go_fish_wildcard"}
# "you" then a verb of the third person (is, has, or a word ending in a single s), or no
# verb at all ("you ready")
WRONG = re.compile(r"(^|[,;:] )you (is|has|was|\w*[^s\W]s|ready|stuck|out|no longer)\b")
DESCRIBE = """
const [file, events] = [process.argv[1], JSON.parse(require("fs").readFileSync(0, "utf8"))];
import(file).then((m) => {
  const ctx = { seat: 0, players: [0, 1, 2, 3].map((s) => ({ seat: s, name: s ? `p${s}` : "ann" })) };
  const out = events.map((ev) => [ev.event, m.default.describe(ev, ctx)]);
  process.stdout.write(JSON.stringify(out));
});
"""


def _kinds(name: str) -> list[dict]:
    """One event of each kind for each seat that did it, from a few whole games."""
    seen: dict = {}
    for seed in range(4):
        for ev in play(REGISTRY[name], 3, seed=seed).events:
            d = to_data(ev)
            seen.setdefault((d.get("event"), d.get("seat")), d)
    return list(seen.values())


@pytest.mark.parametrize("game", sorted(FILES))
def test_the_player_is_spoken_to(game):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: .ci/run installs npm (and node with it)")
    events = _kinds(game)
    assert any(e.get("seat") == 0 for e in events) and any(e.get("seat") == 1 for e in events)
    out = subprocess.run([node, "-e", DESCRIBE, str(WEB / f"{FILES[game]}.js")], input=json.dumps(events),
                         capture_output=True, text=True, timeout=60, check=True).stdout
    lines = [(kind, text) for kind, text in json.loads(out) if text]
    assert len(lines) >= 5, lines
    wrong = [(kind, text) for kind, text in lines if WRONG.search(text)]
    assert not wrong, wrong
