// What the browser keeps between visits (localStorage): the player's name, and each seat
// token, per server (host:port), table and player name, so that a reload or a dropped
// connection takes the seat back with `rejoin`. A token is a secret: it stays in this
// browser's storage for this server's origin only.

const NAME = "wildtable.name";
const SEATS = "wildtable.seats";
const CURRENT = "wildtable.current";

function read(key, fallback) {
  try {
    const v = JSON.parse(localStorage.getItem(key));
    return v === null ? fallback : v;
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or disabled: the seat is not kept across a reload, play goes on
  }
}

const server = () => location.host;
const seatKey = (table, name) => `${server()} ${table} ${name}`;

export const store = {
  name: () => read(NAME, ""),
  setName: (name) => write(NAME, name),
  seat(table, name) {
    return read(SEATS, {})[seatKey(table, name)] || null;
  },
  keepSeat(table, name, seat, token, game) {
    const all = read(SEATS, {});
    all[seatKey(table, name)] = { seat, token, game, at: Date.now() };
    // keep the 50 newest
    const keys = Object.keys(all).sort((a, b) => all[b].at - all[a].at);
    for (const k of keys.slice(50)) delete all[k];
    write(SEATS, all);
  },
  dropSeat(table, name) {
    const all = read(SEATS, {});
    delete all[seatKey(table, name)];
    write(SEATS, all);
  },
  // the table this page sits at (per server), to go back to after a reload
  current: () => read(CURRENT, {})[server()] || null,
  setCurrent(value) {
    const all = read(CURRENT, {});
    if (value) all[server()] = value;
    else delete all[server()];
    write(CURRENT, all);
  },
};
