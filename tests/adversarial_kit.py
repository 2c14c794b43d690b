"""Shared helpers for the hostile tests of the server (tests/server/: hostile frames, leaks, corrupt logs, crashes).

- the error codes the docs promise (every code the server sends must be one of them);
- ground truth of what a seat may see, per game, from the all-seeing snapshot;
- the card ids an update carries (views and events, walked generically);
- pure-engine playouts recorded as histories, and histories re-dealt so that only cards
  hidden from one seat move ("shuffle only the hidden cards, keep the public history");
- players that choose a legal move from their own view, for every game;
- a `wildtable serve` subprocess whose stderr is drained (a full pipe would stall it).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import trio

from wildtable.headless.net import connect
from wildtable.headless.wire import ConnectionClosed
from wildtable.protocol import messages as m
from wildtable.protocol.engine import ChanceOutcome, TableConfig, game as find_game
from wildtable.protocol.errors import IllegalAction

from proc import LineReader
from scripted import play_to_end
from serverkit import check_views

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("run-wild", "go-wild", "wild-shots", "go-fish-wildcard")


# ------------------------------------------------------------------ documented codes

def documented_codes() -> set[str]:
    """Every code listed in a table of docs/PROTOCOL.md or docs/RULES.md, plus the codes the
    protocol page names in its prose (`not_seated`, ...)."""
    codes: set[str] = set()
    for doc in ("PROTOCOL.md", "RULES.md"):
        text = (ROOT / "docs" / doc).read_text()
        for line in text.splitlines():
            found = re.match(r"\|\s*`([a-z_]+)`", line)
            if found:
                codes.add(found.group(1))
            if line.startswith("|") and "`no_chance_pending`" in line:
                codes.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
        prose = re.search(r"Intent rejections \(`rejected` messages\):(.*?)\n\n", text, re.S)
        if prose:
            codes.update(re.findall(r"`([a-z_]+)`", prose.group(1)))
    return codes


# ------------------------------------------------------------------ what a seat may see

CARD_LIST_KEYS = frozenset({"hand", "cards", "draw3s", "playable", "own_tricks", "bonus", "tricks", "won"})
CARD_KEYS = frozenset({"card", "took", "gave"})


def card_ids(obj: Any, key: str | None = None, inside: bool = False) -> set[int]:
    """The card ids in a view or event, found by field name: an int under `card`/`took`/
    `gave`, any int inside a list under `hand`, `cards`, `draw3s`, ... (an int directly under
    `hand` or `cards` is a count, not a card)."""
    out: set[int] = set()
    if isinstance(obj, bool) or obj is None:
        return out
    if isinstance(obj, int):
        if inside or key in CARD_KEYS:
            out.add(obj)
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out |= card_ids(v, k, False)          # inside a map, the field names decide
        return out
    if isinstance(obj, (list, tuple)):
        deeper = inside or key in CARD_LIST_KEYS
        for v in obj:
            out |= card_ids(v, key, deeper)
    return out


def _flat(x) -> set[int]:
    if isinstance(x, int) and not isinstance(x, bool):
        return {x}
    out: set[int] = set()
    if isinstance(x, (list, tuple)):
        for v in x:
            out |= _flat(v)
    elif isinstance(x, dict):
        for v in x.values():
            out |= _flat(v)
    return out


def visible(game: str, snap: dict, seat: int | None) -> set[int]:
    """Ground truth, from the all-seeing snapshot: the card ids ``seat`` (None: a spectator)
    may know the place of in this state (its own hand and tricks, and everything face up)."""
    own: set[int] = set()
    if game == "run-wild":
        public = {c for meld in snap["melds"] for c in meld["cards"]} | _flat(snap["draw3s"])
        if seat is not None:
            own = set(snap["hands"][seat])
    elif game == "go-wild":
        public = _flat([p["cards"] for p in snap["trick"]]) | set(snap["discard"])
        if snap["last_trick"]:
            public |= _flat([p["cards"] for p in snap["last_trick"]["plays"]])
        if seat is not None:
            own = set(snap["hands"][seat])
    elif game == "wild-shots":
        public = _flat(snap["trick"]) | _flat(snap["last_round"])
        if snap["last_trick"]:
            public |= _flat(snap["last_trick"]["cards"])
        if seat is not None:
            if seat < len(snap["hands"]):            # no hands before the first deal
                own = set(snap["hands"][seat]) | _flat(snap["won"][seat])
    elif game == "go-fish-wildcard":
        public = _flat([s["cards"] for s in snap["sets"]])
        if seat is not None:
            own = set(snap["hands"][seat])
    else:
        raise AssertionError(game)
    return public | own


def card_class(game: str, card: int):
    """Cards of one class are interchangeable for everything public: scores, legality of
    the (public) plays, what asks hand over. Hidden cards are shuffled within a class."""
    if game == "run-wild":
        return "number" if card < 60 else ("wild" if card < 69 else "draw3")
    if game == "go-wild":
        return card >= 90                 # wild or colour (a colour never matters unseen)
    if game == "wild-shots":
        return card // 10                 # the suit: following suit stays as it was
    if game == "go-fish-wildcard":
        return card // 4                  # the rank: every ask hands over the same count
    raise AssertionError(game)


# ------------------------------------------------------------------ engine histories

@attrs.frozen
class Step:
    """One entry of a history: a chance outcome, or an action by a seat (None: the table)."""
    kind: str                    # "chance" | "act"
    seat: int | None = None
    action: Any = None
    purpose: str = ""
    perm: tuple = ()


class Refused(Exception):
    pass


def playout(game: str, seats: int, settings: dict, rng: random.Random, max_steps: int = 100_000) -> list[Step]:
    """A whole game (or ``max_steps`` of it) between random legal players; chance seeded."""
    g = find_game(game)
    s = g.new_table(TableConfig(game, seats, settings))
    hist: list[Step] = []
    while len(hist) < max_steps:
        req = g.pending_chance(s)
        if req is not None:
            p = list(range(req.size))
            rng.shuffle(p)
            step = Step("chance", purpose=req.purpose, perm=tuple(p))
            s, _ = g.apply(s, None, ChanceOutcome(req.purpose, step.perm))
        elif (a := g.auto_action(s)) is not None:
            step = Step("act", None, a)
            s, _ = g.apply(s, None, a)
        elif g.outcome(s).over:
            break
        else:
            movers = list(g.to_move(s))
            rng.shuffle(movers)
            for seat in movers:
                acts = g.legal_actions(s, seat)
                if acts:
                    break
            else:
                raise AssertionError(f"{game}: nobody can move in {g.view(s, None)}")
            step = Step("act", seat, rng.choice(acts))
            s, _ = g.apply(s, seat, step.action)
        hist.append(step)
    return hist


def run_history(game: str, seats: int, settings: dict, hist: list[Step], observers) -> tuple[list, dict]:
    """Apply ``hist``; return (states, {observer: [view0, (events, view), ...]}).
    Raises Refused if an action of the history is refused."""
    g = find_game(game)
    s = g.new_table(TableConfig(game, seats, settings))
    states = [s]
    streams = {o: [g.view(s, o)] for o in observers}
    for st in hist:
        try:
            if st.kind == "chance":
                s, ev = g.apply(s, None, ChanceOutcome(st.purpose, tuple(st.perm)))
            else:
                s, ev = g.apply(s, st.seat, st.action)
        except IllegalAction as e:
            raise Refused(str(e)) from None
        states.append(s)
        for o in observers:
            streams[o].append((ev, g.view(s, o)))
    return states, streams


# The chance purposes whose outcome deals every card afresh: the place a card had in an
# earlier outcome of that purpose no longer matters after the next one.
RESETS = {"run-wild": {"deal"}, "wild-shots": {"deal", "snake_oil"}, "go-wild": set(), "go-fish-wildcard": set()}


def redeal_hidden(game: str, seats: int, settings: dict, hist: list[Step], seat: int,
                  rng: random.Random, classes: bool = True) -> tuple[list[Step], int]:
    """``hist`` with each chance outcome's entries shuffled among the places whose card
    ``seat`` never sees while that outcome is in force (within a card class if ``classes``);
    the actions are the same. Returns (new history, number of entries moved)."""
    g = find_game(game)
    states, _ = run_history(game, seats, settings, hist, ())
    snaps = [g.snapshot(s) for s in states]
    seen_after = []          # seen_after[i]: card ids seat sees in states[i]
    for sn in snaps:
        seen_after.append(visible(game, sn, seat))
    chance_at = [i for i, st in enumerate(hist) if st.kind == "chance"]
    new = list(hist)
    moved = 0
    for ci in chance_at:
        st = hist[ci]
        if st.purpose in ("first_player", "first_dealer", "dealer"):
            continue                                  # who starts or deals is public (seats, not cards)
        end = len(hist)
        if st.purpose in RESETS[game]:
            later = [j for j in chance_at if j > ci and hist[j].purpose == st.purpose]
            end = later[0] if later else len(hist)
        # the states during which this outcome's places matter: after it, up to ``end``
        seen: set[int] = set()
        for i in range(ci + 1, end + 1):
            seen |= seen_after[i]
        if game == "wild-shots" and st.purpose == "snake_oil":
            # entries are Snake Oil cards, revealed top first, one per trick: the places
            # past the last trick reached while this pile is in force are never seen
            revealed = max(snaps[i]["trick_number"] or 0 for i in range(ci + 1, end + 1))
            places = list(range(revealed, len(st.perm)))
            cls_of = lambda v: 0
        else:
            if game == "go-wild" and st.purpose == "reshuffle":
                pile = snaps[ci]["discard"]               # the state before the chance
                card_of = lambda v, pile=pile: pile[v]
            else:
                card_of = lambda v: v
            places = [i for i, v in enumerate(st.perm) if card_of(v) not in seen]
            cls_of = ((lambda v, card_of=card_of: card_class(game, card_of(v))) if classes
                      else (lambda v: 0))
        perm = list(st.perm)
        groups: dict = {}
        for i in places:
            groups.setdefault(cls_of(perm[i]), []).append(i)
        for idx in groups.values():
            vals = [perm[i] for i in idx]
            rng.shuffle(vals)
            for i, v in zip(idx, vals):
                moved += perm[i] != v
                perm[i] = v
        new[ci] = attrs.evolve(st, perm=tuple(perm))
    return new, moved


# ------------------------------------------------------------------ a stream against the log

def check_stream(game: str, log, seat: int | None, msgs: list) -> int:
    """Every view is the engine's view of the logged state; every card named is one the
    seat may see; a spectator's views hold nothing private. Returns the card ids checked.
    ``log``: serverkit.replay_by_seq of the table's log (the ground truth)."""
    check_views(msgs, log, seat, wire=True)
    snaps = {k: log.game.snapshot(v) for k, v in log.states.items()}
    checked = 0
    for msg in msgs:
        if isinstance(msg, (m.Joined, m.Spectating)):
            seq, events, view = msg.seq, (), msg.view
        elif isinstance(msg, m.Update):
            seq, events, view = msg.seq, msg.events, msg.view
        else:
            continue
        may = visible(game, snaps[seq], seat)
        shown = card_ids(view)
        assert shown <= may, f"seat {seat} at seq {seq} sees cards {sorted(shown - may)} it may not"
        before = visible(game, snaps[seq - 1], seat) if seq > 0 else set()
        named = card_ids(list(events))
        assert named <= may | before, f"events at seq {seq} name cards {sorted(named - may - before)} hidden from {seat}"
        if seat is None:
            for private in ("hand", "bonus", "playable", "own_tricks"):
                assert not view.get(private), f"the spectator's view has {private}: {view}"
            if game == "run-wild":
                assert "pile" not in view, view
        checked += len(shown) + len(named)
    return checked


