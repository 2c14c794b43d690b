// What the browser keeps between visits. Each tab is a player of its own (issue #26: two
// tabs of one browser, two names, two seats): the tab's name and the table it sits at are
// kept in sessionStorage, which is the tab's own and survives its reloads. localStorage,
// shared by every tab of this origin, keeps only the last name typed, a default offered to
// a new tab, and each seat token per server (host:port), table and player name, so that a
// reload or a dropped connection takes the seat back with `rejoin`. Tabs with two names
// never share a token; a tab never takes a seat it did not sit at unless its player asks
// (the lobby's Rejoin, or a link to that table under the same name). A token is a secret:
// it stays in this browser's storage for this server's origin only.

const NAME = "wildtable.name";
const SEATS = "wildtable.seats";
const CURRENT = "wildtable.current";

function read(area, key, fallback) {
  try {
    const v = JSON.parse(area.getItem(key));
    return v === null ? fallback : v;
  } catch {
    return fallback;
  }
}

function write(area, key, value) {
  try {
    area.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or disabled: the seat is not kept across a reload, play goes on
  }
}

const local = () => globalThis.localStorage;
const tab = () => globalThis.sessionStorage;
const server = () => location.host;
const seatKey = (table, name) => `${server()} ${table} ${name}`;

export const store = {
  // this tab's name; a new tab has none yet
  tabName: () => read(tab(), NAME, ""),
  // the name offered on the name screen: this tab's, else the last one typed in this browser
  name: () => read(tab(), NAME, "") || read(local(), NAME, ""),
  setName(name) {
    write(tab(), NAME, name);
    write(local(), NAME, name);
  },
  seat(table, name) {
    return read(local(), SEATS, {})[seatKey(table, name)] || null;
  },
  keepSeat(table, name, seat, token, game) {
    const all = read(local(), SEATS, {});
    all[seatKey(table, name)] = { seat, token, game, at: Date.now() };
    // keep the 50 newest
    const keys = Object.keys(all).sort((a, b) => all[b].at - all[a].at);
    for (const k of keys.slice(50)) delete all[k];
    write(local(), SEATS, all);
  },
  dropSeat(table, name) {
    const all = read(local(), SEATS, {});
    delete all[seatKey(table, name)];
    write(local(), SEATS, all);
  },
  // the table this tab sits at (per server), to go back to after a reload
  current: () => read(tab(), CURRENT, {})[server()] || null,
  setCurrent(value) {
    const all = read(tab(), CURRENT, {});
    if (value) all[server()] = value;
    else delete all[server()];
    write(tab(), CURRENT, all);
  },
};
