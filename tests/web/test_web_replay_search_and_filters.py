"""The web replay viewer finds things (issue #27), as the terminal viewer does: a search
box (`/` goes to it) finds the next record whose line holds a text, `<` the one before,
`n` and `N` repeat; "show" filters: refused only, one seat's records, an action kind, and
the arrows then step through what passes. Served by `wildtable replay LOG --web`."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys

from wildtable.headless.timeline import Timeline
from wildtable.protocol.logfmt import ChanceRecorded, IntentRejected, read_log

from webkit import DESKTOP

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "replay"))
from logs import selfplay_log  # noqa: E402

DATA = selfplay_log(seats=3, seed=7, settings={"rounds": 3}, refused=3)
TL = Timeline(read_log(DATA))
CHANCES = [i for i, s in enumerate(TL.steps) if type(s.record) is ChanceRecorded]
REFUSED = [i for i, s in enumerate(TL.steps) if type(s.record) is IntentRejected]


def at(page) -> dict:
    return page.evaluate("() => window.wildtable.replay.at")


def wait_step(page, step: int) -> None:
    page.wait_for_selector(f'#replay[data-step="{step}"]')


def test_search_and_filters_in_the_browser(players, tmp_path):
    log = tmp_path / "game.wlog"
    log.write_bytes(DATA)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "wildtable", "replay", str(log), "--web", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=20), "wildtable replay --web printed no address"
        url = re.fullmatch(r"replay at (http://127\.0\.0\.1:\d+/\S+)\n", proc.stdout.readline())
        page = players("local", viewport=DESKTOP).page
        page.goto(url.group(1))
        wait_step(page, 0)
        # search: / goes to the box; Enter finds the next; n again; N back; < before
        page.keyboard.press("/")
        page.keyboard.type("shuffle OF")
        page.keyboard.press("Enter")
        wait_step(page, CHANCES[1])
        page.click("#replay-pos")          # out of the box: the keys are the viewer's again
        page.keyboard.press("n")
        wait_step(page, CHANCES[2])
        page.keyboard.press("N")
        wait_step(page, CHANCES[1])
        page.fill("#replay-find", "no such words")
        page.click("#replay-find-next")
        page.wait_for_selector("#replay-note")
        assert "is not found after this record" in page.inner_text("#replay-note")
        assert at(page)["step"] == CHANCES[1]
        # filters: refused only; the arrows step through them
        page.select_option("#replay-only", "refused")
        page.wait_for_selector("#replay-only-count")
        assert at(page)["only"]["count"] == 3 and "3 shown" in page.inner_text("#replay-only-count")
        page.click("#replay-next")
        wait_step(page, REFUSED[0])
        page.click("#replay-pos")
        page.keyboard.press("ArrowRight")
        wait_step(page, REFUSED[1])
        assert all("REJECTED" in x for x in page.locator("#replay-records li").all_inner_texts())
        # one seat's records, then an action kind typed
        seat = TL.steps[REFUSED[1]].record.seat
        page.select_option("#replay-only", f"seat:{seat}")
        page.wait_for_function("s => window.wildtable.replay.at.only && "
                               "window.wildtable.replay.at.only.filter === `seat ${s}`", arg=seat)
        page.fill("#replay-kind", "chance")
        page.press("#replay-kind", "Enter")
        page.wait_for_function(f"() => window.wildtable.replay.at.only && "
                               f"window.wildtable.replay.at.only.count === {len(CHANCES)}")
        page.select_option("#replay-only", "")
        page.wait_for_function("() => !window.wildtable.replay.at.only")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
