"""Can a person play Run Wild against the bots? A scripted player at a person's pace
against three bots at each level (issue 15).

    .venv/bin/python bench/bots_pace.py [--levels easy,normal,hard] [--games 12] [--rounds 2]
                                        [--parallel 12] [--pace 2,3] [--seed 1] [--json FILE]

A server runs in this process (127.0.0.1, a free port, a temporary data dir); every
player is a client over a real WebSocket. Per game: a table with ``rounds=R``, the
scripted player at seat 0 and three bots (headless/bots.py, ``--level``) at the others.

The scripted player acts like a person typing: it looks at the table, decides, and
takes 2 to 3 s (``--pace``) to type the command, which is sent as decided (the table may
have changed meanwhile: the round may be over). It decides as a simple player would from
what its seat sees: the engine's own ``legal_actions`` (run on a table made of its view:
its hand, its pile's size, the melds), preferring the longest meld, then a number card
added to a meld, a swap, a draw, a Draw-3, a wild added to a meld, "stuck"; it never
takes cards from melds. With nothing to do it looks again after the same time.

Per level it prints: games; the scripted player's wins and win rate; the rounds it took
part in (at least one play accepted in the round it was decided in) of the rounds it was
dealt into; its commands that reached the server after their round had ended; the
round length (Go! to the round's end, as the player saw it) p10/p50/p90; the Draw-3s
played at it within 15 s of a Go!, per round; its mean score per round against the bots'
mean; the bots' reaction times p50 (what they chose). No figure is a test.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import sys
import tempfile
import time

import trio

from wildtable.headless.bots import Bot
from wildtable.headless.levels import LEVELS
from wildtable.headless.net import Mirror, connect
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.games import run_wild as rw
from wildtable.server.app import Server
from wildtable.server.config import ServerConfig

EARLY = 15.0        # seconds after Go! in which a Draw-3 at the player counts as "early"
GAME_TIMEOUT = 3600.0


# ------------------------------------------------------------------ the scripted player's choice

def view_state(view: dict) -> rw.State:
    """A Run Wild table made of one seat's view, for the engine's ``legal_actions``: that
    seat's hand, a pile of its size (stand-in cards: legal_actions only counts it), the
    melds with their ids, every seat's flags. Other hands are empty: the seat cannot see them."""
    seat = view["seat"]
    players = view["players"]
    n = len(players)
    hand = list(view.get("hand") or ())
    used = set(hand) | {c for meld in view.get("melds") or () for c in meld["cards"]}
    spare = [c for c in range(rw.DECK_SIZE) if c not in used][:view.get("pile", 0)]
    in_round = tuple(bool(p.get("in_round", True)) for p in players)
    deal = rw.Deal(view.get("round", 1), view.get("dealer", 0), tuple(s for s in range(n) if in_round[s]),
                   in_round, tuple(tuple(spare) if s == seat else () for s in range(n)))
    melds = tuple(rw.TableMeld(md["id"], md["kind"], tuple(md["cards"]), tuple(md["values"]),
                               sum(1 << c for c in md["cards"])) for md in view.get("melds") or ())
    totals = tuple(view.get("totals") or (0,) * n)
    return rw.State(
        n, rw.Rules(**view["settings"]), deal, view["phase"],
        tuple(sum(1 << c for c in hand) if s == seat else 0 for s in range(n)), (0,) * n,
        melds, max((md.id for md in melds), default=0) + 1,
        tuple(tuple(p.get("draw3s") or ()) for p in players),
        tuple(bool(p.get("stuck")) for p in players), tuple(bool(p.get("ready")) for p in players),
        rw.Scores((), totals, None, None, (), ()),
    )


def _rank(action) -> tuple:
    if isinstance(action, rw.PlayMeld):
        return (0, -len(action.cards))
    if isinstance(action, rw.Add):
        return (1 if action.card < rw.FIRST_WILD else 5, 0)
    order = {rw.Ready: 0, rw.Swap: 2, rw.Draw: 3, rw.PlayDraw3: 4, rw.Stuck: 6}
    return (order.get(type(action), 9), 0)


