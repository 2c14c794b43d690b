"""The terminal client's UI: the only package that imports rich and Textual
(docs/ARCHITECTURE.md, "Layers"). What it shows comes from wildtable.headless (the
connection, the mirror, the games' commands and bots, the replay timeline), which the
server uses too.

    tui.py            the full-screen UI (Textual hosting the Trio core in guest mode)
    screens/          one module per game: its table, coloured (rich Text)
    plain.py          the line mode (--plain)
    session.py        how `wildtable play` starts (private server for play alone, bots, table)
    viewer.py         `wildtable replay LOG`: step through a log, as any seat or all-seeing
    play.py           `wildtable play` itself
"""
