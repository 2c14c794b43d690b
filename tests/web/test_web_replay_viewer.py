"""The web replay viewer steps through a finished game and shows a refused intent: opened
from the lobby's list of finished games on the server, and from `wildtable replay LOG
--web` (a local server that prints its address). The steps come from the server (the
engines fold the log); the page steps, jumps to a seq, shows any seat's view or the
all-seeing one, the refused intent in its place with its reason, and the hash checks."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time

from serverkit import fetch, play_out_with_a_refusal
from webkit import DESKTOP, doc_shot, open_a_finished_game


def at(p) -> dict:
    return p.page.evaluate("() => window.wildtable.replay.at")


def step_to(p, selector: str, want) -> dict:
    """Click, then wait until the page shows the step ``want(at)`` accepts."""
    before = at(p)["step"]
    p.page.click(selector)
    p.page.wait_for_function("b => window.wildtable.replay.at && window.wildtable.replay.at.step !== b", arg=before)
    got = at(p)
    assert want(got), got
    return got


def test_the_replay_viewer_steps_through_a_finished_game_and_shows_a_refused_intent(players, web_server):
    p, table = open_a_finished_game(players, web_server)
    page = p.page
    assert "state hashes:" in page.inner_text("#replay-hashes") and "all ok" in page.inner_text("#replay-hashes")
    assert page.get_attribute("#replay-hashes", "data-state") == "ok"

    # step, by button and by key
    step_to(p, "#replay-next", lambda a: a["step"] == 1)
    page.keyboard.press("ArrowRight")
    page.wait_for_selector('#replay[data-step="2"]')
    # the refused intent, in its place, with its reason, seen by the seat that sent it
    step_to(p, "#replay-next-rejected", lambda a: a["record"]["kind"] == "rejected")
    page.select_option("#replay-view", "0")
    page.wait_for_selector('#replay[data-view="0"]')
    refusal = page.inner_text("#replay-refusal")
    rec = at(p)["record"]
    assert "refused: ann" in refusal and rec["code"] in refusal and rec["reason"] in refusal, refusal
    assert "9999" in refusal
    assert "REJECTED" in page.inner_text("#replay-records li.current")
    assert page.locator("#replay section[aria-label='hand'] .card").count() > 0     # ann's hand
    # another seat's view: that there was one, and its code, not what was tried
    page.select_option("#replay-view", "1")
    page.wait_for_selector('#replay[data-view="1"]')
    refusal = page.inner_text("#replay-refusal")
    assert rec["code"] in refusal and "not shown to this view" in refusal and "9999" not in refusal
    # the all-seeing view: every seat's hand
    page.keyboard.press("a")
    page.wait_for_selector('#replay[data-view="all"]')
    assert page.locator("#replay section[data-seat]").count() == 2
    # ... and the cards no seat sees, in order, as the terminal viewer shows them
    piles = page.inner_text("#replay-piles")
    assert "deck (" in piles and "top first" in piles and "discard pile (" in piles, piles
    page.select_option("#replay-view", "0")
    page.wait_for_selector('#replay[data-view="0"]')
    doc_shot(p, "web-replay.png")

    # jump to a seq; the address keeps the place (a reload shows it again)
    last, before = at(p)["last_seq"], at(p)["step"]
    page.fill("#replay-seq", str(last // 2))
    page.click("#replay-jump button")
    # the jump's answer: the record that made that seq. Not "data-seq is N", which the
    # refused record shown before (seq 2 too, the next step) already was: under two busy
    # loops the answer came after the test read the page, the reload showed the jump's
    # record and the test waited for the old one
    page.wait_for_function("([s, b]) => { const a = window.wildtable.replay.at; return a.seq === s && a.step !== b; }",
                           arg=[last // 2, before])
    shown = at(p)
    assert shown["record"]["kind"] != "rejected", shown["record"]
    page.reload()
    page.wait_for_selector(f'#replay[data-step="{shown["step"]}"][data-view="0"]')
    step_to(p, "#replay-last", lambda a: a["step"] == a["steps"] - 1 and a["seq"] == last)
    assert "game over" in page.inner_text("#replay-status").lower()

    # back to the lobby: the page plays on as before
    page.click("#to-lobby")
    page.wait_for_selector("#create-btn")
    assert "connected as cat" in page.inner_text("#conn")


def test_replay_log_web_serves_the_viewer_on_loopback(players, web_server, tmp_path):
    table = web_server.run(play_out_with_a_refusal, web_server.url, ("dan", "eve"))
    # the players saw the game end before its last records reached the disk: copied at
    # once, the log was its header alone. The server replays it (200, not 409) once it
    # ends its game.
    for _ in range(100):
        if fetch(web_server.port, f"/replay/{table}.json")[0] == 200:
            break
        time.sleep(0.1)
    log = tmp_path / "game.wlog"        # a copy: a log of a live server's data dir earns a note on stderr
    log.write_bytes((web_server.data_dir / f"{table}.wlog").read_bytes())
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "wildtable", "replay", str(log), "--web", "--no-browser",
                             "--seat", "1", "--upto", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path)
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=20), "wildtable replay --web printed no address"
        line = proc.stdout.readline()
        url = re.fullmatch(r"replay at (http://127\.0\.0\.1:\d+/#replay=(\S+))\n", line)
        assert url and url.group(2).startswith(f"{table}&view=1&seq=3"), line
        p = players("local", viewport=DESKTOP)
        page = p.page
        page.goto(url.group(1))
        page.wait_for_selector('#replay[data-view="1"][data-seq="3"]')
        assert "no games here" in page.inner_text("#conn")
        assert page.locator("#to-lobby").count() == 0
        step_to(p, "#replay-first", lambda a: a["step"] == 0)
        step_to(p, "#replay-next-rejected", lambda a: a["record"]["kind"] == "rejected" and a["record"]["hidden"])
        page.keyboard.press("0")
        page.wait_for_selector('#replay[data-view="0"]')
        assert "9999" in page.inner_text("#replay-refusal")
        page.click("text=Finished games")
        page.wait_for_selector(f'[data-open="{table}"]')
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        err = proc.stderr.read()
        proc.stderr.close()
    assert not err.strip(), err
