"""`wildtable serve`'s command line (issue #15, item 7), through the real CLI. Found:
`--port 99999` was taken (it served on 34463, 99999 mod 65536); `--data-dir /etc/passwd`
said "cannot listen on ... (is another server running there?)"; `--port 0 --quiet` said
nowhere which port it chose. Now a port, host or data-dir problem each gets a sentence of
its own (one line on stderr), and where it listens is printed on stdout."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys

import pytest
import trio

from wildtable.headless.net import connect

from proc import LineReader

WILDTABLE = [sys.executable, "-m", "wildtable"]


async def refused(tmp_path, *argv) -> tuple[int, str]:
    """`wildtable serve ARGV` (a fresh data dir unless given) run to its end: its exit
    status and its one line on stderr. Killed, and the test failed, if it serves instead."""
    if "--data-dir" not in argv:
        argv = (*argv, "--data-dir", str(tmp_path / "data"))
    with trio.move_on_after(30):
        done = await trio.run_process([*WILDTABLE, "serve", *argv], capture_stdout=True, capture_stderr=True,
                                      check=False)
        lines = done.stderr.decode().strip().splitlines()
        assert len(lines) == 1, lines
        assert done.stdout == b"", done.stdout
        return done.returncode, lines[0]
    raise AssertionError(f"wildtable serve {' '.join(argv)} served instead of refusing (it was killed after 30 s)")


@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
async def test_a_port_out_of_range_is_refused(tmp_path, port):
    code, line = await refused(tmp_path, "--port", port)
    assert (code, line) == (2, f"wildtable serve: --port wants a port number, 1 to 65535 (or 0: any free port, "
                               f"printed), not {port}")
    assert not (tmp_path / "data").exists()         # nothing started


async def test_a_port_in_use_says_so(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, line = await refused(tmp_path, "--port", str(port))
    assert (code, line) == (1, f"wildtable serve: cannot listen on port {port} of 127.0.0.1: the port is in use "
                               "(is another server running there? pick another --port, or --port 0 for a free one)")


async def test_a_host_that_is_not_this_machine_says_so(tmp_path):
    code, line = await refused(tmp_path, "--port", "0", "--host", "192.0.2.1")     # TEST-NET-1: nobody's
    assert (code, line) == (1, "wildtable serve: cannot listen on host 192.0.2.1: it is not an address of this "
                               "machine (--host wants one of its addresses: 127.0.0.1 for this machine only, "
                               "0.0.0.0 for every network interface)")


async def test_a_host_name_that_does_not_resolve_says_so(tmp_path):
    code, line = await refused(tmp_path, "--port", "0", "--host", "no.such.host.invalid")
    assert code == 1
    assert re.fullmatch(r"wildtable serve: cannot listen on host 'no\.such\.host\.invalid': .+ \(--host wants an "
                        r"address or name of this machine: 127\.0\.0\.1 for this machine only, 0\.0\.0\.0 for "
                        r"every network interface\)", line), line


async def test_a_data_dir_that_is_a_file_says_so(tmp_path):
    afile = tmp_path / "passwd"
    afile.write_text("root:x:0:0::/root:/bin/sh\n")
    code, line = await refused(tmp_path, "--port", "0", "--data-dir", str(afile))
    assert (code, line) == (1, f"wildtable serve: --data-dir {afile} is a file, not a directory: give a directory "
                               "(it is created if it does not exist)")
    code, line = await refused(tmp_path, "--port", "0", "--data-dir", str(afile / "data"))
    assert (code, line) == (1, f"wildtable serve: --data-dir {afile / 'data'} cannot be made: {afile} is a file, "
                               "not a directory")
    assert afile.read_text() == "root:x:0:0::/root:/bin/sh\n"


async def test_port_0_prints_the_port_it_chose_on_stdout_quiet_or_not(tmp_path):
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(
            [*WILDTABLE, "serve", "--port", "0", "--quiet", "--data-dir", str(tmp_path / "data")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out = LineReader(proc.stdout)
            port = int((await out.until(r"^serving on ws://127\.0\.0\.1:(\d+)$", timeout=30)).group(1))
            assert port > 0
            async with connect(f"ws://127.0.0.1:{port}", "ann") as ann:
                assert ann is not None          # a wildtable server answered the hello there
        finally:
            proc.send_signal(signal.SIGTERM)
            with trio.move_on_after(15):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode == 0
        assert await LineReader(proc.stderr).read_to_end() == ""        # --quiet: no log lines


@pytest.mark.parametrize("argv, said", [
    (("--trusted-proxy", "10.0.0.1/8"), "--trusted-proxy 10.0.0.1/8: the address has bits set past the /8; did you "
                                        "mean 10.0.0.0/8?"),
    (("--trusted-proxy", "proxy.example"), "--trusted-proxy 'proxy.example': not an IP address or network (e.g. "
                                           "127.0.0.1, 10.0.0.0/8, ::1, fd00::/8)"),
    (("--trusted-proxy", "127.0.0.1", "--forwarded-header", "X-Real-IP"),
     "--forwarded-header 'X-Real-IP': it is X-Forwarded-For or Forwarded (the one your proxy sets)"),
    (("--proxy-protocol",), "--proxy-protocol needs --trusted-proxy ADDR|CIDR: the proxies whose PROXY header is "
                            "believed (anyone else could name any address)"),
])
async def test_a_bad_trusted_proxy_says_what_is_wrong(tmp_path, argv, said):
    code, line = await refused(tmp_path, "--port", "0", *argv)
    assert (code, line) == (2, f"wildtable serve: {said}")
    assert not (tmp_path / "data").exists()         # nothing started
