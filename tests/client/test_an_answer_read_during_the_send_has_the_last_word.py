"""The server may answer an intent before the client's own task is back from writing it:
the reader reads the accepted/rejected while the write returns (the full-screen UI's
result line then stayed on "... take B1 from m99 (sent)" after the refusal, about one
run in six). The answer must be the last word on that intent: no "sent" after it.

The client talks to a real server over a real socket; its connection only returns from
writing once the reader has shown the answer, which makes that order every time."""

from __future__ import annotations

import trio

from wildtable.headless.core import Notice
from wildtable.headless.net import Connection

from serverkit import core_beside_bob, running_server


class ReturnsAfterTheAnswer(Connection):
    """The core's own WebSocket; a write returns only once the answer to it was shown
    (at most 10 s later), as when the scheduler runs the reader first."""

    def __init__(self, ws, notes: list[Notice]):
        super().__init__(ws)
        self.notes = notes

    async def send_raw(self, data: bytes | str) -> None:
        seen = len(self.notes)
        await super().send_raw(data)
        with trio.move_on_after(10):
            while not any(n.kind in ("accepted", "rejected") for n in self.notes[seen:]):
                await trio.sleep(0.01)


def intent_notices(notes: list[Notice]) -> list[str]:
    return [n.kind for n in notes if n.kind in ("sent", "accepted", "rejected")]


async def test_an_answer_read_before_the_write_returns_is_not_followed_by_sent(tmp_path):
    notes: list[Notice] = []
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with core_beside_bob(url, notes) as (table, core):
                await core.join(table, 0)
                core.conn = ReturnsAfterTheAnswer(core.conn.ws, notes)
                # refused: the game has not started
                notes.clear()
                await core.command("draw")
                assert intent_notices(notes) == ["rejected"], notes
                # accepted ("ok" once the update of its seq is in)
                notes.clear()
                await core.command("ready")
                assert intent_notices(notes) == ["accepted"], notes
