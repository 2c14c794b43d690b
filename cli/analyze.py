"""`wildtable replay LOG --analyze [--seat N] [--json]`: each decision of a seat marked
with the expert's value of the move made against its best move, as chess sites mark
mistakes (docs/PLAYING.md "Hints and analysis").

No hindsight: at each decision the expert sees what that seat saw then and nothing more:
the seat's view as the server sent it (packed and unpacked as the wire carries it) and
the memory a bot in that seat would have kept of its earlier views (the game's
``bot_watch``); never another seat's view nor the table's full state. Each decision's
search draws from a generator seeded by the record's seq, so the same log gives the same
analysis whichever seats are asked for.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Iterator

import attrs

from wildtable.headless import games
from wildtable.headless.appraise import Advice, Move, appraise, label, marks_for, no_analysis, wire
from wildtable.protocol.engine import ChanceOutcome
from wildtable.protocol.errors import IllegalAction, LogError, ProtocolError
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, LogContents, read_prefix
from wildtable.protocol.replay import initial_state

#: the analysis's search, in multiples of the expert bot's budget per move: four times
#: halves the noise of its values (a bot must answer within its reaction time; the analysis may wait)
EFFORT = 4
MARK_NAMES = {"??": "blunders", "?": "mistakes", "?!": "inaccuracies"}


@attrs.frozen
class Decision:
    """One move of a seat, judged from its own view then."""
    seq: int
    seat: int
    made: Move
    best: Move
    loss: float | None          # best.value - made.value; None: the move made was not valued
    mark: str                   # "", "?!", "?" or "??"
    choices: int                # how many moves the expert valued


def seed_of(seq: int) -> random.Random:
    """The generator of the search at the decision recorded at ``seq`` (the same log, the same analysis)."""
    return random.Random(f"wildtable-analyze:{seq}")


def decisions(contents: LogContents, seats: tuple[int, ...], upto: int | None = None) -> Iterator[Decision]:
    """Each move a player made in ``seats`` (not the timer's, not the table's) up to seq
    ``upto``, judged by the expert from that seat's view and memory at that moment. Stops
    at the first record that no longer applies (IllegalAction: the caller names it)."""
    game, state = initial_state(contents.header)
    plugin = games.plugin_for(game.NAME)
    watch = getattr(plugin, "bot_watch", None)
    memos: dict[int, dict] = {s: {} for s in seats}
    for r in contents.records:
        t = type(r)
        if t is not ActionAccepted and t is not ChanceRecorded:
            continue
        if upto is not None and r.seq > upto:
            return
        if t is ActionAccepted and r.seat in memos and r.by == "player":
            d = _judge(game.NAME, plugin, r.seat, wire(game.view(state, r.seat)), memos[r.seat], r)
            if d is not None:
                yield d
        if t is ActionAccepted:
            state, _ = game.apply(state, r.seat, game.ACTIONS.decode(r.action, "$.action"))
        else:
            state, _ = game.apply(state, None, ChanceOutcome(r.purpose, r.permutation))
        if watch is not None:
            for s, memo in memos.items():
                # the update this seat was sent after the record: all its memory is made of
                watch(wire(game.view(state, s)), 0.0, memo)


def _judge(game: str, plugin, seat: int, view: dict, memo: dict, r: ActionAccepted) -> Decision | None:
    advice: Advice = appraise(game, view, _copy(memo), seed_of(r.seq), EFFORT)
    best = advice.best
    if best is None:
        return None             # not a choice the expert judges (nothing to choose between)
    made_key = games.action_key(r.action)
    made = next((m for m in advice.moves if games.action_key(m.action) == made_key), None)
    if made is None:
        made = Move(dict(r.action), label(plugin, dict(r.action)), None)
    loss = None if made.value is None or best.value is None else max(0.0, best.value - made.value)
    if loss is not None and loss <= 0.0:
        best = made             # equal to the best: the move made is the best one
    return Decision(r.seq, seat, made, best, loss, marks_for(game).mark(loss), len(advice.moves))


def _copy(memo: dict) -> dict:
    """A copy of a memory the search may read but not change (sets and lists copied too)."""
    return {k: (type(v)(v) if isinstance(v, (set, list, dict)) else v) for k, v in memo.items()}


# ---------------------------------------------------------------- the command
def analyze_main(args, path, data: bytes) -> int:
    try:
        contents = read_prefix(data)
        game, _ = initial_state(contents.header)
    except LogError as e:
        print(f"wildtable replay: {path}: {e}", file=sys.stderr)
        return 1
    if (why := no_analysis(game)) is not None:
        print(f"wildtable replay --analyze: {why}", file=sys.stderr)
        return 2
    n = contents.header.seats
    if args.seat is None:
        seats = tuple(range(n))
    elif games.is_number(str(args.seat)) and int(args.seat) < n:
        seats = (int(args.seat),)
    else:
        print(f"wildtable replay --analyze: --seat wants a seat of this table, 0 to {n - 1}, not {args.seat!r} "
              "(or leave it out: every seat)", file=sys.stderr)
        return 2
    if contents.damage is not None:
        print(f"wildtable replay: {path}: {contents.damage}; the decisions before it are analysed", file=sys.stderr)
    judged: list[Decision] = []
    stopped = None
    it = decisions(contents, seats, args.upto)
    while True:
        try:
            d = next(it)
        except StopIteration:
            break
        except (IllegalAction, ProtocolError) as e:
            stopped = f"a record no longer applies ({e}); the decisions before it are analysed"
            break
        judged.append(d)
        if not args.json:
            print(_line(d), flush=True)
    if stopped:
        print(f"wildtable replay: {path}: {stopped}", file=sys.stderr)
    if args.json:
        json.dump({"game": game.NAME, "table": contents.header.table, "seats": list(seats),
                   "marks": attrs.asdict(marks_for(game.NAME)),
                   "decisions": [_decision_data(d) for d in judged],
                   "summary": [_summary(s, judged) for s in seats]}, sys.stdout, indent=1)
        print()
    else:
        print()
        for s in seats:
            print(_summary_line(_summary(s, judged)))
    return 1 if contents.damage is not None or stopped else 0


def _line(d: Decision) -> str:
    made = f"{d.made.label} ({_value(d.made.value)})"
    best = "best" if d.best is d.made else f"best {d.best.label} ({_value(d.best.value)})"
    loss = "" if d.loss is None or d.best is d.made else f"  -{d.loss:.2f}"
    return f"seq {d.seq:>5}  seat {d.seat}  {made:<24} {best}{loss}{'  ' + d.mark if d.mark else ''}"


def _value(v: float | None) -> str:
    return "not valued" if v is None else f"{v + 0.0:+.2f}"     # + 0.0: never "-0.00"


def _move_data(m: Move) -> dict:
    return {"action": m.action, "label": m.label, "value": m.value}


def _decision_data(d: Decision) -> dict:
    return {"seq": d.seq, "seat": d.seat, "made": _move_data(d.made), "best": _move_data(d.best),
            "loss": d.loss, "mark": d.mark, "choices": d.choices}


def _summary(seat: int, judged: list[Decision]) -> dict:
    mine = [d for d in judged if d.seat == seat]
    valued = [d.loss for d in mine if d.loss is not None]
    return {"seat": seat, "decisions": len(mine), "best": sum(1 for d in mine if d.best is d.made),
            "mean_loss": round(sum(valued) / len(valued), 3) if valued else None,
            **{name: sum(1 for d in mine if d.mark == mark) for mark, name in MARK_NAMES.items()}}


def _summary_line(s: dict) -> str:
    loss = "-" if s["mean_loss"] is None else f"{s['mean_loss']:.2f}"
    return (f"seat {s['seat']}: {s['decisions']} decisions, {s['best']} the expert's best, mean loss {loss}; "
            f"{s['inaccuracies']} inaccuracies (?!), {s['mistakes']} mistakes (?), {s['blunders']} blunders (??)")