def simple_choice(view: dict) -> dict | None:
    """What a simple player does now (an action map), or None (nothing to do)."""
    if view.get("seat") is None or view.get("phase") not in ("ready", "playing"):
        return None
    acts = [a for a in rw.legal_actions(view_state(view), view["seat"]) if not isinstance(a, rw.Take)]
    if not acts:
        return None
    return to_data(min(acts, key=_rank))


# ------------------------------------------------------------------ one game

class Game:
    """What the scripted player saw of one game."""

    def __init__(self):
        self.started: dict[int, float] = {}     # round -> when Go! reached the player
        self.lengths: list[float] = []
        self.dealt_in: set[int] = set()         # rounds the player was dealt into
        self.played_in: set[int] = set()        # rounds with at least one play of its accepted
        self.early_draw3s = 0
        self.scores: list[int] = []             # the player's score per round
        self.bot_scores: list[int] = []
        self.won = False
        self.over: m.GameOver | None = None
        self.actions = 0
        self.rejected: dict[str, int] = {}      # refusals of its commands, by code
        self.late = 0                           # commands decided in one round that arrived after it
        self.ended_by: dict[str, int] = {}      # how rounds ended: "out", "all_stuck", "idle_timeout"
        self.out_by_player = 0                  # rounds the player went out in


