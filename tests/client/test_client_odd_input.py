"""The client against odd input: typed commands and command-line options that
used to end in a traceback. Each must give a sentence and let the session go on (a
command), or a one-line error and a non-zero exit (an option)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import trio

from wildtable.headless.core import Notice

from serverkit import core_beside_bob, running_server
from waitkit import wait_until

ENV = dict(os.environ, PYTHONUNBUFFERED="1")


@pytest.fixture(autouse=True)
def private_state(tmp_path):
    ENV["WILDTABLE_STATE_DIR"] = str(tmp_path / "state")


HUGE = "99999999999999999999999"      # more than msgpack's 64 bits


async def test_numbers_too_big_for_the_wire_and_deep_json_are_refused_and_the_session_goes_on(tmp_path):
    notes: list[Notice] = []
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with core_beside_bob(url, notes, "go-wild", default_game="go-wild") as (table, core):
                typed = [f"join {table} {HUGE}", f"create go-wild {HUGE}", f"create go-wild 2 turn_timer={HUGE}",
                         f"join {table} 0",
                         'act {"kind": "play", "cards": [' + HUGE + "]}",
                         'act {"kind": "x", "a": ' + "[" * 5000 + "]" * 5000 + "}"]
                for text in typed:
                    await core.command(text)      # used to raise OverflowError / RecursionError
                rejected = {n.text: n for n in notes if n.kind == "rejected"}
                for text in typed[:3] + typed[4:]:
                    assert text in rejected, (text, [n for n in notes if n.kind != "table"])
                    assert rejected[text].code == "bad_command"
                assert "too large" in rejected[typed[2]].reason and "too large" in rejected[typed[4]].reason
                assert not core.pending          # the refused intent is not left waiting
                # the session goes on: still connected, seated, and a valid command works
                assert core.online and core.mirror.seat == 0
                notes.clear()
                await core.command("show")
                assert [n.kind for n in notes] == ["show"]


def _run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wildtable", *args], input="quit\n", capture_output=True,
                          text=True, timeout=timeout, env=ENV)


@pytest.mark.parametrize("args, says", [
    (["play", "http://127.0.0.1:8765", "--plain"], 'must start with ws:// or wss://'),
    (["play", "127.0.0.1:8765", "--plain"], 'must start with ws:// or wss://'),
    (["play", "ws://127.0.0.1:99999", "--plain"], "port"),
    (["bots", "notaurl", "--table", "t1"], 'must start with ws:// or wss://'),
    (["bots", "ws://127.0.0.1:99999", "--table", "t1"], "port"),
    (["play", "--bots", "1", "--bot-delay", "-1", "--plain"], "--bot-delay"),
    (["play", "--bots", "1", "--bot-delay", "nan", "--plain"], "--bot-delay"),
    (["bots", "ws://127.0.0.1:1", "--table", "t1", "--delay", "-0.5"], "--delay"),
])
def test_bad_url_or_delay_is_one_line_and_a_usage_exit(args, says):
    done = _run(*args)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and says in err, err


def test_a_setting_too_big_for_the_wire_at_play_alone_is_a_sentence():
    # asked of the game's rules before anything starts (a number this size is out of
    # every setting's range), so nothing is sent at all
    done = _run("play", "--bots", "1", "--set", f"rounds={HUGE}", "--plain")
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.strip() == "wildtable play: --set: setting 'rounds': must be 1 to 100", done.stderr


LONG = "9" * 5000        # int() refuses more than 4300 digits
SUP = "\u00b2"           # "²": str.isdigit() says yes, int() says no

ODD_NUMBERS = {
    "run-wild": ["meld #{n} W W", "add B1 to m{n}", "take B1 from m{n}", "draw3 {n}"],
    "go-wild": ["play {n} red", "p R{n}", "slough {n}", "play #{n}"],
    "wild-shots": ["play {n}"],
    "go-fish-wildcard": ["ask {n} 7", "ask p1 for {n}", "place #{n} W W"],
}
LOBBY = ["join {n}", "join t1 {n}", "spectate {n}", "create {n}", "bots {n}", 'act {{"kind": "x", "n": {n}}}']


@pytest.mark.parametrize("game", sorted(ODD_NUMBERS))
async def test_unicode_digits_and_endless_numbers_are_refused_in_every_game(tmp_path, game):
    """Every command that takes a number, typed with "²" or 5000 nines: a refusal each,
    never a ValueError out of int(); and completing those lines (Tab, the grey hint) too."""
    from wildtable.headless.core import complete_line, completions
    notes: list[Notice] = []
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with core_beside_bob(url, notes, game, default_game=game) as (table, core):
                await core.join(table, 0)
                for n in (SUP, LONG):
                    for pattern in ODD_NUMBERS[game] + LOBBY:
                        text = pattern.format(n=n)
                        for cut in (len(text), len(text) - 1, text.rfind(" ") + 1):
                            completions(core, text[:cut] + " ")
                            complete_line(core, text[:cut])
                        notes.clear()
                        await core.command(text)
                        # a server's error comes a moment later
                        await wait_until(lambda: any(x.kind in ("rejected", "error") for x in notes), timeout=3,
                                         what=f"a refusal of {text[:60]!r}", show=lambda: notes)
                assert core.online and core.mirror.seat == 0


def test_the_replay_viewer_seq_prompt_and_seat_take_odd_digits(tmp_path):
    """`g ²` Enter (and 5000 nines) in the viewer rings the bell instead of crashing it;
    `--seat ²` is the usual one-line refusal."""
    import asyncio

    from wildtable.client.viewer import Timeline, ViewerApp
    from wildtable.protocol.logfmt import read_log

    log = tmp_path / "g.wlog"
    subprocess.run([sys.executable, "-m", "wildtable", "selfplay", "go-wild", "--players", "2", "--seed", "3",
                    "--log", str(log)], check=True, capture_output=True, timeout=60, env=ENV)
    done = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(log), "--seat", SUP, "--plain"],
                          capture_output=True, text=True, timeout=60, env=ENV)
    assert done.returncode == 2 and done.stderr.strip() == f"wildtable replay: --seat wants 0..1, all or spectator, not '{SUP}'"
    timeline = Timeline(read_log(log.read_bytes()))

    async def scenario():
        app = ViewerApp(timeline, log.name)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("right", "right")
            for typed in (SUP, "9" * 30):
                await pilot.press("g", *typed, "enter")
                assert app.index == 2 and app.is_running
            app.query_one("#jump").value = LONG          # pasted, not typed key by key
            await pilot.press("g")
            app.query_one("#jump").value = LONG
            await pilot.press("enter")
            assert app.is_running
            await pilot.press("q")
        assert app.return_code in (None, 0)

    asyncio.run(scenario())
