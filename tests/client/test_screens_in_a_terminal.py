"""The full-screen client in a real terminal (tmux): event lines that arrived while the
terminal was narrow are laid out again when it widens (not left wrapped at 10 columns);
the help window flows paragraphs wrapped by hand; the events pane scrolls by keyboard;
Wild Shots' table fits at 80 and 100 columns (its header does not wrap)."""

from __future__ import annotations

import pytest

import tmuxkit


def _session(name: str, *argv: str, width: int = 80, height: int = 24):
    return tmuxkit.session(name, "play", "--name", "ann", "--bot-delay", "60", *argv, width=width, height=height)


def test_events_from_a_narrow_terminal_are_laid_out_again_when_it_widens():
    with _session("wildtable-rewrap", "--game", "run-wild", "--bots", "1", width=100) as tmux:
        tmux.wait_for("│bot1 took seat 1", timeout=20)
        tmux("resize-window", "-t", "main", "-x", "50", "-y", "24")
        tmux.wait_gone("│bot1 took seat 1")              # the events pane steps aside below 64 columns
        tmux.type("ready")                                  # an event arrives while it is hidden
        tmux.wait_for("ok: ready")
        tmux("resize-window", "-t", "main", "-x", "100", "-y", "24")
        tmux.wait_for("│bot1 took seat 1")
        # one line at the pane's width, not wrapped at 10 columns as it was while hidden
        tmux.wait_for("│you are ready")
        tmuxkit.quit_client(tmux)


def test_help_window_flows_hand_wrapped_paragraphs():
    with _session("wildtable-help", "--game", "run-wild", "--bots", "1", width=120, height=40) as tmux:
        tmux.wait_for("Your hand (8)", timeout=20)
        tmux.keys("F1")
        tmux.wait_for("Help - Esc closes")
        # "... W=5 a wild as 5," ended a line of the help text: the window joins it to the next
        tmux.wait_for("W=5 a wild as 5, D3 a Draw-3.")
        tmux.keys("Escape")
        tmuxkit.quit_client(tmux)


def test_events_pane_scrolls_by_keyboard():
    with _session("wildtable-scroll", "--game", "run-wild", "--bots", "1", width=80, height=24) as tmux:
        tmux.wait_for("Your hand (8)", timeout=20)
        # the start's last line (the bots' answer comes after the deal, so after the hand)
        tmux.wait_for("│every seat is taken")
        for _ in range(4):
            tmux.type("show")                               # the table as text, into the events pane
        tmux.type("zz9")                                    # refused: the last line, at the bottom
        tmux.wait_for("│refused: zz9")
        tmux.wait_gone("│connected to")                     # scrolled off the top
        for _ in range(12):
            tmux.keys("S-PPage")
            if "│connected to" in tmux.screen():
                break
        tmux.wait_for("│connected to")
        assert "│refused: zz9" not in tmux.screen()
        tmux.keys("C-End")
        tmux.wait_for("│refused: zz9")
        tmuxkit.quit_client(tmux)


@pytest.mark.parametrize("width", [80, 100])
def test_wild_shots_table_fits_the_terminal(width):
    with _session(f"wildtable-ws{width}", "--game", "wild-shots", "--bots", "3", "--set", "turn_timer=0",
                  width=width, height=30) as tmux:
        tmux.wait_for("TRUMP:", timeout=20)
        lines = tmux.screen().splitlines()
        head = next(x for x in lines if "Wild Shots - round 1 of 4" in x)
        assert " to play" in head or "YOUR TURN" in head, lines
        assert any(x.startswith("hits: ") for x in lines), lines
        assert any("TRUMP:" in x and "Snake Oil left" in x for x in lines), lines
        rows = [x for x in lines if " hand 10 tricks" in x]
        assert len(rows) == 4 and all(x.split("│")[0].rstrip().endswith(("penalty 0", "TO PLAY", "TO LEAD"))
                                      for x in rows), rows
        tmuxkit.quit_client(tmux)


def test_the_table_window_of_a_narrow_terminal_keeps_its_lines():
    """Only help is flowed as paragraphs: `show` in a narrow terminal (a window, since the
    events pane stepped aside) keeps the table's lines as they are."""
    with _session("wildtable-showwin", "--game", "run-wild", "--bots", "1", width=50) as tmux:
        tmux.wait_for("Your hand (8)", timeout=20)
        tmux.type("show")
        tmux.wait_for("The table - Esc closes")
        tmux.wait_for("┃ melds: none yet")
        tmux.wait_for("┃ your hand (8): ")
        tmux.keys("Escape")
        tmuxkit.quit_client(tmux)
