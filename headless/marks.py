"""The marks of `replay --analyze`: how much a move may give away against the expert's best
before it is marked (docs/PLAYING.md "Hints and analysis"). Apart from appraise.py so
that a game's module can name its own without importing the games' registry."""

from __future__ import annotations

import attrs


@attrs.frozen
class Marks:
    """How much a move may give away against the expert's best before it is marked, in the
    unit of the game's values (docs/PLAYING.md "Hints and analysis"): at least
    ``inaccuracy`` "?!", ``mistake`` "?", ``blunder`` "??", as chess sites mark moves."""
    inaccuracy: float
    mistake: float
    blunder: float
    unit: str

    def mark(self, loss: float | None) -> str:
        if loss is None:
            return ""
        return "??" if loss >= self.blunder else "?" if loss >= self.mistake else "?!" if loss >= self.inaccuracy else ""


#: values that are the chance to win the game (the experts that weigh the game's totals):
#: 5, 10 and 20 points of chance, as chess sites mark drops in winning chances
WIN_MARKS = Marks(0.05, 0.10, 0.20, "chance to win")
