"""The line mode's `info bye` is its last line (client/plain.py): its tasks are cancelled
after it, but one already woken with a message (a bot leaving once the game is over) ran
on to its next checkpoint and printed after it, so a script that read to `info bye` missed
a line and one that checked its last line saw `info rob1 left` (a CI run of
test_client_plain.py's whole game, 2026-12-07)."""

from __future__ import annotations

import io

from wildtable.client.plain import PlainOutput
from wildtable.headless import notices


def test_nothing_is_printed_after_bye():
    out = io.StringIO()
    plain = PlainOutput(lambda: None, out)
    plain(notices.PlayerLeft("rob1"))
    plain.bye()
    plain(notices.PlayerLeft("rob2"))        # woken before the cancel, it runs after the bye
    plain.line("info", "anything")
    assert out.getvalue().splitlines() == ["info rob1 left", "info bye"]
