"""The replay viewer reads a log in finished/ only if what it opens is a regular file of
its own (server/replay_fold.py open_regular): a symbolic link or a FIFO put there under a
table id's name, even after the viewer looked at the name and found a regular file, is
refused as no finished game by the replay process, which opens it (server/replay_process.py),
and never read: not the bytes a link leads to (a live table's log holds every hand), and a
FIFO never hangs the viewer."""

from __future__ import annotations

import os

import pytest
import trio

from serverkit import create, get, running_server
from wildtable.headless.net import connect
from wildtable.server.replay_process import Ask, step_json
from wildtable.server.replays import FinishedGames, ReplayRefused


def unblock(fifo) -> None:
    """Let a reader stuck opening ``fifo`` go (only the code before the fix ever is)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass                # no reader waiting


async def test_a_link_or_fifo_put_in_finished_is_never_read(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann:
                playing = await create(ann, "go-wild", 2)
                live = data / f"{playing}.wlog"
                secret = live.read_bytes()
                finished = data / "finished"
                finished.mkdir()
                source = FinishedGames(server)

                # looked at by name: a regular file; then swapped for a link to the live
                # log, or for a FIFO, before it is read (the viewer looks, then reads: two steps)
                for name, swap in [("tlink", lambda p: os.symlink(live, p)), ("tfifo", os.mkfifo)]:
                    path = finished / f"{name}.wlog"
                    path.write_bytes(b"a regular file when it was looked at")
                    found = await trio.to_thread.run_sync(source.find, name, source.tables())
                    path.unlink()
                    swap(path)
                    try:
                        with trio.fail_after(5):
                            with pytest.raises(ReplayRefused) as refused:
                                # what the replay process does with it (server/replay_process.py)
                                got = await trio.to_thread.run_sync(step_json, Ask(name, source.ref(found), {}, True, True),
                                                                    abandon_on_cancel=True)
                                assert secret[:64] not in got, f"{name}: the live log was read through it"
                        assert refused.value.status == 404 and "no finished game" in refused.value.message
                        # the list of finished games reads the start of each log the same way
                        with trio.fail_after(5):
                            with pytest.raises(OSError):
                                await trio.to_thread.run_sync(source.head, path, abandon_on_cancel=True)
                    finally:
                        if name == "tfifo":
                            unblock(path)

                # and over HTTP, as a browser asks: refused, not listed, nothing hangs
                for name in ("tlink", "tfifo"):
                    status, body = await get(server, f"/replay/{name}.json")
                    assert status == 404 and "no finished game" in body["error"], body
                status, listing = await get(server, "/replays.json")
                assert status == 200 and not [g for g in listing["replays"] if g["table"] in ("tlink", "tfifo")]
