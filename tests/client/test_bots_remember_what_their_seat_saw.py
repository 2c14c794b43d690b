"""Bots remember what their own seat has seen this round, and only that (issue 31;
docs/PLAYING.md "Bot levels").

Wild Shots' view shows only the current and the last trick. The hard bot used to count
as still out every card not in its hand, its own tricks or those two tricks: 35% of what
it thought unseen had been played. Its memory (``bot_watch``, fed each view its seat is
sent, as in headless/match.py) now holds every trick as it was shown. At every decision
of every seat of whole games the cards it counts as unseen must be exactly those it has
not seen: the other hands and the cards set aside. Not one fewer (a card it could only
know from another seat's view or the server's state) and not one more (a card it saw
played and forgot).
"""

from __future__ import annotations

from wildtable.headless.games import wild_shots as ws
from wildtable.headless.match import play_match
from wildtable.protocol.games.wild_shots import N_CARDS


def test_wild_shots_bots_count_as_unseen_exactly_what_their_seat_has_not_seen():
    checked = []

    def observe(state, seat, view, mind):
        if state.phase != "playing":
            return
        assert view["seat"] == seat and "hands" not in view
        played = {c for won in state.won for c in won} | set(state.trick)
        hidden = set(range(N_CARDS)) - set(state.hands[seat]) - played
        assert set(ws.unseen(view, mind.memo)) == hidden, (state.round, state.trick_no, seat)
        checked.append(state.trick_no)

    for i in range(3):
        play_match("wild-shots", ("hard", "normal", "easy", "hard"), 500 + i, 600 + i, observe=observe)
    # late tricks of a round are where forgetting showed most (64% of "unseen" was played)
    assert len(checked) > 300 and max(checked) >= 8
