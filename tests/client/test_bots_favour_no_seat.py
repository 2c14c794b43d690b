"""Four bots of one level, one per seat, favour no seat (issue 31; docs/PLAYING.md "Bot levels").

Whole games offline (headless/match.py: the real engine, each bot deciding through its
Mind from its own seat's view as the wire carries it). Go Fish Wildcard's bots used to
ask the lowest seat whenever the same rank scored alike for two players: seats 0-3
received 30.8 / 26.2 / 22.8 / 20.1% of all asks, and won 19.6 / 23.9 / 27.2 / 29.3%.
Asks received converge fast (about 43 asks a game): at 80 games a seat's share is known
to about +-2.5 points at 3.3 standard errors, so the old bias (5 points at either end)
fails here. Wins need thousands of games to show a 5-point bias (the arena measures them:
bench/README.md); here they are checked at the same 3.3 standard errors, which catches a
bot that favours a seat grossly.
"""

from __future__ import annotations

from wildtable.headless.match import play_match
from wildtable.headless.tally import mean_ci, ratio_ci

Z = 3.29            # 99.9%: four seats, two figures each, and the test must not flake
GAMES = 80


def test_go_fish_wildcard_hard_bots_ask_and_win_evenly_from_every_seat():
    played = [play_match("go-fish-wildcard", ("hard",) * 4, 7000 + i, 9000 + i) for i in range(GAMES)]
    for seat in range(4):
        share, half = ratio_ci([p.asked[seat] for p in played], [sum(p.asked) for p in played], Z)
        assert abs(share - 0.25) <= half, f"seat {seat} received {share:.1%} of the asks (+-{half:.1%})"
        wins, whalf = mean_ci([seat in p.winners and 1 / len(p.winners) or 0.0 for p in played], Z)
        assert abs(wins - 0.25) <= whalf, f"seat {seat} won {wins:.1%} of the games (+-{whalf:.1%})"


def test_a_game_is_the_same_for_the_same_seeds_and_differs_with_the_bots_seed():
    a = play_match("go-fish-wildcard", ("hard",) * 4, 1, 2)
    b = play_match("go-fish-wildcard", ("hard",) * 4, 1, 2)
    c = play_match("go-fish-wildcard", ("hard",) * 4, 1, 3)
    assert a.records == b.records
    assert a.records != c.records
