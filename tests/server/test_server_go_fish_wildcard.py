"""Go Fish Wildcard over real WebSockets on 127.0.0.1 and through the real command line:
a whole game between `wildtable bots` and a scripted client (every update checked against
the engine's view for that seat, then `wildtable replay --verify` on the log), the turn
timer playing for an idle seat and for a whole table, the line mode of
`wildtable play --game go-fish-wildcard --bots 2 --plain`, and selfplay/replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import trio

from wildtable.headless.games import go_fish_wildcard as gf
from wildtable.headless.net import Mirror, connect
from wildtable.protocol import messages as m
from wildtable.protocol.engine import game as find_game, state_hash
from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from proc import LineReader
from scripted import play_to_end
from serverkit import check_views, collect_until_over, create, join, replay_by_seq, running_server

G = find_game("go-fish-wildcard")
ENV = dict(os.environ, PYTHONUNBUFFERED="1")
WILDTABLE = [sys.executable, "-m", "wildtable"]


def scripted_command(view: dict) -> str | None:
    """A simple player that types its moves: in step "bonus" it places (place alone picks
    the set that earns the ask); otherwise it asks the next player holding cards for the
    rank of its lowest card."""
    seat = view.get("seat")
    if view.get("turn") != seat or view.get("phase") not in ("play", "last_asks"):
        return None
    if view["step"] == "bonus":
        return "place"
    n = len(view["players"])
    target = next(((seat + i) % n for i in range(1, n) if view["players"][(seat + i) % n]["hand"]), (seat + 1) % n)
    return f"ask p{target} for {gf.plural(G.RANKS[min(view['hand']) // 4])}"


async def play_typed(conn, joined: m.Joined, log: list, *, probe: bool = True, timeout: float = 40) -> Mirror:
    """Play from the seat's view to the end by typed commands; every message goes to ``log``.
    With ``probe``, first send one move the rules refuse (end before asking)."""
    def choose(view: dict) -> dict | None:
        nonlocal probe
        text = scripted_command(view)
        if text is not None and probe:
            text, probe = "end", False
        return None if text is None else gf.parse(text.split(), view)
    # play_to_end decides on a view no older than the last move's own update
    return await play_to_end(conn, joined, choose, timeout=timeout, log=log)


def check_updates(messages: list, seat, log) -> int:
    """Every view this connection got is exactly the engine's view for its seat at that
    seq (no more: the engine's views are proven not to leak), events are the public ones."""
    updates = check_views(messages, log, seat)
    for msg in updates:
        assert list(msg.events) == log.events[msg.seq]
        for e in msg.events:
            assert "cards" not in e or e["event"] == "set_placed", e
    return len(updates)


async def test_whole_game_between_bots_and_a_scripted_client_then_replay_verify(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "eve") as eve:
                table = await create(ann, "go-fish-wildcard", 3)
                await eve.send(m.Spectate(table))
                watched = [await eve.receive_until(lambda x: isinstance(x, m.Spectating))]
                joined = await join(ann, table, 0)
                bots = await trio.lowlevel.open_process(
                    WILDTABLE + ["bots", url, "--table", table, "--count", "2", "--delay", "0", "--name", "rob"],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV)
                got: list = [joined]
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(collect_until_over, eve, watched)
                    mirror = await play_typed(ann, joined, got)
                bot_out = await LineReader(bots.stdout).read_to_end()
                assert await bots.wait() == 0, bot_out
            t = server.tables[table]
            assert t.finished and mirror.over.scores == tuple(G.outcome(t.state).scores)
            live_hash = state_hash(G, t.state)
            path = t.logfile.path
    # the probe was refused with the rules' reason, everything else accepted
    refusals = [x for x in got if isinstance(x, m.Rejected)]
    assert [(x.code, x.reason) for x in refusals] == [
        ("must_ask", "Ask another player for a rank you hold before you end your turn.")]
    assert sum(isinstance(x, m.Accepted) for x in got) > 3
    assert bot_out.count("game over") == 2 and "rob1: seat" in bot_out
    # every update ann and the spectator got is the engine's view at that seq, nothing more
    log = replay_by_seq(read_log(path.read_bytes()))
    assert check_updates(got, 0, log) == max(log.states)
    assert check_updates(watched, None, log) == max(log.states)
    records = read_log(path.read_bytes()).records
    assert {r.by for r in records if type(r) is ActionAccepted} == {"player"}
    assert {r.seat for r in records if type(r) is ActionAccepted} == {0, 1, 2}
    # the command line replays the log to the same state
    proc = subprocess.run(WILDTABLE + ["replay", str(path), "--verify"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert f"final hash: {live_hash.hex()}" in proc.stdout and "game over: yes" in proc.stdout
    proc = subprocess.run(WILDTABLE + ["replay", str(path), "--plain", "--seat", "0", "--upto", "12"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert ": ann: end - must_ask" in proc.stdout           # the refused probe, as the command typed
    assert "ann: ask p" in proc.stdout and "-> ann asked " in proc.stdout
    assert "your hand (" in proc.stdout


async def test_turn_timer_plays_for_an_idle_seat(tmp_path):
    """Seat 1 is connected but never acts: after turn_timer seconds the server plays the
    default move for it, logged with by "timer"; the game still ends and replays."""
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "idle") as idle:
                table = await create(ann, "go-fish-wildcard", 2, turn_timer=0.15)
                joined = await join(ann, table, 0)
                assert joined.view["turn_timer"] == 0.15
                await join(idle, table, 1)
                got: list = []
                heard: list = []
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(collect_until_over, idle, heard)
                    await play_typed(ann, joined, got, probe=False)
            t = server.tables[table]
            live = state_hash(G, t.state)
            path = t.logfile.path
    records = [r for r in read_log(path.read_bytes()).records if type(r) is ActionAccepted]
    assert {r.by for r in records if r.seat == 1} == {"timer"}
    assert {r.by for r in records if r.seat == 0} <= {"player", "timer"}
    assert any(r.by == "player" for r in records)
    assert all(r.intent is None for r in records if r.by == "timer")
    # the idle seat heard every move, its own timed ones too
    log = replay_by_seq(read_log(path.read_bytes()))
    assert check_updates(heard, 1, log) == max(log.states)
    assert state_hash(G, replay(read_log(path.read_bytes())).state) == live


async def test_turn_timer_alone_plays_a_whole_table(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "a") as a, connect(url, "b") as b, connect(url, "c") as c:
                table = await create(a, "go-fish-wildcard", 3, turn_timer=0.02, dealer=2)
                for i, conn in enumerate((a, b, c)):
                    await join(conn, table, i)
                over = await a.receive_until(lambda x: isinstance(x, m.GameOver), timeout=50)
            t = server.tables[table]
            path = t.logfile.path
    assert over.scores == tuple(G.outcome(t.state).scores) and over.winners
    records = [r for r in read_log(path.read_bytes()).records if type(r) is ActionAccepted]
    assert records and {r.by for r in records} == {"timer"}
    assert records[0].seat == 0                           # the dealer's left starts
    assert replay(read_log(path.read_bytes())).state == t.state


async def test_plain_line_mode_plays_a_whole_game_against_two_bots():
    """`wildtable play --game go-fish-wildcard --bots 2 --plain`: a private server and two
    bots in that process; a script reads the tagged lines and types the moves, asking
    the table (show) what step its turn is in, as a screen-reader user would."""
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(
            WILDTABLE + ["play", "--game", "go-fish-wildcard", "--bots", "2", "--bot-delay", "0.01", "--plain",
                         "--name", "scripty", "--set", "dealer=2"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
        out = LineReader(proc.stdout, timeout=20)

        async def send(text: str) -> None:
            await proc.stdin.send_all(text.encode() + b"\n")

        await send("help ask")
        hand: list[str] = []
        waiting = None            # a move sent and not answered yet
        showing = False
        status = ""
        over = None
        moves = 0
        while True:
            line = await out.next()
            assert line is not None, "the client stopped early:\n" + out.tail()
            tag, _, rest = line.partition(" ")
            if tag in ("hand", "hand:"):
                hand = rest.rpartition("|")[0].split()
            elif tag in ("ok", "rejected") and waiting is not None and rest.startswith(waiting):
                # "ok" comes once the client's table holds the move's own update
                assert tag == "ok", line
                waiting = None
                if not showing:
                    showing = True
                    await send("show")
            elif tag == "event" and rest.startswith(("your turn", "your last ask")) and not showing:
                showing = True
                await send("show")
            elif tag == "show" and rest.startswith("Go Fish Wildcard - "):
                status = rest.split(" - ")[1]
            elif tag == "show" and rest.startswith("your hand ("):
                # the last line of the table but the hint: the turn's status came first
                showing = False
                shown = rest.split(": ", 1)[1].rpartition("|")[0].split()
                shown = [] if shown == ["empty"] else shown
                assert shown == hand, "\n".join(out.seen)        # wild cards starred in both
                if waiting is None and status.startswith("your turn: place"):
                    waiting = "place"
                elif waiting is None and status.startswith(("your turn", "your last ask")):
                    waiting = f"ask p1 for {gf.plural(shown[0].rstrip('*')[:-1])}"
                if waiting is not None:
                    moves += 1
                    await send(waiting)
            elif tag == "over":
                over = rest
                break
        assert over.startswith("game over: ") and "scripty" in over
        await send("quit")
        after = []
        while (line := await out.next()) is not None:
            after.append(line)
        assert "info bye" in after, after
        assert await proc.wait() == 0
    seen = "\n".join(out.seen)
    assert "help ask PLAYER RANK  - ask a player for every card of a rank you hold, e.g. ask p2 for 7s" in seen
    assert "info joined table" in seen and "(Go Fish Wildcard) at seat 0 as scripty" in seen
    assert "\nevent your turn: ask a player for a rank you hold\n" in seen      # dealer 2: seat 0 starts
    assert moves >= 2 and "\nok ask p1 for " in seen
    assert any(x.startswith("event bot") and " asked " in x for x in out.seen)
    assert "\nphase over" in seen


def test_selfplay_and_replay_commands(tmp_path):
    log = tmp_path / "g.wlog"
    proc = subprocess.run(WILDTABLE + ["selfplay", "go-fish-wildcard", "--players", "5", "--seed", "7", "--log", str(log),
                                       "--set", "dealer=3"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Go Fish Wildcard: 5 players, seed 7") and "winner" in proc.stdout
    proc = subprocess.run(WILDTABLE + ["replay", str(log), "--verify"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "OK - Go Fish Wildcard" in proc.stdout and "game over: yes" in proc.stdout
    proc = subprocess.run(WILDTABLE + ["replay", str(log), "--json"], capture_output=True, text=True, timeout=30)
    data = json.loads(proc.stdout)
    assert data["state"]["phase"] == "over" and data["state"]["dealer"] == 3
    assert sum(len(h) for h in data["state"]["hands"]) + 3 * len(data["state"]["sets"]) == 52
    assert data["outcome"]["scores"] == [sum(1 for s in data["state"]["sets"] if s["seat"] == i) for i in range(5)]