# ------------------------------------------------------------------ players from a view

def choose(view: dict):
    """A legal-looking move for the seat whose view this is, or None (not its turn)."""
    game = view.get("game")
    seat = view.get("seat")
    if seat is None:
        return None
    if game == "run-wild":
        from scripted import simple_choice
        return simple_choice(view)
    if view.get("turn") != seat or view.get("phase") not in ("playing", "play", "last_asks"):
        return None
    if game == "go-wild":
        return {"kind": "play", "cards": [min(view["hand"])]} if view["hand"] else None
    if game == "wild-shots":
        cards = view.get("playable") or view["hand"]
        return {"kind": "play", "card": min(cards)} if cards else None
    if game == "go-fish-wildcard":
        if view["step"] in ("bonus", "again"):
            return {"kind": "end_turn"}
        hand = view["hand"]
        if not hand:
            return None
        n = len(view["players"])
        target = next(((seat + k) % n for k in range(1, n) if view["players"][(seat + k) % n]["hand"] > 0),
                      (seat + 1) % n)
        ranks = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
        return {"kind": "ask", "target": target, "rank": ranks[min(hand) // 4]}
    raise AssertionError(game)


# ------------------------------------------------------------------ chance from a script

class ScriptedChance:
    """A `chance=` source for Server that hands out recorded permutations in order."""

    def __init__(self, perms):
        self.perms = list(perms)
        self.used = 0

    def __call__(self, size: int):
        assert self.used < len(self.perms), "the table asked for more shuffles than scripted"
        p = self.perms[self.used]
        assert len(p) == size, (len(p), size)
        self.used += 1
        return p


# ------------------------------------------------------------------ `wildtable serve` subprocess

class ServeProcess:
    """`python -m wildtable serve --port 0` with its stderr drained into ``self.log``;
    killed if the test's process dies (tests/die_with_parent.py)."""

    def __init__(self, proc, url: str, stderr: LineReader):
        self.proc, self.url, self.stderr = proc, url, stderr

    @property
    def log(self) -> str:
        return self.stderr.text


# run at the start of every serve child: it is SIGKILLed if this process dies (a test run
# killed with SIGKILL does not end its servers itself)
DIE_WITH_PARENT = Path(__file__).resolve().parent / "die_with_parent.py"


async def start_serve(nursery, data_dir, *extra) -> ServeProcess:
    proc = await trio.lowlevel.open_process(
        [sys.executable, str(DIE_WITH_PARENT), str(os.getpid()),
         sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data_dir), *extra],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    stderr = LineReader(proc.stderr, errors="replace")
    try:
        found = await stderr.until(r"serving on (ws://\S+)", timeout=30)
    except BaseException:                         # it did not start (or the test gave up): not left running
        proc.kill()
        with trio.CancelScope(shield=True):
            await proc.wait()
        raise
    nursery.start_soon(stderr.read_to_end)        # the rest, as it comes: the pipe never fills
    return ServeProcess(proc, found.group(1), stderr)


@asynccontextmanager
async def serve_subprocess(data_dir, *extra, env: dict | None = None):
    """(process, its stderr as a LineReader) of `wildtable serve --port 0` on ``data_dir``,
    however far it gets (``start_serve`` waits until it serves); ``env``: variables for it
    besides ours. Killed at exit if it still runs."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, str(DIE_WITH_PARENT), str(os.getpid()),
         sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data_dir), *extra],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    try:
        yield proc, LineReader(proc.stderr, errors="replace")
    finally:
        if proc.returncode is None:
            proc.kill()
            with trio.CancelScope(shield=True):
                await proc.wait()


# a connection to a server that was killed or stopped under it ends with one of these
GONE = (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError)


async def two_play_until(sp: ServeProcess, seen: list[list], sig: int, *, accepted: int = 40,
                         timeout: float) -> tuple[str, list[m.Joined]]:
    """p0 and p1 play a run-wild table of 20 rounds on ``sp`` (what each receives goes to ``seen[i]``)
    until ``accepted`` of their actions were accepted, then ``sig`` goes to the server; a player whose
    connection the server's end cut stops there. Returns the table's id and the two seats' Joined."""
    joined: list = [None, None]
    async with connect(sp.url, "p0") as a, connect(sp.url, "p1") as b:
        await a.send(m.CreateTable("run-wild", 2, {"rounds": 20}))
        tid = (await a.receive_until(lambda x: isinstance(x, m.TableCreated))).table

        async def player(i, c):
            await c.send(m.Join(tid, i))
            joined[i] = await c.receive_until(lambda x: isinstance(x, m.Joined))
            try:
                await play_to_end(c, joined[i], log=seen[i], timeout=timeout)
            except GONE:
                pass

        async with trio.open_nursery() as n:
            n.start_soon(player, 0, a)
            n.start_soon(player, 1, b)
            while sum(isinstance(x, m.Accepted) for x in seen[0] + seen[1]) < accepted:
                await trio.sleep(0.005)
            sp.proc.send_signal(sig)
    return tid, joined


def is_direct_answer(msg) -> bool:
    """A reply to the frame just sent (not a broadcast to the table)."""
    return not isinstance(msg, (m.Update, m.Players, m.GameOver, m.Goodbye))
