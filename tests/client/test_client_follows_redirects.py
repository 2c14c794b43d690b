"""Our clients follow a cluster's `redirect` by themselves (docs/PROTOCOL.md, "Clusters"):
they connect to the node named, say hello with the same name and send the message again
(a `create_table` with `here: true`), at most 3 times for one message; seat tokens stay
under the URL the player gave; a dropped connection goes back to the node, then to the
given URL, then to the nodes of the last `welcome`.

The node that redirects is a tiny real WebSocket server on 127.0.0.1 (server/wire.py's
listener, a script of answers); where the redirect leads is a real wildtable server."""

from __future__ import annotations

import os
import sys

import trio

from wildtable.headless.bots import Bot
from wildtable.headless.core import ClientCore, Notice
from wildtable.headless.net import connect
from wildtable.headless.seats import SeatBook
from wildtable.protocol import messages as m
from wildtable.protocol.codec import MAX_FRAME
from wildtable.server import wire

from serverkit import create, running_server
from waitkit import wait_until

REDIRECTED = (m.CreateTable, m.Join, m.Rejoin, m.Spectate, m.SeatBots)


class TinyNode:
    """A node of a pretend cluster: welcome (with ``nodes``), an empty lobby, and a
    redirect to ``to`` (itself if None) for every message a node may send elsewhere;
    or, with ``create_here``, a table made here for a create_table."""

    def __init__(self, *, to: str | None = None, nodes: tuple[str, ...] = (), create_here: bool = False):
        self.to, self.nodes, self.create_here = to, nodes, create_here
        self.seen: list = []
        self.url = ""

    async def handler(self, peer: wire.Peer) -> None:
        while True:
            msg = m.MESSAGES.decode_bytes(await peer.receive(), MAX_FRAME)
            self.seen.append(msg)
            if isinstance(msg, m.Hello):
                reply = m.Welcome(m.PROTOCOL_VERSION, "tiny node", MAX_FRAME, 20.0, self.nodes)
            elif isinstance(msg, m.CreateTable) and self.create_here:
                reply = m.TableCreated("t-here", msg.game, msg.seats, msg.settings)
            elif isinstance(msg, REDIRECTED):
                reply = m.Redirect(self.to or self.url, msg.TAG, getattr(msg, "table", None), "served by another node")
            else:
                reply = m.TableList()
            await peer.send(m.encode(reply))


async def _node(nursery: trio.Nursery, node: TinyNode) -> trio.CancelScope:
    """Start ``node`` on a free port (its url set); the scope that stops it."""
    scope = trio.CancelScope()

    async def run(task_status=trio.TASK_STATUS_IGNORED):
        with scope:
            await wire.serve(node.handler, "127.0.0.1", 0, task_status=task_status)

    port = await nursery.start(run)
    node.url = f"ws://127.0.0.1:{port}"
    return scope


async def _until(notes: list, what: str) -> Notice:
    return await wait_until(lambda: next((n for n in notes if what in n.text), None), timeout=20,
                            what=f"a notice saying {what!r}", show=lambda: [n.text for n in notes[-5:]])


async def test_a_join_is_followed_to_its_node_and_the_token_kept_under_the_given_url(tmp_path):
    async with running_server(tmp_path / "data") as (server, real), trio.open_nursery() as nursery:
        async with connect(real, "bob") as bob:
            table = await create(bob, "go-wild", 2)
        entry = TinyNode(to=real, nodes=(real,))
        await _node(nursery, entry)
        notes: list[Notice] = []
        book = SeatBook()
        core = ClientCore(entry.url, "ann", notes.append, seat_book=book)
        await nursery.start(core.run)
        joined = await core.join(table)
        assert isinstance(joined, m.Joined) and joined.table == table, joined
        assert [type(x) for x in entry.seen] == [m.Hello, m.Join]
        await _until(notes, f"connected to {real}")
        # the token is kept under the URL the player gave, not the node's
        assert book.find(entry.url, table, "ann") == (joined.seat, joined.token)
        assert book.find(real, table, "ann") is None
        # the same for a bot, which goes through the same client core
        bot = Bot(entry.url, table, "bot1", delay=0.05, verbose=False)
        seat = await nursery.start(bot.run)
        assert seat == 1 - joined.seat
        nursery.cancel_scope.cancel()


