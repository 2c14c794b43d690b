"""`wildtable create URL GAME`: prints the new table's id (exit 0), which the server then
lists as waiting for players; a refusal, an unknown game or a server out of reach is one
sentence on stderr and exit status 1 (2 for a usage error), never a traceback."""

from __future__ import annotations

import sys

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from pgkit import free_port
from serverkit import running_server


async def wildtable(*argv: str):
    done = await trio.run_process([sys.executable, "-m", "wildtable", *argv], capture_stdout=True,
                                  capture_stderr=True, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_create_prints_the_id_and_refusals_are_sentences(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            code, out, err = await wildtable("create", url, "go-wild", "--seats", "3", "--set", "target=1",
                                             "--name", "friday")
            assert code == 0 and not err, err
            tid = out.strip()
            assert tid in server.tables
            async with connect(url, "ann") as ann:
                await ann.send(m.ListTables())
                listed = await ann.receive_until(lambda x: isinstance(x, m.TableList))
            (entry,) = [t for t in listed.tables if t["table"] == tid]
            assert entry["game"] == "go-wild" and entry["name"] == "friday" and entry["status"] == "waiting", entry
            code, out, err = await wildtable("create", url, "go-wild", "--set", "target=-4")
            assert code == 1 and err.startswith("wildtable create: refused (bad_settings)") and "Traceback" not in err
            code, out, err = await wildtable("create", url, "poker")
            assert code == 2 and "unknown game 'poker'" in err and "go-wild" in err, err
    code, out, err = await wildtable("create", f"ws://127.0.0.1:{free_port()}", "go-wild")
    assert code == 1 and "cannot connect to" in err and "Traceback" not in err, err
