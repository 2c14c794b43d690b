"""Go Fish Wildcard's ``replay_run``: a run of the log's asks folded on a working state
(engine API, optional: ``REPLAY_RUN``, protocol/engine.py).

Replay spends most of a game's steps on asks that end the turn or open a bonus (nine steps
in ten). Here they are applied to locals (the hands a list, the asks a list, the pile a
position in the dealt tuple) and the State is built once, where the run stops: at any
record that is not such an ask. That record is left to replay's fold, which applies it
through ``RAW_ADVANCE`` / ``advance`` / ``apply`` with every check and reason. So a run
takes only what ``_ask_map`` takes and gives the same state (the same checks, in the
common case only: the table in play with cards left in the pile, no forced set after the
ask, the next seat holding cards); everything else, every refusal included, is left
(tests/protocol/test_replay_run.py holds this to ``advance`` step by step). A run takes a
log's first records too (``REPLAY_RUN_TYPED``): the dealer drawn by lot and the deal
(``_dealt``), with ``check_permutation``'s checks. The rules are
``go_fish_wildcard``'s, cited there (docs/RULES.md "Go Fish Wildcard").
"""

from __future__ import annotations

from itertools import islice

from ..codec import INT_MAX
from ..logfmt import ChanceRecorded
from ..states import build
from .go_fish_wildcard import (
    ASK_ENTRY, DECK_SIZE, EMPTY_DRAW, RANK_INDEX, RANK_MASK, RANK_OF, SET_SIZE, WILD_CARDS, State, _shape,
)
from .go_fish_wildcard_fast import _SEATS, _deal, _forced


