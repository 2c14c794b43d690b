"""The web replay viewer's search and filter answers (docs/PROTOCOL.md, "Replays over
HTTP"): find forward and back, found or not; only=refused/seat:N/kind:K with the steps
before and after; a filter that is none of these is a 400 that says what it wants."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest

from wildtable.headless.timeline import ALL
from wildtable.protocol.logfmt import IntentRejected
from wildtable.server import replay_find
from wildtable.server.replay_fold import ReplayLog, ReplayRefused

from logs import selfplay_log

LOG = ReplayLog("t1", selfplay_log(seats=3, seed=7, refused=3), finished_only=False)
REFUSED = [i for i, s in enumerate(LOG.timeline.steps) if type(s.record) is IntentRejected]


def _ask(step: int, query: str) -> dict:
    return replay_find.answer(LOG, step, ALL, False, parse_qs(query))


def test_find_forward_back_and_not_found():
    a = _ask(0, "find=DISCARD")
    assert a["found"] and a["step"] == REFUSED[0]
    a = _ask(REFUSED[2], "find=discard&back=1")
    assert a["found"] and a["step"] == REFUSED[1]
    a = _ask(5, "find=no+such+words")
    assert a["found"] is False and a["step"] == 5


def test_only_keeps_what_passes_with_its_neighbours():
    a = _ask(REFUSED[1], "only=refused")
    assert a["only"] == {"filter": "refused only", "count": 3, "prev": REFUSED[0], "next": REFUSED[2]}
    assert [x["step"] for x in a["around"]] == REFUSED
    seat = LOG.timeline.steps[REFUSED[0]].record.seat
    a = _ask(0, f"only=seat:{seat}")
    assert all(getattr(LOG.timeline.steps[x["step"]].record, "seat", None) == seat for x in a["around"])
    a = _ask(0, "only=kind:chance")
    assert a["only"]["count"] == 2 and a["only"]["next"] is not None


@pytest.mark.parametrize("bad", ["everything", "seat:7", "seat:x", "kind:"])
def test_a_filter_that_is_none_is_400(bad):
    with pytest.raises(ReplayRefused) as e:
        _ask(0, f"only={bad}")
    assert e.value.status == 400 and "only wants refused, seat:N (0..2) or kind:KIND" in e.value.message
