"""Wild Shots deck data: the 40 cards, their symbols, the Snake Oil pile, the overview card.

Pure data (a Python literal; protocol/ does no file I/O). The printed card-to-symbol
table and the Snake Oil split are not public (docs/DECISIONS.md "Wild Shots", line
"The printed card-to-symbol table and the Snake Oil split are NOT public"), so what
follows is a RECONSTRUCTION. It agrees with every example of the rulebook and of
docs/DECISIONS.md "Wild Shots" and with the published counts; a table replaces it with the settings
"symbols" and "snake_oil" (see docs/RULES.md "Wild Shots").

Card ids are stable for the whole game (docs/DECISIONS.md "All games"):
    id = SUITS.index(suit) * 10 + (value - 1)
so black 1..10 are ids 0..9, red 1..10 ids 10..19, green 20..29, blue 30..39.
"""

from __future__ import annotations

# Rulebook "Components": 10 cards each in black, red, green and blue, numbered 1 to 10.
SUITS: tuple[str, ...] = ("black", "red", "green", "blue")
VALUES: tuple[int, ...] = tuple(range(1, 11))

# Rulebook "Components": cowboy hat, sheriff star, revolver, wanted poster.
# Internal symbol numbers are the index in this tuple; -1 means "no symbol".
SYMBOLS: tuple[str, ...] = ("revolver", "hat", "star", "poster")
NO_SYMBOL = "none"

# docs/DECISIONS.md "Wild Shots": counts revolver 10, hat 7, star 5, poster 4; 14 cards without.
SYMBOL_COUNTS: dict[str, int] = {"revolver": 10, "hat": 7, "star": 5, "poster": 4, "none": 14}

# The reconstruction. Fixed by the rulebook / docs/DECISIONS.md "Wild Shots" examples:
#   red 3 star; red 8 hat; black 9 hat; red 9 revolver; green 9 revolver;
#   red 1, red 2, red 7 no symbol (scoring example and classic-trick example);
#   red 4 and black 7 share one symbol (poster here) that red 2 and red 10 lack
#   (first trick example: "black trump 7 is higher than the red trump 4").
# Red 5 is given no symbol as well, so the "classic trick (no trump)" example
# (red 5, red 1, red 7, red 2) holds whatever Snake Oil card is revealed.
# Every other card is a free choice spreading the counts over the suits.
CARD_SYMBOLS: dict[str, str] = {
    "black 1": "revolver", "black 2": "none", "black 3": "star", "black 4": "none",
    "black 5": "revolver", "black 6": "hat", "black 7": "poster", "black 8": "none",
    "black 9": "hat", "black 10": "revolver",
    "red 1": "none", "red 2": "none", "red 3": "star", "red 4": "poster",
    "red 5": "none", "red 6": "revolver", "red 7": "none", "red 8": "hat",
    "red 9": "revolver", "red 10": "hat",
    "green 1": "none", "green 2": "hat", "green 3": "revolver", "green 4": "star",
    "green 5": "none", "green 6": "poster", "green 7": "none", "green 8": "revolver",
    "green 9": "revolver", "green 10": "none",
    "blue 1": "star", "blue 2": "revolver", "blue 3": "none", "blue 4": "hat",
    "blue 5": "poster", "blue 6": "none", "blue 7": "revolver", "blue 8": "star",
    "blue 9": "hat", "blue 10": "none",
}

# The 14 Snake Oil cards, one symbol each (docs/DECISIONS.md "Facts from outside the rulebooks": "Each of the 14 Snake Oil cards
# shows one symbol"). The split is our choice: as even as 14 cards over 4 symbols allows,
# the two commoner card symbols (revolver, hat) getting the extra card.
SNAKE_OIL: dict[str, int] = {"revolver": 4, "hat": 4, "star": 3, "poster": 3}
SNAKE_OIL_CARDS = 14

# Rulebook "Components", round overview card: penalty points per hit, by round.
ROUND_OVERVIEW: tuple[dict[str, int], ...] = (
    {"revolver": 2},
    {"hat": 3},
    {"star": 4, "poster": 5},
    {"revolver": 2, "hat": 3, "star": 4, "poster": 5},
)

HAND_SIZE = 10        # Setup: "Each player receives 10 cards."
TRICKS_PER_ROUND = 10  # Round Sequence: "A round consists of 10 tricks".
