"""The terminal client, the bots and the replay viewer.

    net.py, wire.py   the connection (the only use of the WebSocket library is in wire.py)
    core.py           ClientCore: connection kept alive (reconnect + rejoin), mirror, commands
    games/            one module per game: commands, completion, table screen, events, bot
    tui.py            the full-screen UI (Textual hosting the Trio core in guest mode)
    plain.py          the line mode (--plain)
    bots.py           bots: a ClientCore driven by a game module's strategy
    session.py        how `wildtable play` starts (private server for play alone, bots, table)
    seats.py          seat tokens kept between runs
    viewer.py         `wildtable replay LOG`: step through a log, as any seat or all-seeing
    play.py           `wildtable play` itself
"""
