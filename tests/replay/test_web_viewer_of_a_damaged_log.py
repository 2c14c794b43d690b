"""`wildtable replay LOG --web` of a damaged log shows the records before the damage, as
the terminal viewer does, and its answer names the damage (issue #27); a server's finished
game must still read whole (a damaged one is refused, 422, as before)."""

from __future__ import annotations

import pytest

from wildtable.headless.timeline import ALL
from wildtable.protocol.logfmt import read_log
from wildtable.server.replay_fold import ReplayLog, ReplayRefused

from logs import selfplay_log

DATA = selfplay_log(seats=3, seed=7)


def test_the_players_own_damaged_log_is_shown_up_to_the_damage():
    offsets = read_log(DATA).offsets
    bad = bytearray(DATA)
    bad[offsets[60] + 9] ^= 0x10
    log = ReplayLog("t1", bytes(bad), finished_only=False)
    at = log.answer(10_000, ALL, False)
    assert at["steps"] == 61 and at["step"] == 60
    assert at["damage"]["offset"] == offsets[60] and at["damage"]["code"] == "bad_crc"
    assert f"byte offset {offsets[60]}" in at["damage"]["message"]
    assert ReplayLog("t1", DATA, finished_only=False).answer(0, ALL, False)["damage"] is None
    with pytest.raises(ReplayRefused) as e:
        ReplayLog("t1", bytes(bad), finished_only=True)
    assert e.value.status == 422
