"""The web replay viewer's HTTP answers (server/replays.py): finished games are listed and
stepped through by the engines on the server, the one the server still holds and the one
whose log it moved to finished/; a game still being played is never served, nor any path
outside those logs; a state hash that differs is said where it stands."""

from __future__ import annotations

import json
import os
import socket

import attrs
import trio

from serverkit import create, get, join, play_out_with_a_refusal, running_server, same_json, server_config
from wildtable.headless.net import connect
from wildtable.protocol.logfmt import IntentRejected, StateHashed, encode_record, read_log
from wildtable.protocol.replay import replay

def raw_status(port: int, path: str) -> bytes:
    """The status line for ``path`` sent as it is (no client library tidies it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        return s.recv(65536).split(b"\r\n", 1)[0]


async def test_a_finished_game_is_listed_and_stepped_through_by_the_engine(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(40):
        async with running_server(data) as (server, url):
            table = await play_out_with_a_refusal(url)
            status, listing = await get(server, "/replays.json")
            assert status == 200 and listing["lobby"] is True
            (entry,) = [g for g in listing["replays"] if g["table"] == table]
            assert entry["game"] == "go-wild" and entry["players"] == ["ann", "bob"] and entry["held"] is True

            contents = read_log((data / f"{table}.wlog").read_bytes())
            final = replay(contents)
            status, first = await get(server, f"/replay/{table}.json")
            assert status == 200 and first["step"] == 0 and first["record"]["kind"] == "header"
            assert first["steps"] == len(contents.records) + 1 and first["last_seq"] == final.seq
            assert first["hashes"]["checked"] > 0 and first["hashes"]["mismatched"] == 0

            # the last step's all-seeing state is the engine's own, every seat's view with it
            status, last = await get(server, f"/replay/{table}.json?step=99999&view=all")
            assert last["step"] == first["steps"] - 1 and last["next_rejected"] is None
            g = final.game
            assert last["state"]["board"] == same_json(g.view(final.state, None))
            assert last["state"]["hands"] == [same_json(g.view(final.state, s)) for s in range(2)]
            assert any("seat" in line or "score" in line.lower() for line in last["text"])

            # the refused intent, in its place, with its reason; the seat that sent it sees
            # it, another seat sees that there was one and its code only
            at = first["next_rejected"]
            assert at is not None
            rejected = [i for i, r in enumerate(contents.records, 1) if type(r) is IntentRejected]
            assert at == rejected[0]
            r = contents.records[at - 1]
            _, mine = await get(server, f"/replay/{table}.json?step={at}&view=0")
            rec = mine["record"]
            assert (rec["kind"], rec["code"], rec["reason"], rec["hidden"]) == ("rejected", r.code, r.reason, False)
            assert rec["what"].startswith("play") and "9999" in rec["action"] and mine["view_as"] == 0 and "hand" in mine["state"]["view"]
            assert any(x["step"] == at and x["kind"] == "rejected" for x in mine["around"])
            _, theirs = await get(server, f"/replay/{table}.json?step={at}&view=1")
            assert theirs["record"]["hidden"] is True and theirs["record"]["reason"] is None
            assert "9999" not in json.dumps(theirs["record"])
            _, after = await get(server, f"/replay/{table}.json?step={at + 1}")
            assert after["prev_rejected"] == at

            # a seq is found: its step
            seq = final.seq // 2
            _, by_seq = await get(server, f"/replay/{table}.json?seq={seq}&view=spectator")
            assert by_seq["seq"] == seq and by_seq["view_as"] == "spectator" and "view" in by_seq["state"]
            status, bad = await get(server, f"/replay/{table}.json?view=7")
            assert status == 400 and "view wants all, spectator or a seat 0..1" in bad["error"]
            status, bad = await get(server, f"/replay/{table}.json?step=x")
            assert status == 400 and "step wants a whole number" in bad["error"]

        # forgotten at the next start (finished over keep_finished ago): from finished/
        async with running_server(server_config(data, keep_finished=0)) as (server, url):
            assert table not in server.tables and (data / "finished" / f"{table}.wlog").exists()
            _, listing = await get(server, "/replays.json")
            (entry,) = [g for g in listing["replays"] if g["table"] == table]
            assert entry["held"] is False and entry["players"] == ["ann", "bob"]
            status, again = await get(server, f"/replay/{table}.json?step=99999&view=all")
            assert status == 200 and again["state"] == last["state"]


async def test_a_game_still_played_is_not_served_nor_any_other_path(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                playing = await create(ann, "go-wild", 2, turn_timer=0)
                await join(ann, playing, 0)
                await join(bob, playing, 1)
                waiting = await create(ann, "run-wild", 2)
                for table in (playing, waiting):
                    status, body = await get(server, f"/replay/{table}.json?step=3&view=all")
                    assert status == 403 and "still being played" in body["error"], body
                    assert set(body) == {"error"}
                _, listing = await get(server, "/replays.json")
                assert not [g for g in listing["replays"] if g["table"] in (playing, waiting)]

                # the live log reached another way: a link in finished/, a copy there (not
                # a finished game), a path out of the folder
                finished = data / "finished"
                finished.mkdir(exist_ok=True)
                os.symlink(data / f"{playing}.wlog", finished / "tlink.wlog")
                (finished / "tcopy.wlog").write_bytes((data / f"{playing}.wlog").read_bytes())
                assert (await get(server, "/replay/tlink.json"))[0] == 404
                status, body = await get(server, "/replay/tcopy.json")
                assert status == 409 and "does not end its game" in body["error"]
                port = server.port
                for path in [f"/replay/../{playing}.json", f"/replay/..%2F{playing}.json", "/replay/%2e%2e/x.json",
                             f"/replay/{playing}.wlog", "/replay/.json", "/replay/a/b.json", "/replay//etc/passwd.json",
                             f"/replay/{'x' * 65}.json", "/replays.json/", "/replay/"]:
                    head = await trio.to_thread.run_sync(raw_status, port, path)
                    assert head.startswith(b"HTTP/1.1 404"), (path, head)


async def test_a_state_hash_that_differs_is_shown_where_it_stands(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            table = await play_out_with_a_refusal(url)
            contents = read_log((data / f"{table}.wlog").read_bytes())
            hashes = [i for i, r in enumerate(contents.records, 1) if type(r) is StateHashed]
            bad = hashes[-1]
            records = [attrs.evolve(r, hash=bytes(len(r.hash))) if i == bad else r
                       for i, r in enumerate(contents.records, 1)]
            (data / "finished").mkdir(exist_ok=True)
            (data / "finished" / "tedited.wlog").write_bytes(
                encode_record(contents.header) + b"".join(encode_record(r) for r in records))
            _, ok = await get(server, f"/replay/{table}.json?step={hashes[0]}")
            assert ok["record"]["kind"] == "hash" and ok["record"]["hash"] == "ok"
            _, edited = await get(server, f"/replay/tedited.json?step={hashes[0]}")
            assert edited["hashes"] == {"checked": len(hashes), "mismatched": 1, "first_mismatch": bad}
            _, at = await get(server, f"/replay/tedited.json?step={bad}")
            assert at["record"]["hash"] == "mismatch" and "differs from this hash" in at["record"]["problem"]
