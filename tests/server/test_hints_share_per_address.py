"""One address may have at most HINT_PER_ADDRESS (8) of the server's waiting hints
(server/hints.py; 32 wait at most in all, one per connection): one address with many
seated connections asking hint after hint kept every other player's hint refused
(`busy`). Over its share the address is told so; another address still gets its hint;
the share is given back as each answer goes out."""

from __future__ import annotations

import trio

from wildtable.protocol import messages as m
from wildtable.server import hints

from hintkit import Spy, StandInConn, StandInServer, dealt
from waitkit import busy_until, wait_until

A, B = "198.51.100.7", "203.0.113.1"


async def test_one_address_has_its_share_of_the_waiting_hints_and_another_gets_its_own(tmp_path):
    server = StandInServer()
    h = hints.hints_of(server)
    gate = tmp_path / "go"
    state = dealt(list(range(40)))
    answers: list = []

    async def ask(address: str) -> None:
        answers.append(await hints.answer(StandInConn(Spy(state, 0), 0, server, address)))

    try:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for _ in range(hints.HINT_SEARCHES):        # every search process held
                    nursery.start_soon(h.run, busy_until, str(gate))
                await wait_until(lambda: h.limiter.borrowed_tokens == hints.HINT_SEARCHES,
                                 what="both search processes busy")
                for _ in range(hints.HINT_PER_ADDRESS):     # A's share, from as many connections
                    nursery.start_soon(ask, A)
                await wait_until(lambda: h.held.of(A) == hints.HINT_PER_ADDRESS, what="A's hints waiting")
                try:
                    await hints.answer(StandInConn(Spy(state, 0), 0, server, A))
                    raise AssertionError("a hint over the address's share was taken")
                except hints.IllegalAction as e:
                    assert e.code == "busy", e
                    assert e.reason.startswith(f"{hints.HINT_PER_ADDRESS} hints for your address are being worked "
                                               "out already"), e.reason
                    assert "ask again once one of them is answered" in e.reason, e.reason
                nursery.start_soon(ask, B)                  # another address: in the line
                await wait_until(lambda: h.held.of(B) == 1, what="B's hint waiting")
                assert h.held.total == hints.HINT_PER_ADDRESS + 1
                gate.touch()                                # the processes are free again
        assert len(answers) == hints.HINT_PER_ADDRESS + 1
        assert all(isinstance(a, m.HintGiven) and a.moves for a in answers), answers
        assert h.held.by_address == {} and h.held.total == 0        # every share given back
        answers.clear()
        await ask(A)                                        # and A asks again
        assert isinstance(answers[0], m.HintGiven)
    finally:
        gate.touch()
        server.stop()
