"""Wild Shots over real sockets on 127.0.0.1: a whole game between `wildtable bots` and a
`wildtable play --plain` player (real subprocesses), then `wildtable replay --verify` on
its log; `wildtable play --game wild-shots --bots N`; no update showing what a seat may
not see; the turn timer; selfplay and replay from the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import trio

from wildtable.headless.games import wild_shots as P
from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.engine import state_hash
from wildtable.protocol.games import wild_shots as E
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, read_log
from wildtable.protocol.replay import initial_state, step

from proc import LineReader
from scripted import play_to_end
from serverkit import check_views, create, replay_by_seq, running_server, seated

WILDTABLE = [sys.executable, "-m", "wildtable"]
MY_TURN = re.compile(r"^event .*; (your turn|you lead)$")


async def drive_plain(proc) -> list[str]:
    """Play a `wildtable play --plain` process to the end of the game from its output
    alone: on "your turn" / "you lead" ask for the table (show), play the first card it
    may play, and once try a card it may not (the server refuses it with a reason)."""
    out = LineReader(proc.stdout, timeout=None)
    tried_illegal = False

    async def say(text: str) -> None:
        await proc.stdin.send_all((text + "\n").encode())

    while True:
        line = await out.next()
        assert line is not None, "the line-mode client stopped before the game was over:\n" + out.tail()
        if line.startswith("over "):
            await say("show")
            await say("quit")
            break
        if MY_TURN.match(line):
            await say("show")
            hand = may = None
            while may is None:
                row = await out.next()
                assert row is not None
                if row.startswith("show your hand"):
                    hand = re.findall(r"\b[KRGB]\d+\b", row.split(":", 1)[1])
                elif row.startswith("show you may play: "):
                    may = row.split(": ", 1)[1].split()
            if not tried_illegal and set(hand) - set(may):
                tried_illegal = True
                await say("play " + sorted(set(hand) - set(may))[0])
            await say("play " + may[0])
    await out.read_to_end()
    await proc.wait()
    return out.seen


async def test_whole_game_bots_and_a_line_mode_player_then_replay_verify(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "host") as host:
                table = await create(host, "wild-shots", 3)
            bots = await trio.lowlevel.open_process(
                WILDTABLE + ["bots", url, "--table", table, "--count", "2", "--delay", "0"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            player = await trio.lowlevel.open_process(
                WILDTABLE + ["play", url, "--plain", "--table", table, "--name", "script"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            try:
                seen = await drive_plain(player)
                bot_out = await LineReader(bots.stdout).read_to_end()
                await bots.wait()
            finally:
                for p in (bots, player):
                    if p.returncode is None:
                        p.kill()
            assert player.returncode == 0, "\n".join(seen[-30:])
            assert bots.returncode == 0, bot_out
            t = server.tables[table]
            assert t.finished
            live = E.outcome(t.state)
            live_hash = state_hash(E, t.state)
            path = t.logfile.path
    text = "\n".join(seen)
    # The line mode showed the game in words: the trump of each trick, the cards with their
    # symbols, the scores; it refused the off-suit card with the engine's reason.
    assert re.search(r"^flash Trump: (REVOLVER|HAT|STAR|POSTER)$", text, re.M)
    assert re.search(r"^rejected play [KRGB]\d+ :: must_follow_suit: You must follow suit", text, re.M)
    assert len(re.findall(r"^ok play [KRGB]\d+$", text, re.M)) == 40
    assert len(re.findall(r"^event round \d scored", text, re.M)) == 4
    assert "show winner" in text and re.search(r"^over game over: .* (wins|win)\b.* \(scores ", text, re.M)
    # each bot's last line: the scores by name, in seat order ("scores script 52, bot2 4, bot1 54")
    said = re.search(r"game over, scores \S+ (\d+), \S+ (\d+), \S+ (\d+);", bot_out)
    assert said and [int(x) for x in said.groups()] == list(live.scores), bot_out
    assert bot_out.count("game over") == 2
    # The log: 4 rounds of deals, 120 cards played by their players (no timer), the
    # script's 40 among them; replay --verify agrees with the live table.
    contents = read_log(path.read_bytes())
    plays = [r for r in contents.records if type(r) is ActionAccepted]
    assert len(plays) == 120 and {r.by for r in plays} == {"player"}
    assert sum(1 for r in contents.records if type(r) is ChanceRecorded and r.purpose == "deal") == 4
    proc = subprocess.run(WILDTABLE + ["replay", str(path), "--verify"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert f"final hash: {live_hash.hex()}" in proc.stdout and "game over: yes" in proc.stdout
    assert f"scores: {list(live.scores)}" in proc.stdout
    plain = subprocess.run(WILDTABLE + ["replay", str(path), "--plain"], capture_output=True, text=True, timeout=30)
    assert plain.returncode == 0, plain.stderr
    assert re.search(r"seq \d+: script: play [KRGB]\d+", plain.stdout)
    assert "Snake Oil, top first:" in plain.stdout and "winner" in plain.stdout.splitlines()[-2]


async def test_play_with_bots_in_the_line_mode_to_the_end(tmp_path):
    """`wildtable play --game wild-shots --bots 3`: a private server, three bots and you."""
    with trio.fail_after(60):
        player = await trio.lowlevel.open_process(
            WILDTABLE + ["play", "--game", "wild-shots", "--bots", "3", "--bot-delay", "0", "--plain",
                         "--name", "me", "--set", "rotate_starter=true"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            seen = await drive_plain(player)
        finally:
            if player.returncode is None:
                player.kill()
    text = "\n".join(seen)
    assert player.returncode == 0, text[-3000:]
    assert "info created table" in text and "(wild-shots, 4 seats)" in text
    assert len(re.findall(r"^ok play ", text, re.M)) == 40
    # rotate_starter: rounds 2..4 start with the seats after the first round's starter
    seat_of = {"you": 0} | {name: int(n) for name, n in re.findall(r"^info (bot\d) took seat (\d)$", text, re.M)}
    assert len(seat_of) == 4
    first = seat_of[re.search(r"^event (you|bot\d) starts? the first round", text, re.M).group(1)]
    leads = re.findall(r"^event trick 1: (you|bot\d) reveals? ", text, re.M)
    assert [seat_of[x] for x in leads] == [(first + k) % 4 for k in range(4)]


def _public_and_own(st: E.State, seat: int | None) -> set[int]:
    """Cards ``seat`` may see in state ``st``: its hand and tricks, the current and the
    most recent trick, and every trick of the round last scored."""
    out = set(st.trick)
    if st.last is not None:
        out |= set(st.last.cards)
    for w in st.tally.last_round:
        out |= set(w)
    if seat is not None:
        out |= set(st.hands[seat]) if st.hands else set()
        out |= set(st.won[seat])
    return out


def _shown(v: dict) -> set[int]:
    out = set(v.get("hand", ())) | set(v["playable"]) | {c for t in v["own_tricks"] for c in t} | {x["card"] for x in v["trick"]}
    if v["last_trick"]:
        out |= {x["card"] for x in v["last_trick"]["cards"]}
    if v["last_round"]:
        out |= {c for w in v["last_round"]["tricks"] for t in w for c in t}
    return out


def _event_cards(e: dict) -> set[int]:
    out = set()
    if isinstance(e.get("card"), int):
        out.add(e["card"])
    if isinstance(e.get("cards"), list):          # a trick's cards (snake_oil_shuffled: a count)
        out |= {x["card"] for x in e["cards"]}
    for w in e.get("won") or ():
        out |= set(w)
    return out


async def test_no_update_shows_another_hand_the_set_aside_cards_or_older_tricks(tmp_path):
    seats = 3
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "wild-shots", seats, {"first_player": 1}) as (table, conns, joined):
                logs = [[] for _ in range(seats)]
                async with connect(url, "watcher") as w:
                    await w.send(m.Spectate(table))
                    spec = [await w.receive_until(lambda x: isinstance(x, m.Spectating))]
                    async with trio.open_nursery() as n:
                        for i in range(seats):
                            n.start_soon(lambda i=i: play_to_end(conns[i], joined[i], P.choose, timeout=50, log=logs[i]))
                    while not isinstance(spec[-1], m.GameOver):
                        spec.append(await w.receive())
            contents = read_log(server.tables[table].logfile.path.read_bytes())
    log = replay_by_seq(contents)
    states = log.states
    assert E.outcome(log.final).over
    checked = 0
    for seat, msgs in [(i, logs[i]) for i in range(seats)] + [(None, spec)]:
        for u in check_views(msgs, log, seat):        # in seq order, each the engine's view
            st = states[u.seq]
            before = states[max(k for k in states if k < u.seq)]
            visible = _public_and_own(st, seat)
            assert _shown(u.view) <= visible, (seat, u.seq)
            # Where a card is now: never in another hand or set aside (the tricks of a round
            # already scored name where cards were then, not where they are now).
            now = set(u.view.get("hand", ())) | {c for t in u.view["own_tricks"] for c in t} | {x["card"] for x in u.view["trick"]}
            if u.view["last_trick"] and st.phase == "playing":
                now |= {x["card"] for x in u.view["last_trick"]["cards"]}
            hidden = set(st.aside) | {c for x in range(seats) if x != seat for c in (st.hands[x] if st.hands else ())}
            assert not now & hidden, (seat, u.seq)
            for e in u.events:
                assert _event_cards(e) <= _public_and_own(st, None) | _public_and_own(before, None), e
            checked += 1
    assert checked >= 4 * 10 * seats * seats     # every card played, seen by every player


async def test_turn_timer_plays_the_lowest_legal_card_for_an_idle_or_absent_seat(tmp_path):
    settings = {"turn_timer": 0.25, "first_player": 0}
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "wild-shots", 2, settings) as (table, (a, b), joined):
                t = server.tables[table]
                hand0 = list(E.view(t.state, 0)["hand"])
                # Nobody acts: 0.25 s after the deal the table plays seat 0's lowest card (value,
                # then id). The deal came before the joins were answered: the timer runs from the
                # table's own last activity (the server's clock is this test's: in-process), not
                # from here (on a loaded machine the answers took more than 0.05 s to come).
                start = t.core.last_activity
                assert start is not None
                u = await b.receive_until(lambda x: isinstance(x, m.Update) and x.events
                                          and x.events[0]["event"] == "card_played")
                assert trio.current_time() - start >= 0.25
                lowest = min(hand0, key=lambda c: (E.VALUE[c], c))
                assert u.events[0] == {"event": "card_played", "seat": 0, "card": lowest,
                                       "symbol": u.view["symbols"][lowest], "next": 1}
                # Seat 1 answers in time: its own card, not the timer's.
                mine = max(u.view["playable"], key=lambda c: (E.VALUE[c], c))
                await b.send(m.Intent(1, {"kind": "play", "card": mine}))
                won = await b.receive_until(lambda x: isinstance(x, m.Update) and any(
                    e["event"] == "trick_won" for e in x.events))
                # Seat 1 goes away; whoever is to move next, the timer plays on for both seats.
                await b.close()
                seen = []
                while len(seen) < 4:
                    x = await a.receive_until(lambda x: isinstance(x, m.Update))
                    seen += [e for e in x.events if e["event"] == "card_played"]
                assert {e["seat"] for e in seen} == {0, 1}
            contents = read_log(t.logfile.path.read_bytes())
    plays = [r for r in contents.records if type(r) is ActionAccepted]
    assert [(r.seat, r.by) for r in plays[:2]] == [(0, "timer"), (1, "player")]
    assert plays[1].action == {"kind": "play", "card": mine} and plays[1].intent == 1
    assert all(r.by == "timer" and r.intent is None for r in plays[2:6])
    assert won.events[-1]["event"] == "snake_oil_revealed"
    # Each timer move was the lowest legal card of the seat to move, replayed from the log.
    g, s = initial_state(contents.header)
    for r in contents.records:
        if type(r) is ActionAccepted and r.by == "timer":
            legal = [a.card for a in E.legal_actions(s, r.seat)]
            assert r.action["card"] == min(legal, key=lambda c: (E.VALUE[c], c))
        s = step(g, s, r)


def test_selfplay_and_replay_from_the_command_line(tmp_path):
    log = tmp_path / "ws.wlog"
    sp = subprocess.run(WILDTABLE + ["selfplay", "wild-shots", "--players", "3", "--seed", "5", "--set",
                                     "rotate_starter=true", "--log", str(log)], capture_output=True, text=True,
                        timeout=30)
    assert sp.returncode == 0, sp.stderr
    lines = sp.stdout.splitlines()
    assert lines[0] == "Wild Shots: 3 players, seed 5, 129 records"
    rows = [x.split() for x in lines if re.match(r"^[1-4] ", x)]          # one row of penalties per round
    total = next(x.split()[1:] for x in lines if x.startswith("total"))
    assert len(rows) == 4 and [sum(int(r[i + 1]) for r in rows) for i in range(3)] == [int(x) for x in total]
    ver = subprocess.run(WILDTABLE + ["replay", str(log), "--verify"], capture_output=True, text=True, timeout=30)
    assert ver.returncode == 0 and "game over: yes" in ver.stdout, ver.stderr
    js = subprocess.run(WILDTABLE + ["replay", str(log), "--json"], capture_output=True, text=True, timeout=30)
    state = json.loads(js.stdout)
    assert state["game"] == "wild-shots" and state["outcome"]["over"]
    assert state["outcome"]["scores"] == [int(x) for x in total]
    assert state["state"]["rules"]["rotate_starter"] is True
    # a wrong setting is a clear refusal, not a traceback
    bad = subprocess.run(WILDTABLE + ["selfplay", "wild-shots", "--players", "5"], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 2 and "2 to 4 players" in bad.stderr
