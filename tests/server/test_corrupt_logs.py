"""Corrupt logs: a log cut mid-record is recovered up to its last whole record, with a
warning naming the file; a log with a flipped byte in the middle makes that one table
refuse to load, with an error naming the file and the offset, and every other table
loads. Real logs written by a real server, real files, a real restart."""

from __future__ import annotations

import logging
import random
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
import trio
from hypothesis import given, settings, strategies as st

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import (
    FRAME_HEADER, ActionAccepted, ChanceRecorded, SeatClaimed, encode_record, read_log,
)
from wildtable.protocol.replay import replay

from scripted import play_to_end
from serverkit import running_server, seated, server_config
from waitkit import wait_until

TABLES = 3
PLAYED = 90          # seqs played at each table before the server stops


async def _build(data: Path) -> dict:
    """Three Run Wild tables played part way by scripted players; the server stops cleanly.
    Returns {table: [token per seat]}."""
    tokens = {}
    with trio.fail_after(60):
        await _play_part_way(data, tokens)
    return tokens


async def _play_part_way(data: Path, tokens: dict) -> None:
    async with running_server(server_config(data, durability="batch")) as (server, url):
        for _ in range(TABLES):
            async with seated(url, "run-wild", 2, {"rounds": 2}) as (table, conns, joined):
                tokens[table] = [j.token for j in joined]
                async with trio.open_nursery() as n:
                    for c, j in zip(conns, joined):
                        n.start_soon(play_to_end, c, j)

                    async def stop():
                        await wait_until(lambda: server.tables[table].seq >= PLAYED, step=0.005,
                                         what=f"table {table} at seq {PLAYED}")
                        n.cancel_scope.cancel()
                    n.start_soon(stop)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    data = tmp_path_factory.mktemp("logs") / "data"
    tokens = trio.run(_build, data)
    return data, tokens


def _copy(logs, tmp_path) -> tuple[Path, dict]:
    data, tokens = logs
    dst = tmp_path / "data"
    shutil.copytree(data, dst)
    return dst, tokens


