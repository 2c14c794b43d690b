"""`wildtable replay` on logs a real server writes when clients send odd intents, and on
logs edited by hand: refused intents naming cards that do not exist (or byte strings)
are shown raw, never a traceback; in a seat's (or a spectator's) view, another seat's
refused intents are not shown (their cards are that seat's hand); a seat claim for a
seat the table does not have and a hash record out of place are marked as problems;
`--plain --upto` below 0 shows the table before any record, as --json does."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import trio
from textual.widgets import Static

from wildtable.headless.net import connect
from wildtable.client.viewer import Timeline, ViewerApp
from wildtable.protocol import messages as m
from wildtable.protocol.games.run_wild import card_label
from wildtable.protocol.logfmt import Header, SeatClaimed, StateHashed, encode_record, read_log
from wildtable.selfplay import play
from wildtable.protocol.engine import game as find_game

from serverkit import create, join, reply_to, running_server

WILDTABLE = [sys.executable, "-m", "wildtable"]


async def _odd_intents_log(data_dir):
    """ann and bob at a 2-seat Run Wild table; after the deal, before Go!, ann tries to
    meld three cards of her hand (refused: the round has not started), a meld of a card
    that does not exist and one of a byte string. Returns (log path, ann's three labels)."""
    with trio.fail_after(20):
        async with running_server(data_dir) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                table = await create(ann, "run-wild", 2, rounds=1)
                await join(ann, table, 0)
                await join(bob, table, 1)
                # seq 1 draws the first dealer by lot, seq 2 deals
                dealt = await ann.receive_until(lambda x: isinstance(x, m.Update) and x.seq >= 2)
                mine = list(dealt.view["hand"])[:3]
                for iid, action in ((1, {"kind": "meld", "cards": mine}),
                                    (2, {"kind": "meld", "cards": [1, 2, 999999]}),
                                    (3, {"kind": "take", "meld": 1, "card": 10 ** 9}),
                                    (4, {"kind": "meld", "cards": b"\x01\x02", "values": b"\xff"}),
                                    (5, {"kind": 7})):
                    await ann.send(m.Intent(iid, action))
                    assert isinstance(await reply_to(ann, iid), m.Rejected)
            return server.tables[table].logfile.path, [card_label(c) for c in mine]


@pytest.fixture(scope="module")
def odd_log(tmp_path_factory):
    return trio.run(_odd_intents_log, tmp_path_factory.mktemp("odd") / "data")


def _replay(*argv) -> subprocess.CompletedProcess:
    return subprocess.run(WILDTABLE + ["replay", *map(str, argv)], capture_output=True, text=True, timeout=60)


# the ways the two tests below read the odd log: each `wildtable replay` run once for both,
# all at the same time (each is a process start of a second or more, mostly imports)
ODD_FLAGS = (("--plain",), ("--plain", "--seat", "0"), ("--plain", "--seat", "1"),
             ("--plain", "--seat", "spectator"), ("--verify",), ("--json",))


@pytest.fixture(scope="module")
def odd_replays(odd_log) -> dict[tuple[str, ...], subprocess.CompletedProcess]:
    path, _ = odd_log
    with ThreadPoolExecutor(len(ODD_FLAGS)) as pool:
        done = {flags: pool.submit(_replay, path, *flags) for flags in ODD_FLAGS}
    return {flags: d.result() for flags, d in done.items()}


def test_refused_intents_naming_no_such_card_are_shown_raw_not_a_traceback(odd_replays):
    for flags, done in odd_replays.items():
        assert done.returncode == 0 and "Traceback" not in done.stderr, (flags, done.stderr[-2000:])
    text = odd_replays["--plain",].stdout
    assert 'ann: {"kind":"meld","cards":[1,2,999999]} - ' in text, text
    assert 'ann: {"kind":"take","meld":1,"card":1000000000} - ' in text
    assert 'ann: {"kind":"meld","cards":"0102","values":"ff"} - ' in text or "ann: meld " in text
    assert 'ann: {"kind":7} - ' in text


def test_a_seat_does_not_see_another_seats_refused_intents(odd_log, odd_replays):
    path, labels = odd_log
    meld = "meld " + " ".join(labels)
    own = odd_replays["--plain", "--seat", "0"].stdout
    assert f"REJECTED after seq 2: ann: {meld} - " in own
    assert "reason: " in own
    for other in ("1", "spectator"):
        seen = odd_replays["--plain", "--seat", other].stdout
        rejected = [x for x in seen.splitlines() if "REJECTED" in x]
        assert len(rejected) == 5 and all("ann: (not shown to this view) - " in x for x in rejected), rejected
        assert meld not in seen and "999999" not in seen and "reason: " not in seen
    everything = odd_replays["--plain",].stdout
    assert f"ann: {meld} - " in everything

    # and in the full-screen viewer, as bob: the record list and the detail of the record
    timeline = Timeline(read_log(path.read_bytes()))
    at = next(i for i, s in enumerate(timeline.steps) if "REJECTED" in timeline.record_line(i))

    async def scenario():
        app = ViewerApp(timeline, path.name, 1, at)
        async with app.run_test(size=(100, 30)) as pilot:
            shown = str(app.query_one("#records", Static).content) + str(app.query_one("#detail", Static).content)
            assert "(not shown to this view)" in shown and meld not in shown, shown
            await pilot.press("0")          # ann's own view shows her refused meld
            shown = str(app.query_one("#records", Static).content) + str(app.query_one("#detail", Static).content)
            assert meld in shown, shown
            await pilot.press("q")

    asyncio.run(scenario())


def _write(path, header, records) -> None:
    path.write_bytes(encode_record(header) + b"".join(encode_record(r) for r in records))


def test_hand_edited_seat_claims_and_misplaced_hashes_are_problems_not_tracebacks(tmp_path):
    header = Header(1, "run-wild", "t1", 2, {"rounds": 1}, rules=find_game("run-wild").RULES_VERSION)
    deal = play(find_game("run-wild"), 2, {"rounds": 1}, seed=1, hash_every=0).records[:1]
    for name, records, problem in (
        ("seat5", [SeatClaimed(5, "zed", b"x" * 32)], "there is no seat 5 at this 2-seat table"),
        ("seatneg", [SeatClaimed(-1, "neg", b"x" * 32)], "there is no seat -1 at this 2-seat table"),
        ("hash", deal + [StateHashed(7, b"\0" * 16)], "this hash is for seq 7 but follows seq 1"),
    ):
        path = tmp_path / f"{name}.wlog"
        _write(path, header, records)
        done = _replay(path, "--plain")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert f"PROBLEM: {problem}" in done.stdout, done.stdout
        assert Timeline(read_log(path.read_bytes())).steps[-1].names == ("", "")     # no seat renamed
        assert " ok" not in "".join(x for x in done.stdout.splitlines() if x.startswith("[") and "hash at" in x)


@pytest.mark.parametrize("upto", ["-5", "-99999999999999999999"])
def test_plain_upto_below_zero_is_the_table_before_any_record(tmp_path, upto):
    path = tmp_path / "gw.wlog"
    done = subprocess.run(WILDTABLE + ["selfplay", "go-wild", "--players", "2", "--seed", "4", "--log", path],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    zero = _replay(path, "--plain", "--upto", "0")
    below = _replay(path, "--plain", "--upto", upto)
    assert below.returncode == 0 and below.stdout == zero.stdout and below.stdout.startswith("[   0] header: go-wild")