async def test_a_redirected_create_table_is_sent_again_with_here():
    async with trio.open_nursery() as nursery:
        there = TinyNode(create_here=True)
        await _node(nursery, there)
        entry = TinyNode(to=there.url)
        await _node(nursery, entry)
        core = ClientCore(entry.url, "ann")
        await nursery.start(core.run)
        created = await core.create("go-wild", 2)
        assert isinstance(created, m.TableCreated) and created.table == "t-here", created
        [asked] = [x for x in entry.seen if isinstance(x, m.CreateTable)]
        [again] = [x for x in there.seen if isinstance(x, m.CreateTable)]
        assert (asked.here, again.here) == (False, True)
        assert again == m.CreateTable("go-wild", 2, {}, "", here=True)
        assert [type(x) for x in there.seen] == [m.Hello, m.CreateTable]
        nursery.cancel_scope.cancel()


async def test_after_three_redirects_of_one_message_the_client_stops_and_says_so():
    async with trio.open_nursery() as nursery:
        loop = TinyNode()               # sends everything back to itself
        await _node(nursery, loop)
        notes: list[Notice] = []
        core = ClientCore(loop.url, "ann", notes.append)
        await nursery.start(core.run)
        reply = await core.join("t1")
        assert isinstance(reply, m.Error) and reply.code == "too_many_redirects", reply
        assert reply.message == (f"the server sent join on to another node 3 times (the last: {loop.url}); "
                                 "the cluster may be moving the table: try again in a moment")
        assert sum(isinstance(x, m.Join) for x in loop.seen) == 4      # the first and three hops
        assert any(n.kind == "error" and "too_many_redirects" in n.text for n in notes)
        nursery.cancel_scope.cancel()


async def test_a_dropped_connection_goes_to_the_node_first_then_to_welcome_nodes(tmp_path):
    async with running_server(tmp_path / "data") as (server, real), trio.open_nursery() as nursery:
        async with connect(real, "bob") as bob:
            table = await create(bob, "go-wild", 2)
        entry = TinyNode(to=real, nodes=(real,))
        stop_entry = await _node(nursery, entry)
        notes: list[Notice] = []
        core = ClientCore(entry.url, "ann", notes.append)
        await nursery.start(core.run)
        joined = await core.join(table)
        assert isinstance(joined, m.Joined)
        # the node drops the connection: the client goes back to the node (not the entry)
        # and takes its seat back there
        hellos = sum(isinstance(x, m.Hello) for x in entry.seen)
        [theirs] = [c for c in server.connections if c.name == "ann"]
        theirs.close_soon(1012, "table moved")
        await _until(notes, f"connection back: reconnected to {real}")
        await _until(notes, f"back at table {table} (seat {joined.seat})")
        assert sum(isinstance(x, m.Hello) for x in entry.seen) == hellos
        # the entry goes away; a client that was on it moves to a node of its welcome
        stop_entry.cancel()
        notes2: list[Notice] = []
        entry2 = TinyNode(nodes=(real,))
        stop_entry2 = await _node(nursery, entry2)
        other = ClientCore(entry2.url, "cy", notes2.append)
        await nursery.start(other.run)
        stop_entry2.cancel()
        await _until(notes2, f"connection back: reconnected to {real}")
        assert other.online
        tables = await other.list_tables()
        assert any(t["table"] == table for t in tables.tables)
        nursery.cancel_scope.cancel()


async def test_wildtable_play_follows_a_redirect_by_itself(tmp_path):
    async with running_server(tmp_path / "data") as (server, real), trio.open_nursery() as nursery:
        async with connect(real, "bob") as bob:
            table = await create(bob, "go-wild", 2)
        entry = TinyNode(to=real)
        await _node(nursery, entry)
        with trio.fail_after(60):
            play = await trio.run_process([sys.executable, "-m", "wildtable", "play", entry.url, "--plain",
                                           "--name", "ann", "--table", table], stdin=b"", capture_stdout=True,
                                          capture_stderr=True, check=False, env=dict(os.environ))
        out = play.stdout.decode()
        assert f"joined table {table}" in out, (out, play.stderr.decode())
        assert [type(x) for x in entry.seen] == [m.Hello, m.Join]
        nursery.cancel_scope.cancel()
