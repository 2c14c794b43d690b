"""The client without a screen: what the terminal client and the server both need,
with no UI (no rich, no Textual: docs/ARCHITECTURE.md, "Layers"; tests/test_layers.py).
The server runs its bots from here and replays logs with the timeline; client/ draws it.

    net.py, wire.py   the connection (the only use of the WebSocket library is in wire.py)
    core.py           ClientCore: the connection layer (reconnect + rejoin, redirects), Trio
    reducer.py        the pure core: server messages -> the mirror, typed notices, effects
    notices.py        typed notices (one class per kind of news; their words made here)
    commands.py       typed commands from the words a player types; completion
    reasons.py        why a connection failed, in words;  words.py: shared text helpers
    games/            one module per game: commands, completion, text table, events, bot
    bots.py           bots: a ClientCore driven by a game module's strategy
    mind.py           a bot's decisions without I/O (memory, waits, plays), shared by bots and arena
    match.py          one whole game between bots offline, in simulated time (the arena, tests)
    tally.py          means and confidence intervals for the arena's figures
    levels.py         bot levels: reaction times and how well a bot plays
    seats.py          seat tokens kept between runs
    timeline.py       a log stepped through, record by record, as any seat (replay viewers)
"""