def _frames(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every record frame."""
    c = read_log(data)
    starts = [0] + list(c.offsets)
    ends = starts[1:] + [c.good_length]
    return list(zip(starts, ends))


def _last_seq_before(data: bytes, cut: int) -> int:
    """The seq of the last state-changing record that ends at or before ``cut``."""
    c = read_log(data)
    ends = list(c.offsets[1:]) + [c.good_length]
    seqs = [r.seq for r, end in zip(c.records, ends)
            if isinstance(r, (ActionAccepted, ChanceRecorded)) and end <= cut]
    return seqs[-1] if seqs else 0


def _renamed(raw: bytes, table: str) -> bytes:
    """The same log, its header naming another table id (as if written for that table)."""
    c = read_log(raw)
    return encode_record(attrs.evolve(c.header, table=table)) + raw[c.offsets[0]:]


async def _finish(url, table, tokens) -> None:
    """The seats' players come back with their tokens and play to the end."""
    async with connect(url, "p0") as a, connect(url, "p1") as b:
        joined = []
        for i, c in enumerate((a, b)):
            await c.send(m.Rejoin(table, i, tokens[i]))
            j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
            assert isinstance(j, m.Joined), j
            joined.append(j)
        results = []

        async def p(c, j):
            results.append(await play_to_end(c, j, timeout=60))
        async with trio.open_nursery() as n:
            n.start_soon(p, a, joined[0])
            n.start_soon(p, b, joined[1])
        assert results[0].over is not None and results[0].over == results[1].over


def _verify(path: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(path), "--verify"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("where", ["frame-header", "payload", "middle"])
async def test_a_log_cut_mid_record_is_recovered_up_to_its_last_whole_record(logs, tmp_path, caplog, where):
    data, tokens = _copy(logs, tmp_path)
    table = sorted(tokens)[1]
    path = data / f"{table}.wlog"
    raw = path.read_bytes()
    frames = _frames(raw)
    rng = random.Random(where)
    if where == "frame-header":
        start, end = frames[-1]
        cut = start + rng.randint(1, FRAME_HEADER - 1)
    elif where == "payload":
        start, end = frames[-1]
        cut = rng.randint(start + FRAME_HEADER, end - 1)
    else:                                   # a crash long ago: everything after the cut is gone
        start, end = frames[len(frames) * 2 // 3]
        cut = rng.randint(start + 1, end - 1)
    path.write_bytes(raw[:cut])
    expected_seq = _last_seq_before(raw, cut)
    others = {t: replay(read_log((data / f"{t}.wlog").read_bytes())).seq for t in tokens if t != table}
    caplog.set_level(logging.INFO, logger="wildtable.server")
    with trio.fail_after(90):
        async with running_server(data) as (server, url):
            warned = [r for r in caplog.records if r.levelno == logging.WARNING and path.name in r.getMessage()]
            assert warned and "torn tail" in warned[0].getMessage() and str(start) in warned[0].getMessage(), \
                [r.getMessage() for r in caplog.records]
            assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
            assert server.tables[table].seq == expected_seq
            assert path.stat().st_size == start                      # the torn bytes are cut off
            for t, seq in others.items():
                assert server.tables[t].seq == seq
            await _finish(url, table, tokens[table])
            assert server.tables[table].finished
    out = _verify(path)
    assert "game over: yes" in out


def _middle(frames):
    """Byte positions inside the frames between the header and the last record."""
    return frames[1][0], frames[-1][0]


def test_any_flipped_byte_in_the_middle_is_named_by_its_frame_offset(logs):
    data, tokens = logs
    raw = (data / f"{sorted(tokens)[0]}.wlog").read_bytes()
    frames = _frames(raw)
    lo, hi = _middle(frames)
    starts = [s for s, _ in frames]

    @settings(max_examples=300, deadline=None, database=None)
    @given(pos=st.integers(lo, hi - 1), bit=st.integers(0, 7))
    def flip(pos, bit):
        bad = bytearray(raw)
        bad[pos] ^= 1 << bit
        try:
            read_log(bytes(bad))
        except LogError as e:
            frame = max(s for s in starts if s <= pos)
            assert e.offset == frame, (pos, e.offset, frame, e)
            assert f"byte offset {frame}" in str(e)
            assert e.code in ("bad_crc", "bad_frame")
        else:
            raise AssertionError(f"a flipped bit at {pos} went unnoticed")

    flip()


async def test_a_flipped_byte_in_the_middle_refuses_that_table_only(logs, tmp_path, caplog):
    data, tokens = _copy(logs, tmp_path)
    bad_table = sorted(tokens)[2]
    path = data / f"{bad_table}.wlog"
    raw = path.read_bytes()
    frames = _frames(raw)
    start, end = frames[len(frames) // 2]
    pos = (start + end) // 2
    flipped = bytearray(raw)
    flipped[pos] ^= 0x10
    path.write_bytes(bytes(flipped))
    caplog.set_level(logging.INFO, logger="wildtable.server")
    with trio.fail_after(60):
        async with running_server(data) as (server, url):
            errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
            assert len(errors) == 1, errors
            assert path.name in errors[0] and f"byte offset {start}" in errors[0], errors
            assert bad_table not in server.tables and path.name in server.refused_logs
            assert path.read_bytes() == bytes(flipped)                 # corruption is never cut
            assert set(server.tables) == set(tokens) - {bad_table}
            good = sorted(set(tokens) - {bad_table})[0]
            await _finish(url, good, tokens[good])
            async with connect(url, "x") as c:
                await c.send(m.ListTables())
                lst = await c.receive_until(lambda x: isinstance(x, m.TableList))
                assert bad_table not in {t["table"] for t in lst.tables}
    _verify(data / f"{good}.wlog")


async def test_logs_that_read_but_make_no_sense_refuse_only_their_table(logs, tmp_path, caplog):
    """Found: a seat record for a seat the table does not have (a good CRC, a bad
    record) stopped the whole server at start (seat 99: IndexError) or took over
    another seat's token (seat -1); a log copied under another name was loaded as a
    second table with the same id. Each now refuses that one table, naming the file."""
    data, tokens = _copy(logs, tmp_path)
    first = sorted(tokens)[0]
    raw = (data / f"{first}.wlog").read_bytes()
    crafted = {
        "tseat99.wlog": _renamed(raw, "tseat99") + encode_record(SeatClaimed(99, "x", b"")),
        "tseatminus1.wlog": _renamed(raw, "tseatminus1") + encode_record(SeatClaimed(-1, "mallory", b"\x00" * 32)),
        f"{first}-copy.wlog": raw,
        "empty.wlog": b"",
        "junk.wlog": b"this is not a log at all" * 10,
    }
    for name, content in crafted.items():
        (data / name).write_bytes(content)
    caplog.set_level(logging.INFO, logger="wildtable.server")
    with trio.fail_after(60):
        async with running_server(data) as (server, url):
            errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
            for name in crafted:
                assert any(name in e for e in errors), (name, errors)
                assert name in server.refused_logs, name
            assert set(server.tables) == set(tokens)
            # the real table's seats are untouched: its players come back and finish
            await _finish(url, first, tokens[first])
