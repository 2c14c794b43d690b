"""Go Wild! over real WebSockets on 127.0.0.1: a whole game between `wildtable bots` (a real
subprocess) and a scripted client that types its commands, watched by a spectator, then
`wildtable replay --verify` and `--plain` on its log; the turn timer playing for an
absent player; and the rulebook's example trick played over the wire with the refusals
around it."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from wildtable.headless.games import Ctx
from wildtable.headless.games import go_wild as gw
from wildtable.headless.net import Mirror, connect
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import state_hash
from wildtable.protocol.games import go_wild as E
from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from proc import LineReader
from serverkit import check_views, collect_until_over, create, join, replay_by_seq, reply_to, running_server, seated

RED, YELLOW, ORANGE, BLUE, GREEN, WILD = range(6)
ENV = dict(os.environ, PYTHONUNBUFFERED="1")


def typed_choice(view: dict) -> dict | None:
    """A scripted player that types what a person would: on its turn, all of its largest
    colour ("play all blue"), or "slough" when it holds only wilds."""
    if view.get("phase") != "playing" or view.get("turn") != view.get("seat"):
        return None
    g = gw.groups(view["hand"])
    colours = [i for i in range(5) if g[i]]
    text = "slough" if not colours else "play all " + gw.NAMES[max(colours, key=lambda i: len(g[i]))]
    return gw.parse(text.split(), view)


async def play_to_the_end(conn, joined, choose, log: list) -> Mirror:
    """Play from the seat's view until game over, deciding only on the view that includes
    its own last play; every message sent or received goes to ``log`` as (time, message)."""
    mirror = Mirror()
    mirror.absorb(joined)
    inflight = None
    wait_for = 0            # the seq of our last accepted play: decide on the view after it
    iid = 0
    while mirror.over is None:
        if inflight is None and mirror.seq >= wait_for and (action := choose(mirror.view)) is not None:
            iid += 1
            inflight = iid
            intent = m.Intent(iid, action)
            log.append((trio.current_time(), intent))
            await conn.send(intent)
        msg = await conn.receive()
        log.append((trio.current_time(), msg))
        mirror.absorb(msg)
        if isinstance(msg, (m.Accepted, m.Rejected)) and msg.intent == inflight:
            assert isinstance(msg, m.Accepted), msg
            inflight, wait_for = None, msg.seq
    return mirror


async def test_whole_game_between_bots_and_a_scripted_client_then_replay_verify(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "scripty") as me, connect(url, "watcher") as watcher:
                table = await create(me, "go-wild", 3)
                joined = await join(me, table, 0)
                await watcher.send(m.Spectate(table))
                spec = await watcher.receive_until(lambda x: isinstance(x, (m.Spectating, m.Error)))
                assert isinstance(spec, m.Spectating) and "hand" not in spec.view
                seen_by_spectator: list = []

                mine: list = []
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(collect_until_over, watcher, seen_by_spectator)
                    bots = await trio.lowlevel.open_process(
                        [sys.executable, "-m", "wildtable", "bots", url, "--table", table, "--count", "2",
                         "--delay", "0.01", "--name", "rob"], stdout=subprocess.PIPE, env=ENV)
                    mirror = await play_to_the_end(me, joined, typed_choice, mine)
                    bot_out = await LineReader(bots.stdout).read_to_end()
                    assert await bots.wait() == 0
            t = server.tables[table]
            assert t.finished
            live_hash = state_hash(E, t.state)
            path = t.logfile.path
            contents = read_log(path.read_bytes())
    over = mirror.over
    assert over is not None and over.scores == tuple(E.outcome(t.state).scores)
    assert max(over.scores) >= 20 and len(over.winners) == 1 and over.scores[over.winners[0]] >= 20
    assert bot_out.count("game over") == 2 and "rob1: seat" in bot_out
    # every seat played, players (no timer): the bots and the scripted client
    acted = [r for r in contents.records if type(r) is ActionAccepted]
    assert {r.seat for r in acted} == {0, 1, 2} and {r.by for r in acted} == {"player"}
    # no update shows another seat's hand: each is exactly the engine's view for that seat
    log = replay_by_seq(contents)
    states = log.states
    checked = 0
    for who, msgs in ((0, [msg for _, msg in mine]), (None, seen_by_spectator)):
        for u in check_views(msgs, log, who):
            assert u.view.get("hand", "spectator") == (E.cards_of(states[u.seq].hands[0]) if who == 0 else "spectator")
            assert not any(isinstance(x, list) for p in u.view["players"] for x in p.values())
            before = states.get(u.seq - 1)
            for e in u.events:
                if e["event"] == "cards_played":          # the only cards in events: a play, face up
                    assert set(e["cards"]) <= set(E.cards_of(before.hands[e["seat"]]))
                else:
                    assert "cards" not in e or isinstance(e["cards"], int)
            checked += 1
    assert checked > 60
    proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(path), "--verify"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert f"final hash: {live_hash.hex()}" in proc.stdout and "game over: yes" in proc.stdout
    assert "OK - Go Wild!" in proc.stdout
    # the viewer's line mode reads the same log with the game's words
    proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(path), "--plain", "--seat", "0"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert ": scripty: play " in proc.stdout and "your hand (12): " in proc.stdout
    assert " wins trick 1 with a set of " in proc.stdout and "game over: " in proc.stdout


async def test_turn_timer_plays_the_default_move_for_an_absent_player(tmp_path):
    timer = 0.25
    with trio.fail_after(40):
        async with running_server(tmp_path / "data") as (server, url):
            settings = {"turn_timer": timer, "target": 6, "first_player": 1}
            async with seated(url, "go-wild", 2, settings) as (table, conns, joined):
                await conns[1].close()          # seat 1 drops: it keeps its seat and cards
                log: list = []
                mirror = await play_to_the_end(conns[0], joined[0], typed_choice, log)
            t = server.tables[table]
            contents = read_log(t.logfile.path.read_bytes())
    assert mirror.over is not None and t.finished
    states = replay_by_seq(contents).states
    acted = [r for r in contents.records if type(r) is ActionAccepted]
    by_timer = [r for r in acted if r.by == "timer"]
    assert {r.seat for r in by_timer} == {1} and len(by_timer) >= 3
    assert all(r.by == "player" for r in acted if r.seat == 0)
    arrived = {msg.seq: when for when, msg in log if isinstance(msg, m.Update)}
    sent = {msg.id: when for when, msg in log if isinstance(msg, m.Intent)}
    waited = 0
    for r in by_timer:
        # the default move: seat 1's lowest card alone, logged like any action
        assert r.action == to_data(E.default_play(states[r.seq - 1], 1)) and r.intent is None
        # and only once the turn had waited the whole timer (the server and this client share
        # one clock): counted from the play of ours that made it seat 1's turn
        prev = max((a for a in acted if a.seq < r.seq), key=lambda a: a.seq, default=None)
        if prev is not None and prev.seat == 0:
            assert arrived[r.seq] - sent[prev.intent] >= timer
            waited += 1
    assert waited >= 1
    # replay equals live, timer moves included
    assert replay(contents).state == t.state


def stacked_deal(hands: list[list[int]], first: int):
    """A chance source dealing ``hands`` (12 each, one at a time clockwise from ``first``)."""
    n = len(hands)
    perm = [hands[(first + i) % n][i // n] for i in range(12 * n)]
    perm += [c for c in range(E.DECK_SIZE) if c not in set(perm)]
    return lambda size: tuple(perm) if size == E.DECK_SIZE else tuple(range(size))


def pool():
    nxt = {col: col * 18 for col in range(6)}

    def take(colour: int, k: int) -> list[int]:
        start = nxt[colour]
        nxt[colour] = start + k
        return list(range(start, start + k))
    return take


async def test_rulebook_example_over_the_wire_with_turns_and_refusals(tmp_path):
    """Margaret wins trick 1 and is the Wild One; Paul wins trick 2 and leads the rulebook's
    example trick: 3 orange, a slough of 4 wilds, 6 green, then Margaret's 4 blue + 4 wild
    wins. Out-of-turn plays, a mixed set from a player who is not the Wild One and a mixed
    set with too many wilds are refused with their reasons, and change nothing."""
    c = pool()
    paul = c(YELLOW, 3) + c(ORANGE, 3) + c(RED, 6)
    anne = c(YELLOW, 3) + c(WILD, 4) + c(ORANGE, 5)
    larry = c(ORANGE, 5) + c(YELLOW, 1) + c(GREEN, 6)
    marg = c(RED, 4) + c(BLUE, 4) + c(WILD, 4)
    names = ["Paul", "Anne", "Larry", "Margaret"]
    with trio.fail_after(30):
        deck = stacked_deal([paul, anne, larry, marg], 3)
        async with running_server(tmp_path / "data", chance=deck) as (server, url):
            async with seated(url, "go-wild", 4, {"first_player": 3}, names=names) as (table, conns, joined):
                mirrors = []
                for j in joined:
                    mirrors.append(Mirror())
                    mirrors[-1].absorb(j)
                iid = 0
                events: list = []

                async def sync(seq: int) -> None:
                    for conn, mir in zip(conns, mirrors):
                        while mir.seq < seq:
                            msg = await conn.receive()
                            mir.absorb(msg)
                            if isinstance(msg, m.Update) and conn is conns[0]:
                                events.extend(msg.events)

                async def says(seat: int, text: str):
                    nonlocal iid
                    iid += 1
                    action = gw.parse(text.split(), mirrors[seat].view)
                    await conns[seat].send(m.Intent(iid, action))
                    keep: list = []
                    reply = await reply_to(conns[seat], iid, keep)
                    for msg in keep:
                        mirrors[seat].absorb(msg)
                        if isinstance(msg, m.Update) and seat == 0:
                            events.extend(msg.events)
                    if isinstance(reply, m.Accepted):
                        await sync(reply.seq)
                    return reply

                async def refused(seat: int, text: str, code: str, words: str) -> None:
                    seq = server.tables[table].seq
                    r = await says(seat, text)
                    assert isinstance(r, m.Rejected) and r.code == code and words in r.reason, r
                    assert server.tables[table].seq == seq

                await sync(1)
                assert mirrors[3].view["turn"] == 3 and mirrors[0].view["hand"] == sorted(paul)
                # Trick 1: Margaret leads; nobody is the Wild One yet
                await refused(2, "play 1 orange", "not_your_turn", "It is seat 3's turn to play, not yours (seat 2).")
                assert isinstance(await says(3, "play 3 red"), m.Accepted)
                await refused(3, "play 1 red", "not_your_turn", "not yours (seat 3)")
                assert isinstance(await says(0, "play 1 yellow"), m.Accepted)
                await refused(1, "play 1 yellow 1 wild", "not_wild_one", "Only the Wild One may mix wild cards")
                assert isinstance(await says(1, "play 1 yellow"), m.Accepted)
                assert isinstance(await says(2, "play 1 orange"), m.Accepted)
                v = mirrors[0].view
                assert v["wild_one"] == 3 and v["players"][3]["wild_one"] and v["scores"] == [0, 0, 0, 1]
                assert (v["trick_number"], v["turn"]) == (2, 3)
                # Trick 2: the Wild One may add no more wilds than colour cards; Paul wins
                await refused(3, "play 1 red 2 wild", "too_many_wilds", "at most 1 wild(s), not 2")
                for seat, text in [(3, "play 1 red"), (0, "play 2 yellow"), (1, "play 1 yellow"), (2, "play 1 yellow")]:
                    assert isinstance(await says(seat, text), m.Accepted), text
                assert mirrors[2].view["scores"] == [2, 0, 0, 1] and mirrors[2].view["turn"] == 0
                # Trick 3, the rulebook's example
                for seat, text in [(0, "play 3 orange"), (1, "slough 4"), (2, "play 6 green")]:
                    assert isinstance(await says(seat, text), m.Accepted), text
                shown = gw.render_text(mirrors[3].view, Ctx(tuple(names), 3))
                assert shown[0].endswith("your turn") and "  Larry: 6 green  <- winning" in shown
                assert isinstance(await says(3, "play 4 blue 4 wild"), m.Accepted)
    ctx = Ctx(tuple(names), 0)
    lines = [gw.describe(e, ctx) for e in events]
    example = lines[lines.index("you played 3 orange; Anne to play"):]
    assert example[:5] == ["you played 3 orange; Anne to play", "Anne sloughed 4 wild; Larry to play",
                           "Larry played 6 green; Margaret to play", "Margaret played 4 blue + 4 wild (mixed set of 8)",
                           "Margaret wins trick 3 with a set of 8: +3 (score 4)"]
    assert "round 1 over; scores: Paul 2, Anne 0, Larry 0, Margaret 4" in lines
    assert "round 2: Margaret leads; Wild One: Margaret" in lines
    final = mirrors[0].view
    assert final["round"] == 2 and final["hand_counts"] == [12, 12, 12, 12] and final["wild_one"] == 3
