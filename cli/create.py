"""`wildtable create URL GAME`: create a table on the server (the node of a cluster) at
URL and print its id, for an operator or a script (docs/OPERATING.md). The table is made
on that very node (``create_table`` with ``here``: a cluster does not place it elsewhere
unless that node is full) and waits for players as any new table does: nobody at it for
`serve --waiting-expiry` seconds, it expires."""

from __future__ import annotations

import sys

import trio

CREATE_TIMEOUT = 15.0       # seconds for the server to answer


async def _create(url: str, game: str, seats: int, settings: dict, name: str):
    from wildtable.headless.net import connect
    from wildtable.protocol import messages as m

    with trio.fail_after(CREATE_TIMEOUT):
        async with connect(url, "wildtable-create") as conn:
            await conn.send(m.CreateTable(game, seats, settings, name, here=True))
            return await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error, m.Redirect)))


def create_main(args) -> int:
    from wildtable.headless.reasons import is_network_error
    from wildtable.headless.reasons import reason as _reason
    from wildtable.headless.net import url_problem
    from wildtable.protocol import messages as m
    from wildtable.protocol.engine import game as find_game

    from .cli import parse_settings

    if bad := url_problem(args.url):
        print(f"wildtable create: {bad}", file=sys.stderr)
        return 2
    try:
        game = find_game(args.game)
    except Exception as e:
        print(f"wildtable create: {e}", file=sys.stderr)
        return 2
    seats = args.seats if args.seats is not None else game.MIN_PLAYERS
    try:
        answer = trio.run(_create, args.url, args.game, seats, parse_settings(args.set), args.name)
    except trio.TooSlowError:
        print(f"wildtable create: {args.url} did not answer within {CREATE_TIMEOUT:g} s", file=sys.stderr)
        return 1
    except Exception as e:
        if not is_network_error(e):
            raise
        print(f"wildtable create: cannot connect to {args.url}: {_reason(e)}", file=sys.stderr)
        return 1
    if isinstance(answer, m.TableCreated):
        print(answer.table, flush=True)
        return 0
    if isinstance(answer, m.Redirect):
        print(f"wildtable create: that node is full; it sends new tables to {answer.url}: create it there",
              file=sys.stderr)
        return 1
    print(f"wildtable create: refused ({answer.code}): {answer.message}", file=sys.stderr)
    return 1
