"""Do the server's expert bots slow everyone else's table? (server/botseats.py)

    python bench/bot_flood.py [--players 8] [--game wild-shots] [--hinters 0] [--tables 250] [--pace 2] [--seconds 20] [--repeat 2]

Runs ``wildtable serve`` (this checkout's) under bench/loadgen.py's load (Run Wild tables
of 4 bots, an action every ``--pace`` s each), twice a repeat: alone, then beside
``--players`` clients, each at a table of its own (``--game``, 4 seats) where it seats 3
bots the server runs (``seat_bots``, level expert, ``delay_ms`` 0: the most the protocol
allows, 8 such players reach the server's 24 bots; all from 127.0.0.1, so its server runs
with ``--max-bots-per-address 0``, no share per address) and plays its own seat at once at
each of its turns (a hard bot of this process, delay 0), so the expert bots search at
every one of theirs; a game that ends is followed by the next at a new table. Prints the
load's last-update p50 / p99 / max and accepted intents/s for each, and the server's
bots' plays (their seats' cards played, as the players saw them). With ``--hinters``,
that many clients of bench/hint_flood.py ask hint after hint beside them (in both halves:
the hints' own share of the search processes, then with the bots'), and the hints
answered and their mean time are printed too. Each run gets its own server and
temporary data dir.
"""

from __future__ import annotations

import argparse
import sys
import time

import trio

from beside_load import beside_load, load_args, row    # (bench/: the script's own folder is on the path)
from hint_flood import hint_flooder

from wildtable.headless import notices
from wildtable.headless.bots import Bot, BotError
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

PLAYED = ("card_played", "cards_played")        # Wild Shots', Go Wild!'s play events
SERVE_FLAGS = ("--max-bots-per-address", "0")   # its server's, besides the load's caps


class Player(Bot):
    """The player at a table of server bots: plays its own seat, counts the others' plays."""

    def __init__(self, *args, plays: list[int], **kw):
        super().__init__(*args, **kw)
        self.plays = plays

    def _on_notice(self, n) -> None:
        if isinstance(n, notices.GameEvent) and isinstance(n.event, dict) and n.event.get("event") in PLAYED \
                and n.event.get("seat") != self.seat:
            self.plays[0] += 1
        super()._on_notice(n)


async def _table(url: str, game: str, k: int) -> str:
    async with connect(url, f"botflood{k}-maker") as conn:
        await conn.send(m.CreateTable(game, 4, {}))
        return (await conn.receive_until(lambda x: isinstance(x, m.TableCreated))).table


async def _player(url: str, game: str, k: int, plays: list[int], games: list[int]) -> None:
    """Table after table until cancelled: create it, sit, seat 3 expert bots, play."""
    while True:
        table = await _table(url, game, k)
        me = Player(url, table, f"botflood{k}", delay=0.0, level="hard", verbose=False, plays=plays)
        async with trio.open_nursery() as nursery:
            try:
                await nursery.start(me.run)     # (it plays on in the nursery until the game is over)
            except BotError as e:
                raise SystemExit(f"the player could not sit: {e}") from None
            while True:
                got = await me.core.request(m.SeatBots(table, 3, "expert", 0), lambda x: isinstance(x, m.BotsSeated),
                                            quiet=True)
                if isinstance(got, m.BotsSeated):
                    break
                if got.code != "too_many_bots":     # the last game's bots not gone yet: again
                    raise SystemExit(f"seat_bots refused: {got.code}: {got.message}")
                await trio.sleep(0.2)
        games[0] += 1


def _flood(url: str, players: int, game: str, hinters: int, seconds: float) -> tuple[int, int, list[float]]:
    plays, games, hints = [0], [0], []

    async def main() -> None:
        with trio.move_on_after(seconds):
            async with trio.open_nursery() as nursery:
                for k in range(players):
                    nursery.start_soon(_player, url, game, k, plays, games)
                for k in range(hinters):
                    nursery.start_soon(hint_flooder, url, k, seconds, hints)
    trio.run(main)
    return plays[0], games[0], hints


def run(args, players: int) -> dict:
    def beside(url: str) -> tuple:
        t0 = time.monotonic()
        got = _flood(url, players, args.game, args.hinters, args.warmup + args.seconds) \
            if players or args.hinters else (0, 0, [])
        return got, time.monotonic() - t0

    # every player is 127.0.0.1: the 24 bots are over one address's share (8)
    load, ((plays, games, hints), elapsed), warnings = beside_load(args, beside, flags=SERVE_FLAGS)
    return {"players": players, **load, "bot_plays": plays, "bot_plays_per_s": plays / elapsed if players else 0.0,
            "games_over": games, "hints": len(hints), "hint_mean_ms": 1000 * sum(hints) / max(1, len(hints)),
            "warnings": warnings}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", type=int, default=8, help="players seating 3 expert bots each (8: the server's 24; "
                    "all from 127.0.0.1, so the server runs with --max-bots-per-address 0)")
    ap.add_argument("--game", default="wild-shots", help="their tables' game (wild-shots; go-wild)")
    ap.add_argument("--hinters", type=int, default=0, help="clients asking hint after hint beside them (0)")
    load_args(ap)
    ap.add_argument("--only", choices=("alone", "bots"), help="run only this half of each repeat")
    args = ap.parse_args(argv)
    print(f"{args.tables} tables x 4 players at pace {args.pace:g} s, {args.seconds:g} s measured; "
          f"last-update p50 / p99 / max ms, accepted intents/s, the expert bots' plays ({args.game})", flush=True)
    for _ in range(args.repeat):
        for k in (0, args.players):
            if args.only == ("bots" if k == 0 else "alone"):
                continue
            r = run(args, k)
            print(row(f"{k} players x 3 bots", r,
                      (f"  {r['bot_plays']} bot plays ({r['bot_plays_per_s']:.1f}/s), {r['games_over']} games over"
                       if k else "")
                      + (f"  {r['hints']} hints ({r['hint_mean_ms']:.1f} ms)" if args.hinters else "")), flush=True)
            for line in r["warnings"][:5]:      # the server's own trouble, if any
                print(f"    server: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
