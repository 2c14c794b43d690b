"""A finished game's timeline is kept under its log's identity (device, inode, size,
modification and change times of the file the replay process opened), so a log changed
in place or replaced since it was folded is read again, never answered from the timeline
of what was there before, even one of the same size given back its modification time
(server/replay_process.py)."""

from __future__ import annotations

import os

import trio

from serverkit import get, play_out_with_a_refusal, running_server


def _forged(path, data: bytes, *, in_place: bool) -> None:
    """``data`` at ``path`` (the same size as what was there), its modification time put back."""
    st = path.stat()
    if in_place:
        with open(path, "r+b") as f:
            f.write(data)
    else:
        new = path.with_suffix(".new")
        new.write_bytes(data)
        os.chmod(new, 0o600)
        os.replace(new, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


async def test_a_log_changed_or_replaced_since_it_was_folded_is_read_again(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with running_server(data) as (server, url):
            table = await play_out_with_a_refusal(url)
            path = data / f"{table}.wlog"
            good = path.read_bytes()
            status, first = await get(server, f"/replay/{table}.json?step=99999")
            assert status == 200
            damaged = bytearray(good)
            damaged[len(good) // 2] ^= 0xFF                 # a record that no longer reads

            _forged(path, bytes(damaged), in_place=True)
            status, answer = await get(server, f"/replay/{table}.json?step=99999")
            assert status == 422 and "cannot be replayed" in answer["error"], answer

            _forged(path, good, in_place=False)             # the good log back, a file of its own
            status, again = await get(server, f"/replay/{table}.json?step=99999")
            assert status == 200 and again == first

            _forged(path, bytes(damaged), in_place=False)
            status, answer = await get(server, f"/replay/{table}.json?step=99999")
            assert status == 422, answer
