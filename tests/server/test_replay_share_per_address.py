"""One address may have at most REPLAY_PER_ADDRESS (4) of the replay process's line of
16 (server/replay_process.py): the replay viewer's GETs come from anyone who reaches the
game port, and one address asking step after step from its 32 connections held the whole
line, so everyone else's replay answered 503. Over its share the address is told so
(503 with a sentence); another address's request is still taken; the share is given back
as each answer goes out. The address is the one the listener's per-address caps key."""

from __future__ import annotations

import json
import random

import trio

from wildtable.protocol.engine import game
from wildtable.protocol.logfmt import encode_record
from wildtable.selfplay import play
from wildtable.server import listener
from wildtable.server.replay_process import REPLAY_PER_ADDRESS
from wildtable.server.replays import OneLog, Replays
from wildtable.server.web import WebFiles

from waitkit import busy_until, wait_until

GAME = play(game("go-wild"), 2, {}, rng=random.Random(5))
DATA = encode_record(GAME.header) + b"".join(encode_record(r) for r in GAME.records)
A, B = "127.0.0.1", "127.0.0.2"


async def _get(port: int, source: str, path: str) -> tuple[int, dict]:
    """A GET of ``path`` from ``source`` (a 127.x address): its status and JSON body."""
    sock = trio.socket.socket()
    await sock.bind((source, 0))
    await sock.connect(("127.0.0.1", port))
    stream = trio.SocketStream(sock)
    async with stream:
        await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        data = b""
        while chunk := await stream.receive_some(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


async def _no_games(peer) -> None:
    await peer.close(1008, "no games here")


async def test_one_address_has_its_share_of_the_line_and_another_is_still_taken(tmp_path):
    replays = Replays(OneLog("t1", tmp_path / "t1.wlog", DATA))
    proc = replays.process
    gate = tmp_path / "go"
    got: list[tuple[int, dict]] = []
    try:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                port = await nursery.start(lambda task_status: listener.serve(
                    _no_games, "127.0.0.1", 0, http=WebFiles(replays=replays), task_status=task_status))
                # A's share: the first holds the process until the gate opens, the rest wait
                for _ in range(REPLAY_PER_ADDRESS):
                    nursery.start_soon(proc.serve, lambda: proc.call(busy_until, str(gate)), A)
                await wait_until(lambda: proc.held.of(A) == REPLAY_PER_ADDRESS, what="A's share in line")
                # over it, through the listener: 503 at once, saying why
                status, body = await _get(port, A, "/replay/t1.json?step=4")
                assert status == 503, (status, body)
                assert body["error"].startswith(f"{REPLAY_PER_ADDRESS} replay requests from your address are being "
                                                "worked out already"), body
                # another address's is taken, and answered once the process is free
                async def from_b() -> None:
                    got.append(await _get(port, B, "/replay/t1.json?step=4"))
                nursery.start_soon(from_b)
                await wait_until(lambda: proc.held.of(B) == 1, what="B's request in line")
                gate.touch()
                await wait_until(lambda: got, what="B's answer")
                assert got[0][0] == 200 and got[0][1]["step"] == 4, got
                await wait_until(lambda: proc.held.by_address == {} and proc.held.total == 0, what="every share given back")
                status, body = await _get(port, A, "/replay/t1.json?step=5")     # and A asks again
                assert status == 200 and body["step"] == 5, body
                nursery.cancel_scope.cancel()
    finally:
        gate.touch()
        replays.close()