def replay_run(state: State, records: tuple, i: int, limit: int) -> tuple[State, int, int, int]:
    """Fold ``records[i:]`` from ``state`` while each is a plain action record (its map)
    that this run applies whole, or at a table waiting for its deal a chance record of it; stop at the first that is not, or whose seq is over
    ``limit``. Returns (the state, the index of the record it stopped at, the seq of the
    last record applied, how many of them were chance records); the state given if none."""
    (n, dealer, turn_timer, phase, hands, pile, wild, sets, scores, turn, step, bonus, last_order, drawer,
     history) = state
    if n not in _LAST_ORDER:
        return state, i, 0, 0
    if phase == "deal":
        # the log's first records: the dealer drawn by lot and the deal; then the asks
        dealt, j, seq, chances = _dealt(state, records, i, limit)
        if dealt.phase == "deal":
            return dealt, j, seq, chances
        after, k, seq_k, _ = replay_run(dealt, records, j, limit)
        return (after, k, seq_k, chances) if k > j else (dealt, j, seq, chances)
    play = phase == "play"
    left = len(pile)            # the pile is pile[p:], ``left`` cards
    if not (play and left or phase == "last_asks"):
        return state, i, 0, 0
    h = list(hands)
    sc = list(scores)
    asks: list = []
    record_ask = asks.append
    new_sets: list = []
    p = 0
    o = 0                       # phase "last_asks": the seats still due one are last_order[o:]
    n_order = len(last_order)
    start = i
    end = len(records)
    # the tables, as locals (a run is most of a game)
    rank_info, rank_of, bits, wild_cards, forced_sets, entries = _RANK_INFO, RANK_OF, _BITS, WILD_CARDS, _forced, ASK_ENTRY
    pairs, threes, none, width = _PAIR_BYTES, _THREE_BYTES, _NO_BYTES, len(_NO_BYTES)
    nexts = _NEXT[n]
    wc = wild_cards[wild]       # the card bits of the wild ranks (``wild`` changes only with a set)
    # A record that is not a map (a typed record), or a map that is not what the decoder
    # takes in the common shape (a missing key, an unhashable or unknown rank), raises
    # TypeError or KeyError at a lookup, before this record changed anything: the run
    # stops there and leaves it to the fold (below). A value's type is read as
    # ``__class__`` (the same for the map's plain values, read in a third of the time)
    try:
        if limit <= INT_MAX:
            # replay up to a seq (replay_prefix, upto): the run ends before the first
            # record over it
            j = i
            while j < end and not (type(records[j]) is dict and records[j]["seq"] > limit):
                j += 1
            end = j
        for r in islice(records, i, end):
            seat = r["seat"]
            # apply's checks for every player action: the seat to move (the table in play)
            if seat != turn or seat.__class__ is not int:
                break
            a = r["action"]
            if a["kind"] == "ask":
                target = a["target"]
                # what _ask_map takes (a map Ask's decoder takes: an int target, a str rank,
                # no other key) and _ask applies (not in a bonus, another seat of the table, a
                # rank the asker holds): the rank is one of RANKS, each a str of 1 or 2
                ri, rm = rank_info[a["rank"]]
                if target.__class__ is not int or target == seat or not 0 <= target < n or len(a) != 3 or step == "bonus":
                    break
                mine = h[seat]
                if not mine & rm:
                    break
                theirs = h[target]
                taken = theirs & rm
                if taken:
                    # "They hand over all cards of that rank"
                    mine |= taken
                    theirs ^= taken
                    ask = entries[seat][target][ri][taken.bit_count()]
                    drew = 0
                    reached = taken
                elif left:
                    # "go fish": the top card of the pile
                    c = pile[p]
                    b = bits[c]
                    mine |= b
                    ask = entries[seat][target][ri][5]
                    drew = 1
                    reached = b if rank_of[c] == ri else 0
                else:
                    ask = entries[seat][target][ri][0]
                    drew = reached = 0
                if (reached and play and left != drew and not wild >> ri & 1
                        and (mine & rm).bit_count() >= SET_SIZE):
                    # _bonus_open: the asked-for cards can go into a set with no wilds
                    h[target] = theirs
                    h[seat] = mine
                    p += drew
                    left -= drew
                    record_ask(ask)
                    i += 1
                    step, bonus = "bonus", reached
                    continue
                # _turn_over, as below (the ask's own copy: nine steps in ten take it):
                # _any_set's test, a set of 3 wilds, 2 and any card, 1 and a pair, or 3 of a
                # rank (a rank's four cards are a nibble, two ranks a byte: a table of the
                # bytes that hold a pair or 3 of a rank)
                wm = mine & wc
                if wm:
                    nat = mine ^ wm
                    k = wm.bit_count()
                    if k >= SET_SIZE or (k == 2 and nat):
                        forced = forced_sets(mine, wild)
                    elif nat:
                        forced = forced_sets(mine, wild) if nat.to_bytes(width, "little").translate(pairs) != none else None
                    else:
                        forced = None
                else:
                    forced = forced_sets(mine, wild) if mine.to_bytes(width, "little").translate(threes) != none else None
                if forced is None:
                    if play and left != drew:
                        # the turn passes as most do: no forced set, the asker's hand holds
                        # the asked rank, cards are left in the pile, the next seat holds cards
                        nxt = nexts[seat]
                        if not (theirs if nxt == target else h[nxt]):
                            # _begin_turn: the next seat starts empty and draws 2 (with no card
                            # left after them its turn ends at once: left to the fold)
                            if left - drew <= EMPTY_DRAW:
                                break
                            got = bits[pile[p + drew]] | bits[pile[p + drew + 1]]
                            drew += EMPTY_DRAW
                            if nxt == target:
                                theirs = got
                            else:
                                h[nxt] = got
                        p += drew
                        left -= drew
                        h[target] = theirs
                        h[seat] = mine
                        record_ask(ask)
                        i += 1
                        turn = nxt
                        step, bonus = "ask", 0
                        continue
                else:
                    mine, w, more = forced
                if play:
                    rest = left - drew
                    if rest and not mine:
                        # the empty-hand draw: 2, or what is left
                        got = rest if rest < EMPTY_DRAW else EMPTY_DRAW
                        for c in pile[p + drew:p + drew + got]:
                            mine |= bits[c]
                        drew += got
                        rest -= got
                    if rest:
                        # the turn passes: the next seat holds cards (or draws them)
                        nxt = nexts[seat]
                        if not (theirs if nxt == target else h[nxt]):
                            if rest <= EMPTY_DRAW:
                                break   # (as above)
                            got = bits[pile[p + drew]] | bits[pile[p + drew + 1]]
                            drew += EMPTY_DRAW
                            rest -= EMPTY_DRAW
                            if nxt == target:
                                theirs = got
                            else:
                                h[nxt] = got
                        p += drew
                        left = rest
                        h[target] = theirs
                        h[seat] = mine
                        record_ask(ask)
                        if forced is not None:
                            wild = w
                            wc = wild_cards[w]
                            sc[seat] += len(more)
                            for cards in more:
                                new_sets.append((seat, cards))
                        i += 1
                        turn = nxt
                        step, bonus = "ask", 0
                        continue
                    # no card left: the pile is out (_start_last_asks): every seat from the
                    # drawer's left to the drawer gets one last ask, the first that holds cards now
                    phase = "last_asks"
                    play = False
                    drawer = seat
                    last_order = _LAST_ORDER[n][seat]
                    o = 0
                    n_order = n
                    p += drew
                    left = 0
                # a last ask: the next seat of the order that holds cards now
                j = o
                nxt = -1
                while j < n_order:
                    s = last_order[j]
                    j += 1
                    if mine if s == seat else theirs if s == target else h[s]:
                        nxt = s
                        break
                o = j
                h[target] = theirs
                h[seat] = mine
                record_ask(ask)
                if forced is not None:
                    wild = w
                    wc = wild_cards[w]
                    sc[seat] += len(more)
                    for cards in more:
                        new_sets.append((seat, cards))
                i += 1
                if nxt < 0:
                    # nobody is due a last ask and holds cards: the game is over, and so is the run
                    phase, turn, step, bonus, last_order, o = "over", None, "", 0, (), 0
                    break
                turn = nxt
                step, bonus = "ask", 0
                continue
            mine = h[seat]
            placed = None
            w = wild
            kind = a["kind"]
            if kind == "place":
                cards = a["cards"]
                # what _place_map takes (a list of card ids, no other key) and _place applies
                # (3 different cards from the hand that make a set)
                if len(a) != 2 or cards.__class__ is not list or len(cards) != SET_SIZE:
                    break
                x, y, z = cards
                if (x.__class__ is not int or y.__class__ is not int or z.__class__ is not int or x == y or y == z or x == z
                        or not (0 <= x < DECK_SIZE and 0 <= y < DECK_SIZE and 0 <= z < DECK_SIZE)
                        or not (mine >> x & 1 and mine >> y & 1 and mine >> z & 1)):
                    break
                ok, _, nw = _shape((x, y, z), wild)
                if not ok:
                    break
                earned = step == "bonus" and nw == 0 and (bonus >> x & 1 or bonus >> y & 1 or bonus >> z & 1)
                # _place: the cards leave the hand, their ranks turn wild, the seat scores a set
                mine &= ~((1 << x) | (1 << y) | (1 << z))
                w |= (1 << rank_of[x]) | (1 << rank_of[y]) | (1 << rank_of[z])
                placed = (seat, tuple(sorted((x, y, z))))
                if mine:
                    nstep, nbonus = step, bonus
                    if earned:
                        nstep, nbonus = "again", 0
                    elif step == "bonus":
                        b = bonus & mine        # _bonus_open
                        rb = rank_of[(b & -b).bit_length() - 1] if b else 0
                        if not b or w >> rb & 1 or (mine & RANK_MASK[rb]).bit_count() < SET_SIZE:
                            nstep = ""          # the turn ends (below)
                    if nstep:
                        h[seat] = mine
                        new_sets.append(placed)
                        sc[seat] += 1
                        wild = w
                        wc = wild_cards[w]
                        i += 1
                        step, bonus = nstep, nbonus
                        continue
            elif kind == "end_turn":
                if len(a) != 1 or step == "ask":    # _end_action: "must_ask"
                    break
            else:
                break
            # _turn_over: the forced sets (_forced; a hand that can make no set is told at
            # once, as _any_set does), then in play the empty-hand draw and the next seat (who
            # must hold cards: else left to the fold), in the last asks the next seat due one
            # that holds cards (none: the game is over)
            wm = mine & wild_cards[w]
            k = wm.bit_count()
            nat = mine ^ wm
            forced = None
            if k >= SET_SIZE or (k == 2 and nat):
                forced = forced_sets(mine, w)
            elif nat and nat.to_bytes(width, "little").translate(pairs if k else threes) != none:
                forced = forced_sets(mine, w)
            if forced is not None:
                mine, w, more = forced
            if play:
                got = 0
                if not mine:
                    got = left if left < EMPTY_DRAW else EMPTY_DRAW
                    if left == got:
                        break       # the pile runs out (left to the fold)
                    for c in pile[p:p + got]:
                        mine |= bits[c]
                nxt = nexts[seat]
                if not h[nxt]:
                    # _begin_turn's draw (as in an ask's)
                    if left - got <= EMPTY_DRAW:
                        break
                    h[nxt] = bits[pile[p + got]] | bits[pile[p + got + 1]]
                    got += EMPTY_DRAW
                p += got
                left -= got
            else:
                j = o
                nxt = -1
                while j < n_order:
                    s = last_order[j]
                    j += 1
                    if mine if s == seat else h[s]:
                        nxt = s
                        break
                o = j
            h[seat] = mine
            if placed is not None:
                new_sets.append(placed)
                sc[seat] += 1
            if forced is not None:
                sc[seat] += len(more)
                for cards in more:
                    new_sets.append((seat, cards))
            wild = w
            wc = wild_cards[w]
            i += 1
            if nxt < 0:
                phase, turn, step, bonus, last_order, o = "over", None, "", 0, (), 0
                break
            turn = nxt
            step, bonus = "ask", 0
    except (KeyError, TypeError):
        pass
    if i == start:
        return state, i, 0, 0
    return (build(State, (n, dealer, turn_timer, phase, tuple(h), pile[p:] if p else pile, wild,
                          sets + tuple(new_sets) if new_sets else sets, tuple(sc), turn, step, bonus,
                          last_order[o:] if o else last_order, drawer, history + tuple(asks))),
            i, records[i - 1]["seq"], 0)


