"""The arena's figures for the bots as they were before issue 31, beside today's.

    .venv/bin/python bench/bots_before.py GAME --seats L,L,L,L [--rotate] --games N [--seed S]
                                          [--workers W] [--json OUT]

The same games as `wildtable arena` with the same arguments (the same seeds deal the same
cards), with two of the bots' old habits put back: Go Fish Wildcard's asks in seat order,
the first of a tie taken (the lowest seat asked), and Wild Shots' bot without its memory of
the round's tricks (it forgot every trick but the last). Run `wildtable arena` with the
same arguments for the figures after. No figure is a test.
"""

from __future__ import annotations

import sys


def old_habits() -> None:
    """Put the pre-issue-31 tie-break and memory back (in this process and its workers)."""
    from wildtable.headless import games
    from wildtable.headless.games import go_fish_wildcard, wild_shots
    go_fish_wildcard.best_first = lambda items, key, rng: games.best_first(items, key, None)    # type: ignore
    del wild_shots.bot_watch


def main() -> int:
    from wildtable.arena import arena_main
    from wildtable.cli import build_parser
    old_habits()
    args = build_parser().parse_args(["arena", *sys.argv[1:]])
    print("before issue 31 (seat-order ties in Go Fish Wildcard, no trick memory in Wild Shots):")
    return arena_main(args)


if __name__ == "__main__":
    sys.exit(main())
