"""Two browsers (two contexts: two players) and a terminal client (`wildtable play
--plain`, a real subprocess) at one Run Wild table: all play, and all see the same table
(every seat's hand and pile counts, the melds), the browsers by their pages, the terminal
by `show`."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time

from webkit import DESKTOP


class Terminal:
    """`wildtable play URL --plain ...` with its stdout read line by line in a thread."""

    def __init__(self, argv: list[str]):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "wildtable", "play", *argv], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, text: str) -> None:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def until(self, pattern: str, timeout: float = 10) -> re.Match:
        end = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} in {timeout} s:\n" + "\n".join(self.seen[-30:])) from None
            assert line is not None, "the terminal client ended:\n" + "\n".join(self.seen[-30:])
            self.seen.append(line)
            if hit := re.search(pattern, line):
                return hit

    def show(self) -> dict:
        """The table as the terminal shows it: {name: (hand, pile)} and the melds line."""
        self.send("show")
        self.until(r"^show Run Wild")
        seats, melds = {}, None
        while melds is None:
            line = self.until(r"^show ")
            if hit := re.match(r"^show\s+(.+?)(?: \(you\))?: hand (\d+), pile (\d+)", line.string):
                seats[hit[1]] = (int(hit[2]), int(hit[3]))
            elif line.string.startswith("show melds"):
                melds = line.string
        return {"seats": seats, "melds": melds}

    def quit(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(10)
        except Exception:           # noqa: BLE001 - ended below either way
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)


def browser_table(p) -> dict:
    st = p.state()
    seats = {}
    for pl in st["view"]["players"]:
        name = next(x["name"] for x in st["players"] if x["seat"] == pl["seat"])
        seats[name] = (pl["hand"], pl["pile"])
    # what the page shows for each seat, in words
    return {"seats": seats, "melds": len(st["view"]["melds"]), "seq": st["seq"]}


def test_two_browsers_and_a_terminal_see_the_same_table(players, web_server):
    ann = players("ann", viewport=DESKTOP).open()
    ann.enter("ann")
    table = ann.create("run-wild", 3, rounds=1, idle_timeout=120)
    bea = players("bea").open()
    bea.enter("bea")
    bea.page.click(f'tr[data-table="{table}"] [data-action="join"]')
    bea.page.wait_for_selector(f'#table[data-table="{table}"]')
    term = Terminal([web_server.url, "--plain", "--table", table, "--seat", "2", "--name", "tess"])
    try:
        term.until(r"^info joined table")
        for p in (ann, bea):
            p.page.wait_for_selector('[data-action="ready"]', timeout=10_000)
            p.page.wait_for_function("() => window.wildtable.at.players.some(x => x.name === 'tess')")
            assert "tess" in p.page.inner_text(".players")
            p.click_and_wait('[data-action="ready"]')
        term.send("ready")
        for p in (ann, bea):
            p.page.wait_for_function("() => window.wildtable.at.view.phase === 'playing'", timeout=10_000)
        term.until(r"^event .*(Go|go|started)")
        # all play: the browsers draw by a click, the terminal by a command
        ann.click_and_wait('[data-action="draw"]')
        bea.click_and_wait('[data-action="draw"]')
        bea.click_and_wait('[data-action="draw"]')
        term.send("draw")
        for p in (ann, bea):
            p.page.wait_for_function("() => window.wildtable.at.view.players.map(x => x.hand).join() === '9,10,9'",
                                     timeout=10_000)
        # the same table on all three screens
        want = browser_table(ann)
        assert browser_table(bea) == want
        assert want["seats"] == {"ann": (9, 15), "bea": (10, 14), "tess": (9, 15)}, want
        for _ in range(20):
            got = term.show()
            if got["seats"] == want["seats"]:
                break
            time.sleep(0.1)
        assert got["seats"] == want["seats"], (got, want)
        assert "none" in got["melds"] and want["melds"] == 0
        # and each page's words say the same counts
        for p, me in ((ann, "ann"), (bea, "bea")):
            text = p.page.inner_text(".players")
            for name, (hand, pile) in want["seats"].items():
                assert re.search(rf"{'you' if name == me else name}\s+hand {hand}, pile {pile}", text), text
    finally:
        term.quit()
