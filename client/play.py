"""`wildtable play`: the full-screen UI, or the line mode with --plain (also chosen when
stdin or stdout is not a terminal, so a pipe never gets screen-control codes)."""

from __future__ import annotations

import sys

from .session import Launch


def play_main(args) -> int:
    launch = Launch.from_args(args)
    problem = launch.problem()
    if problem:
        print(f"wildtable play: {problem}", file=sys.stderr)
        return 2
    if args.plain or not (sys.stdin.isatty() and sys.stdout.isatty()):
        from .plain import plain_main
        return plain_main(launch)
    from .tui import run_tui
    return run_tui(launch)
