"""`wildtable replay LOG` in a real terminal (tmux) on a damaged log (issue #27): the
viewer opens on the records before the damage, says DAMAGED on its top line and where on
its note line, finds with / and n, filters with f, and exits 1 when quit."""

from __future__ import annotations

from wildtable.headless.timeline import Timeline
from wildtable.protocol.logfmt import ChanceRecorded, IntentRejected, read_log, read_prefix

from logs import selfplay_log
from tmuxkit import session

DATA = selfplay_log(seats=3, seed=7, settings={"rounds": 3}, refused=3)


def test_the_viewer_of_a_damaged_log_in_a_terminal(tmp_path):
    offsets = read_log(DATA).offsets
    bad = bytearray(DATA)
    cut = len(offsets) * 3 // 4
    bad[offsets[cut] + 9] ^= 0x01
    log = tmp_path / "b.wlog"
    log.write_bytes(bytes(bad))
    tl = Timeline(read_prefix(bytes(bad)))
    chances = [i for i, s in enumerate(tl.steps) if type(s.record) is ChanceRecorded]
    refused = [i for i, s in enumerate(tl.steps) if type(s.record) is IntentRejected]
    with session("replay-damaged", "replay", log.name, width=120, height=30, cwd=tmp_path) as tmux:
        tmux.wait_for("DAMAGED: ends early")
        tmux.wait_for(f"byte offset {offsets[cut]}")
        tmux.keys("/")
        tmux.wait_for("search forward for")     # the prompt is up: what is typed goes there
        tmux.type("shuffle of")
        tmux.wait_for(f"record {chances[1]}/{cut} ")
        tmux.keys("n")
        tmux.wait_for(f"record {chances[2]}/{cut} ")
        tmux.keys("f")
        tmux.wait_for("filter: seat N")
        tmux.type("refused")
        tmux.wait_for("filter: refused only (3)")
        tmux.keys("End")
        tmux.wait_for(f"record {refused[-1]}/{cut} ")
        tmux.keys("q")
        tmux.wait_for("client exited with status 1", timeout=15)