async def scripted_player(url: str, rounds: int, pace: tuple[float, float], rng: random.Random,
                          game: Game, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    async with connect(url, "you") as conn:
        await conn.send(m.CreateTable(rw.NAME, 4, {"rounds": rounds}))
        created = await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
        if isinstance(created, m.Error):
            raise RuntimeError(f"cannot create a table: {created.code}: {created.message}")
        await conn.send(m.Join(created.table, 0))
        joined = await conn.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
        if isinstance(joined, m.Error):
            raise RuntimeError(f"cannot join: {joined.code}: {joined.message}")
        mirror = Mirror()
        mirror.absorb(joined)
        task_status.started(created.table)
        sent: dict[int, tuple[int, str]] = {}     # intent -> (round, kind)
        answers: dict[int, int | None] = {}       # intent -> the seq it was accepted at (None: refused)
        changed = trio.Event()

        async def read() -> None:
            nonlocal changed
            while mirror.over is None:
                msg = await conn.receive()
                mirror.absorb(msg)
                changed.set()
                changed = trio.Event()
                now = trio.current_time()
                if isinstance(msg, m.Update):
                    for ev in msg.events:
                        e = ev.get("event")
                        if e == "round_started":
                            r = ev["round"]
                            game.started[r] = now
                            if mirror.view["players"][0].get("in_round", True):
                                game.dealt_in.add(r)
                        elif e == "round_ended" and ev["round"] in game.started:
                            game.lengths.append(now - game.started[ev["round"]])
                            why = ev.get("reason") or "?"
                            game.ended_by[why] = game.ended_by.get(why, 0) + 1
                            sc = ev.get("scores") or ()
                            if sc and sc[0] is not None:
                                game.scores.append(sc[0])
                            game.bot_scores += [x for x in sc[1:] if x is not None]
                        elif e == "player_out" and ev.get("seat") == 0:
                            game.out_by_player += 1
                        elif e == "draw3_played" and ev.get("seat") != 0:
                            r = mirror.view.get("round")
                            if r in game.started and now - game.started[r] < EARLY and (ev.get("drawn") or [0])[0]:
                                game.early_draw3s += 1
                elif isinstance(msg, m.Accepted):
                    answers[msg.intent] = msg.seq
                    r, kind = sent.pop(msg.intent, (None, None))
                    if r is not None and r != mirror.view.get("round"):
                        game.late += 1
                    elif r is not None and kind != "ready":
                        game.played_in.add(r)
                elif isinstance(msg, m.Rejected):
                    answers[msg.intent] = None
                    sent.pop(msg.intent, None)
                    game.rejected[msg.code] = game.rejected.get(msg.code, 0) + 1
                    game.late += msg.code == "round_over"
            game.over = mirror.over
            game.won = 0 in mirror.over.winners

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            iid = 0
            while mirror.over is None:
                action = simple_choice(mirror.view)         # what it sees now
                decided_in = mirror.view.get("round")
                await trio.sleep(rng.uniform(*pace))        # ... and the time it takes to type it
                if mirror.over is not None:
                    break
                if action is None:
                    continue
                iid += 1
                sent[iid] = (decided_in, action["kind"])
                game.actions += 1
                await conn.send(m.Intent(iid, action))
                # a person sees what came of a command before deciding the next one
                while mirror.over is None and (iid not in answers or (answers[iid] or 0) > mirror.seq):
                    await changed.wait()
            nursery.cancel_scope.cancel()


async def one_game(url: str, level: str, rounds: int, pace, seed: int, opening: trio.Lock,
                   delay: float | None = None) -> tuple[Game, list[Bot]]:
    game = Game()
    bots: list[Bot] = []
    with trio.fail_after(GAME_TIMEOUT):
        async with trio.open_nursery() as nursery:
            async with opening:     # one table waits for players at a time (servers cap waiting tables)
                table = await nursery.start(scripted_player, url, rounds, pace, random.Random(seed), game)
                for i in range(3):
                    bot = Bot(url, table, f"{level}{i + 1}", level=level, delay=delay, verbose=False,
                              rng=random.Random(seed * 10 + i + 1))
                    bots.append(bot)
                    await nursery.start(bot.run)
    return game, bots


# ------------------------------------------------------------------ figures

def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def summarize(level: str, results: list[tuple[Game, list[Bot]]]) -> dict:
    games = [g for g, _ in results]
    waits = [w for _, bots in results for b in bots for w in b.waits]
    dealt = sum(len(g.dealt_in) for g in games)
    played = sum(len(g.played_in & g.dealt_in) for g in games)
    lengths = [x for g in games for x in g.lengths]
    wins = sum(g.won for g in games)
    return {
        "level": level, "games": len(games), "wins": wins, "win_rate": wins / len(games) if games else 0.0,
        "rounds_dealt_in": dealt, "rounds_played_in": played,
        "round_p10": pct(lengths, 0.1), "round_p50": pct(lengths, 0.5), "round_p90": pct(lengths, 0.9),
        "early_draw3s_per_round": sum(g.early_draw3s for g in games) / max(1, dealt),
        "player_score_per_round": statistics.mean([s for g in games for s in g.scores] or [0]),
        "bot_score_per_round": statistics.mean([s for g in games for s in g.bot_scores] or [0]),
        "bot_reaction_p50": pct(waits, 0.5), "bot_reaction_min": min(waits, default=float("nan")),
        "player_actions": sum(g.actions for g in games),
        "player_rejected": {k: sum(g.rejected.get(k, 0) for g in games)
                            for k in sorted({k for g in games for k in g.rejected})},
        "player_late": sum(g.late for g in games),
        "rounds_player_went_out": sum(g.out_by_player for g in games),
        "rounds_ended_by": {k: sum(g.ended_by.get(k, 0) for g in games)
                            for k in sorted({k for g in games for k in g.ended_by})},
    }


def print_table(rows: list[dict], args) -> None:
    print(f"\nscripted player (an action every {args.pace[0]:g}-{args.pace[1]:g} s) against 3 Run Wild bots"
          f"{'' if args.delay is None else f' (--delay {args.delay:g})'}; {args.rounds} round(s) a game")
    head = (f"{'level':<7} {'games':>5} {'wins':>5} {'win rate':>8} {'rounds played in':>17} "
            f"{'round p10/p50/p90 s':>20} {'early D3/round':>14} {'score/round you|bots':>20} {'bot react p50':>13}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['level']:<7} {r['games']:>5} {r['wins']:>5} {r['win_rate']:>8.0%} "
              f"{str(r['rounds_played_in']) + ' of ' + str(r['rounds_dealt_in']):>17} "
              f"{r['round_p10']:>6.1f}/{r['round_p50']:>5.1f}/{r['round_p90']:>5.1f} "
              f"{r['early_draw3s_per_round']:>14.2f} "
              f"{r['player_score_per_round']:>9.1f} | {r['bot_score_per_round']:>6.1f} "
              f"{r['bot_reaction_p50']:>12.2f}s")
    for r in rows:
        ended = ", ".join(f"{k} {v}" for k, v in r["rounds_ended_by"].items())
        print(f"{r['level']}: rounds ended by {ended}; the scripted player went out in "
              f"{r['rounds_player_went_out']}; its commands {r['player_actions']}, refused "
              f"{sum(r['player_rejected'].values())} ({', '.join(f'{k} {v}' for k, v in r['player_rejected'].items()) or '-'}), "
              f"{r['player_late']} of them after the round they were typed in had ended; "
              f"bots' quickest reaction {r['bot_reaction_min']:.2f} s; {r['seconds']:.0f} s")


async def run(args) -> list[dict]:
    logging.getLogger("wildtable.server").setLevel(logging.WARNING)
    rows = []
    with tempfile.TemporaryDirectory(prefix="wildtable-bench-") as data_dir:
        server = Server(ServerConfig(data_dir=data_dir, durability="batch", max_per_address=0))
        async with trio.open_nursery() as nursery:
            port = await nursery.start(server.run, "127.0.0.1", 0)
            url = f"ws://127.0.0.1:{port}"
            opening = trio.Lock()

            async def one_level(level: str) -> None:
                # the levels play at the same time: the players mostly wait
                t0 = time.monotonic()
                results: list = []
                limit = trio.CapacityLimiter(args.parallel)

                async def play(k: int) -> None:
                    async with limit:
                        results.append(await one_game(url, level, args.rounds, args.pace,
                                                      args.seed * 1000 + k, opening, args.delay))

                async with trio.open_nursery() as games:
                    for k in range(args.games):
                        games.start_soon(play, k)
                row = summarize(level, results)
                row["seconds"] = time.monotonic() - t0
                rows.append(row)
                print(f"{level}: {row['games']} games, {row['wins']} won by the scripted player, "
                      f"{row['seconds']:.0f} s", file=sys.stderr, flush=True)

            async with trio.open_nursery() as levels:
                for level in args.levels:
                    levels.start_soon(one_level, level)
            rows.sort(key=lambda r: LEVELS.index(r["level"]))
            await server.shutdown("bench done")
            nursery.cancel_scope.deadline = trio.current_time() + 5
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", default=",".join(LEVELS), help="comma-separated levels (default all)")
    p.add_argument("--games", type=int, default=12, help="games per level (default 12)")
    p.add_argument("--rounds", type=int, default=2, help="rounds per game (the table setting; default 2)")
    p.add_argument("--parallel", type=int, default=12, help="tables played at once per level (default 12)")
    p.add_argument("--pace", default="2,3", help="the scripted player's seconds between actions: MIN,MAX")
    p.add_argument("--delay", type=float, default=None, help="the bots' fixed reaction time, as "
                   "`wildtable play --bot-delay` (default: the level's)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None, help="also write the figures here")
    args = p.parse_args()
    args.levels = [x.strip() for x in args.levels.split(",") if x.strip()]
    if bad := [x for x in args.levels if x not in LEVELS]:
        p.error(f"no level {bad[0]!r}; choose from {', '.join(LEVELS)}")
    args.pace = tuple(float(x) for x in args.pace.split(","))
    rows = trio.run(run, args)
    print_table(rows, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items()}, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
