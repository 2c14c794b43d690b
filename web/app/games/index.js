// One module per game, as in headless/games: how a view is drawn, which actions its buttons
// send, how events read. The rules stay in Python: the page draws views and sends intents.

import runWild from "./run_wild.js";
import goWild from "./go_wild.js";
import wildShots from "./wild_shots.js";
import goFish from "./go_fish_wildcard.js";
import generic from "./generic.js";

export const GAMES = [runWild, goWild, wildShots, goFish];

export function gameFor(name) {
  return GAMES.find((g) => g.name === name) || { ...generic, name, title: name };
}

export { seatName, seatList, phaseWords } from "./names.js";
