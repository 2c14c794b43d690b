"""A real server's log (seat claims, a refused intent, timers) with a byte flipped at ten
random offsets: --verify and --plain show every record before the damage and name it,
and --salvage keeps those records as a log that verifies (issue #27)."""

from __future__ import annotations

import random

import pytest
import trio

from wildtable.cli import main
from wildtable.protocol.logfmt import read_log, read_prefix

from serverkit import play_out_with_a_refusal, running_server


async def _server_log(data_dir) -> bytes:
    with trio.fail_after(40):
        async with running_server(data_dir) as (server, url):
            table = await play_out_with_a_refusal(url)
            path = server.tables[table].logfile.path
        return path.read_bytes()


@pytest.fixture(scope="module")
def server_log(tmp_path_factory) -> bytes:
    return trio.run(_server_log, tmp_path_factory.mktemp("damaged") / "data")


def test_ten_flipped_bytes_each_show_the_prefix(server_log, tmp_path, capsys):
    contents = read_log(server_log)
    assert any(type(r).__name__ == "IntentRejected" for r in contents.records)
    for n, pos in enumerate(random.Random(2027).sample(range(contents.offsets[0], contents.offsets[-1]), 10)):
        bad = bytearray(server_log)
        bad[pos] ^= 0x24
        path = tmp_path / f"flip{n}.wlog"
        path.write_bytes(bytes(bad))
        k = max(i for i, off in enumerate(contents.offsets) if off <= pos)
        assert read_prefix(bytes(bad)).damage.offset == contents.offsets[k]
        assert main(["replay", str(path), "--verify"]) == 1
        out = capsys.readouterr().out
        assert "DAMAGED - Go Wild!" in out and f"byte offset {contents.offsets[k]}" in out, out
        assert main(["replay", str(path), "--plain", "--events"]) == 1
        lines = capsys.readouterr().out.splitlines()
        assert len([x for x in lines if x.startswith("[")]) == 1 + k and lines[-1].startswith("DAMAGED:")
        good = tmp_path / f"good{n}.wlog"
        assert main(["replay", str(path), "--salvage", str(good)]) == 0
        assert good.read_bytes() == server_log[:contents.offsets[k]]
        assert main(["replay", str(good), "--verify"]) == 0 and " OK - " in capsys.readouterr().out