def _dealt(state: State, records: tuple, i: int, limit: int) -> tuple[State, int, int, int]:
    """``replay_run`` at a table waiting for its deal: the chance records of the dealer
    drawn by lot (a permutation of the seats, its first item deals: ``advance``) and of
    the deal (``_deal``), each with ``check_permutation``'s checks; stops at any other
    record, a refusal (left to the fold, where ``apply`` says why) or a seq over
    ``limit``. Returns as ``replay_run``: the state after the deal, or before it."""
    start = i
    seq = 0
    n = state.n
    end = len(records)
    while i < end:
        rec = records[i]
        if rec.__class__ is not ChanceRecorded or rec.seq > limit:
            break
        perm = rec.permutation
        if state.dealer is None:
            if rec.purpose != "dealer" or len(perm) != n or set(perm) != _SEATS[n]:
                break
            state = build(State, (n, perm[0], *state[2:]))
        else:
            dealt = _deal(state, perm) if rec.purpose == "deal" else None
            if dealt is None:
                break
            return dealt, i + 1, rec.seq, i + 1 - start
        seq = rec.seq
        i += 1
    return state, i, seq, i - start


#: a hand's bytes (its 52 bits, 7 bytes little-endian: two ranks' nibbles a byte) translated
#: by these: a byte not 0 where a rank of the two is held twice or more (_PAIR_BYTES), or 3
#: times or more (_THREE_BYTES); _NO_BYTES, where none is
_PAIR_BYTES = bytes(int((b & 15).bit_count() >= 2 or (b >> 4).bit_count() >= 2) for b in range(256))
_THREE_BYTES = bytes(int((b & 15).bit_count() >= SET_SIZE or (b >> 4).bit_count() >= SET_SIZE) for b in range(256))
_NO_BYTES = bytes((DECK_SIZE + 7) // 8)
#: _LAST_ORDER[n][drawer]: the seats of the last asks, from the drawer's left to the drawer
_LAST_ORDER = {n: tuple(tuple((d + i) % n for i in range(1, n + 1)) for d in range(n)) for n in range(2, 7)}
#: _NEXT[n][seat]: the seat on its left
_NEXT = {n: tuple((s + 1) % n for s in range(n)) for n in range(2, 7)}
#: a rank's name -> (its index, the bits of its four cards)
_RANK_INFO: dict[str, tuple[int, int]] = {name: (ri, RANK_MASK[ri]) for name, ri in RANK_INDEX.items()}
_BITS = tuple(1 << c for c in range(DECK_SIZE))
