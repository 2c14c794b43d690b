"""Rough edges of `wildtable play` found in a review: a table size the game cannot have,
a start-up error printed twice, `create` while at a table, and extra words after
`leave`/`list`/`show`. Real server on 127.0.0.1 or a real subprocess; every wait bounded."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import trio

from wildtable.headless.core import LOBBY_COMMANDS, Notice

from serverkit import core_beside_bob, running_server, server_config

ENV = dict(os.environ, PYTHONUNBUFFERED="1")


@pytest.fixture(autouse=True)
def private_state(tmp_path):
    ENV["WILDTABLE_STATE_DIR"] = str(tmp_path / "state")


def _play(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wildtable", "play", *args, "--plain"], input="quit\n",
                          capture_output=True, text=True, timeout=60, env=ENV)


@pytest.mark.parametrize("args, says", [
    (["--game", "run-wild", "--bots", "0"], "Run Wild is for 2 to 4 players: --bots 0 and you make 1; use --bots 1 to 3"),
    (["--bots", "4"], "Run Wild is for 2 to 4 players: --bots 4 and you make 5; use --bots 1 to 3"),
    (["--game", "go-wild", "--bots", "6"], "Go Wild! is for 2 to 6 players"),
    (["--bots", "1", "--players", "99"], "Run Wild is for 2 to 4 players, not --players 99"),
    (["--game", "wild-shots", "--bots", "0", "--players", "1"], "is for 2 to 4 players, not --players 1"),
    (["--players", "3"], "--players goes with --bots"),
    (["--game", "nope", "--bots", "1"], "there is no game 'nope'; choose one of: "),
    # settings the game refuses: asked of the game's rules before anything starts
    (["--bots", "1", "--set", "rounds=0"], "--set: setting 'rounds': must be 1 to 100"),
    (["--bots", "1", "--set", "nope=3"], "--set: unknown setting 'nope'; known: allow_all_wild_melds, "),
    (["--game", "go-wild", "--bots", "2", "--set", "turn_timer=abc"], "--set: setting 'turn_timer' must be "),
    (["--set", "rounds=2"], "--set goes with --bots"),
    # a name the server's hello refuses is a usage problem, not "cannot connect"
    (["--bots", "1", "--name", "n" * 41], "--name wants 1 to 40 printable characters, not 'nnnn"),
    (["--bots", "1", "--name", "  "], "--name wants 1 to 40 printable characters, not '  '"),
])
def test_a_table_the_game_cannot_have_is_refused_before_anything_starts(args, says):
    done = _play(*args)
    assert done.returncode == 2, done
    assert done.stdout == "", done.stdout          # no private server, no lobby
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("wildtable play: ") and says in err, err


async def test_a_server_error_at_start_up_is_printed_once(tmp_path):
    # a refusal only the server can give (it holds no more tables), so the client's own
    # checks pass and the session starts
    async with running_server(server_config(tmp_path / "data", max_tables=0)) as (_, url):
        done = await trio.to_thread.run_sync(lambda: _play(url, "--bots", "1"))
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    errors = [x for x in done.stdout.splitlines() if x.startswith("error")]
    assert len(errors) == 1, done.stdout
    assert errors[0].startswith("error cannot create the table: too_many_tables: "), errors


async def _wait_for(notes: list[Notice], kinds: tuple[str, ...], seconds: float = 3) -> None:
    with trio.move_on_after(seconds):
        while not any(n.kind in kinds for n in notes):
            await trio.sleep(0.01)


@pytest.mark.parametrize("how", ["seated", "watching"])
async def test_create_at_a_table_is_refused_and_sends_nothing(tmp_path, how):
    notes: list[Notice] = []
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with core_beside_bob(url, notes) as (table, core):
                await (core.join(table, 0) if how == "seated" else core.spectate(table))
                for typed in ("create", "new run-wild 3", "create go-wild 2 turn_timer=0"):
                    notes.clear()
                    await core.command(typed)
                    with trio.move_on_after(0.5):        # anything the server would answer
                        await _wait_for(notes, ("info", "error"), 0.5)
                    rejected = [n for n in notes if n.kind == "rejected"]
                    assert len(rejected) == 1 and rejected[0].text == typed, notes
                    code, reason = rejected[0].code, rejected[0].reason
                    assert code == "bad_command" and f"table {table}" in reason and "leave" in reason, reason
                    assert not [n for n in notes if n.kind in ("info", "error")], notes
                assert list(server.tables) == [table]     # no empty table was left behind
                assert core.mirror.table == table


async def test_extra_words_after_leave_list_show_are_refused_with_the_usage(tmp_path):
    notes: list[Notice] = []
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with core_beside_bob(url, notes) as (table, core):
                await core.join(table, 0)
                for typed, word in (("leave x", "leave"), ("list x", "list"), ("ls all", "list"),
                                    ("show x y", "show")):
                    notes.clear()
                    await core.command(typed)
                    await _wait_for(notes, ("info", "tables", "show"), 0.5)
                    said = [n for n in notes if n.kind not in ("event", "flash", "table")]   # the deal
                    assert [n.kind for n in said] == ["rejected"], notes
                    code, reason = said[0].code, said[0].reason
                    assert code == "bad_command" and reason.startswith(f"{word} takes nothing after it")
                    assert LOBBY_COMMANDS[word] in reason, reason
                assert core.mirror.table == table and core.mirror.seat == 0     # still seated
                notes.clear()
                await core.command("leave")                # the bare commands still work
                await _wait_for(notes, ("info",))
                assert any(n.kind == "info" and n.text == f"you left table {table}" for n in notes), notes


async def test_a_bug_in_reading_a_command_is_a_refusal_and_the_session_goes_on(tmp_path, monkeypatch):
    """Found: a game's parser that raised anything but CommandError (a StopIteration in
    Run Wild's meld, since fixed) ended the whole client. Any such bug of ours is now a
    refusal naming it, nothing is sent, and the next command works. The bug is injected:
    none is known to remain."""
    from wildtable.headless.games import run_wild as plugin

    def broken(words, view):
        raise ZeroDivisionError("division by zero")

    notes: list[Notice] = []
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with core_beside_bob(url, notes) as (table, core):
                await core.join(table, 0)
                monkeypatch.setattr(plugin, "parse", broken)
                notes.clear()
                await core.command("draw")
                [r] = [n for n in notes if n.kind == "rejected"]
                assert r.code == "client_bug" and "our bug: ZeroDivisionError" in r.reason, r
                assert not [n for n in notes if n.kind == "sent"]
                monkeypatch.undo()
                notes.clear()
                await core.command("ready")
                await _wait_for(notes, ("accepted",))
                assert any(n.kind == "accepted" for n in notes), notes
