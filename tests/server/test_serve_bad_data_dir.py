"""`wildtable serve` (a real subprocess) started on a data dir holding good logs,
logs cut at every kind of record boundary and in the middle of records, and logs that
must be refused (flipped header byte, empty file, unrelated file, unknown game, future
format, a second log claiming a table id, a directory with the suffix). Each bad one is
refused with one log line naming the file and the reason; the good ones are served; the
server neither crashes nor stops serving, and stops cleanly on SIGTERM."""

from __future__ import annotations

import signal

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, FRAME_HEADER, ActionAccepted, ChanceRecorded, Header, IntentRejected, SeatClaimed,
    encode_record,
)
from wildtable.selfplay import play
from wildtable.server.table import token_hash

from adversarial_kit import start_serve


def _body(game: str, seats: int, settings: dict, upto: int) -> tuple[Header, list[bytes]]:
    """Encoded records after the header, of every kind, up to seq ``upto``."""
    p = play(find_game(game), seats, settings, seed=11, hash_every=4)
    out = [encode_record(SeatClaimed(i, f"p{i}", token_hash(f"t{i}"))) for i in range(seats)]
    for r in p.records:
        if isinstance(r, (ActionAccepted, ChanceRecorded)) and r.seq > upto:
            break
        out.append(encode_record(r))
        if type(r) is ActionAccepted and r.seq == 3:
            out.append(encode_record(IntentRejected(3, 0, {"kind": "nope"}, "bad_action", "no")))
            out.append(encode_record(SeatClaimed(1, "p1", b"")))       # a leave
            out.append(encode_record(SeatClaimed(1, "q1", token_hash("u1"))))
    return p.header, out


def _header(h: Header, tid: str, **kw) -> bytes:
    return encode_record(Header(kw.get("format", h.format), kw.get("game", h.game), tid, h.seats, h.settings,
                                rules=h.rules))


async def test_serve_refuses_each_bad_log_by_name_and_serves_the_good_ones(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    good, bad = set(), {}
    for game, seats, settings in [("run-wild", 2, {"rounds": 1}), ("go-wild", 3, {"target": 10}),
                                  ("wild-shots", 2, {}), ("go-fish-wildcard", 3, {})]:
        h, body = _body(game, seats, settings, 12)
        tid = "g" + game.replace("-", "")
        (data / f"{tid}.wlog").write_bytes(_header(h, tid) + b"".join(body))
        good.add(tid)
    # go-fish-wildcard cut at every record boundary (header, seat, chance, action, rejected,
    # hash records all end one) and inside every record, at its frame header and payload
    h, body = _body("go-fish-wildcard", 3, {}, 8)
    ends = [sum(len(b) for b in body[:i]) for i in range(len(body) + 1)]
    cuts = set(ends)
    for start, end in zip(ends, ends[1:]):
        cuts.update({start + 3, start + FRAME_HEADER, (start + end) // 2, end - 1})
    for k in sorted(cuts):
        tid = f"c{k}"
        (data / f"{tid}.wlog").write_bytes((_header(h, tid) + b"".join(body))[:len(_header(h, tid)) + k])
        good.add(tid)
    hdr = bytearray(_header(h, "bflip") + b"".join(body))
    hdr[FRAME_HEADER + 5] ^= 0x20
    (data / "bflip.wlog").write_bytes(bytes(hdr))
    bad["bflip.wlog"] = "CRC"
    (data / "bempty.wlog").write_bytes(b"")
    bad["bempty.wlog"] = "empty"
    (data / "bnotes.wlog").write_bytes(b"these are my notes, not a log\n" * 20)
    bad["bnotes.wlog"] = "exceeds the cap"
    (data / "bhalfhdr.wlog").write_bytes(_header(h, "bhalfhdr")[:10])
    bad["bhalfhdr.wlog"] = "no whole header"
    (data / "bgame.wlog").write_bytes(_header(h, "bgame", game="poker") + b"".join(body))
    bad["bgame.wlog"] = "unknown game 'poker'"
    future = FORMAT_VERSION + 1
    (data / "bfuture.wlog").write_bytes(_header(h, "bfuture", format=future) + b"".join(body))
    bad["bfuture.wlog"] = f"log format {future} is not supported"
    (data / "bcopy.wlog").write_bytes(_header(h, "c0") + b"".join(body))   # claims table c0
    bad["bcopy.wlog"] = "the header names table 'c0'"
    (data / "bdir.wlog").mkdir()
    bad["bdir.wlog"] = "cannot read the file: Is a directory"

    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            sp = await start_serve(nursery, data, "--durability", "off")
            text = sp.log
            for name, why in bad.items():
                lines = [ln for ln in text.splitlines() if name in ln and "refusing" in ln]
                assert len(lines) == 1 and why in lines[0], (name, why, text[-3000:])
            async with connect(sp.url, "probe") as c:
                await c.send(m.ListTables())
                tl = await c.receive_until(lambda x: isinstance(x, m.TableList))
                listed = {t["table"] for t in tl.tables}
                assert good <= listed, sorted(good - listed)
                assert not listed & {n[:-5] for n in bad}
                # a recovered table is playable: rejoin with the seat token of the log
                await c.send(m.Rejoin("ggowild", 0, "t0"))
                j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                assert isinstance(j, m.Joined), j
            sp.proc.send_signal(signal.SIGTERM)
            assert await sp.proc.wait() == 0
            nursery.cancel_scope.cancel()
