"""The reader's cost per message (issue #25; docs/ARCHITECTURE.md, "The WebSocket
layer"): a message that arrives while the reader waits costs it one task step and one
``recv``, not a step for the wake and another for a checkpoint after parsing, nor a
``recv`` that only says EAGAIN before each wait. Against wire.Peer itself on a socket
pair; the slices of a big read and a cancelled receive: tests/server/test_flood_slices.py."""

from __future__ import annotations

import socket

import trio

from wildtable.server import wire

from test_flood_slices import binary, opened_peer


class CountingSocket:
    """The peer's socket, counting its recv calls and those that found nothing."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.recvs = 0
        self.empty = 0

    def recv(self, n: int) -> bytes:
        self.recvs += 1
        try:
            return self.sock.recv(n)
        except BlockingIOError:
            self.empty += 1
            raise

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, data) -> int:
        return self.sock.send(data)


class Steps(trio.abc.Instrument):
    """Counts the task steps of one task."""

    def __init__(self) -> None:
        self.task: trio.lowlevel.Task | None = None
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.steps += 1


async def test_a_message_that_arrives_while_waiting_costs_one_step_and_one_recv():
    """Ten messages, each sent while the reader waits: ten recvs (none empty after the
    first wait) and about one task step each (the wake)."""
    peer, client = opened_peer()
    counting = CountingSocket(peer._sock)   # (the test's own Peer: its socket swapped for a counting one)
    peer._sock = counting  # type: ignore[assignment]
    steps = Steps()
    trio.lowlevel.add_instrument(steps)
    got = []
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as n:
                waiting = trio.Event()

                async def reader() -> None:
                    steps.task = trio.lowlevel.current_task()
                    for _ in range(10):
                        waiting.set()
                        got.append(await peer.receive())
                n.start_soon(reader)
                for i in range(10):
                    await waiting.wait()
                    waiting = trio.Event()
                    await trio.testing.wait_all_tasks_blocked()     # the reader waits for the socket
                    before = steps.steps
                    client.send(binary(bytes([i]) * 10))
                    while len(got) <= i:
                        await trio.lowlevel.checkpoint()
                    assert steps.steps - before == 1, f"message {i}: {steps.steps - before} steps of the reader"
    finally:
        trio.lowlevel.remove_instrument(steps)
    assert got == [bytes([i]) * 10 for i in range(10)]
    # the first receive finds the socket empty once (it has not read yet); then every
    # short read is followed by a wait for the socket, not by a recv that finds nothing
    assert counting.empty <= 1, f"{counting.empty} recvs found nothing"
    assert counting.recvs <= 11
    client.close()


async def test_every_receive_is_a_cancel_point():
    """Messages already waiting in the socket: a receive in a cancelled scope raises
    Cancelled (as trio's own receives do) and the message is still the next one."""
    peer, client = opened_peer()
    client.send(binary(b"a" * 10) + binary(b"b" * 10))
    with trio.CancelScope() as scope:
        scope.cancel()
        await peer.receive()
    assert scope.cancelled_caught, "receive returned inside a cancelled scope"
    with trio.fail_after(5):
        assert await peer.receive() == b"a" * 10
        assert await peer.receive() == b"b" * 10
    with trio.fail_after(5):
        client.close()
        try:
            await peer.receive()
        except wire.ConnectionClosed:
            pass
