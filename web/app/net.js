// One WebSocket to the page's own server (ws://HOST:PORT/, binary msgpack frames,
// docs/PROTOCOL.md), kept open: after a drop it connects again (with a growing pause)
// and says hello again; the app then rejoins its seat.
//
// The pause (0.5 s, doubled at each failed try up to 10 s) goes back to 0.5 s only once a
// connection has stayed up STEADY_MS after its welcome, not at every welcome: a page sent
// again and again to a dead node of a cluster is welcomed by its own server at every
// round (which redirects it to the dead node again), and with a reset at each welcome it
// retried every 0.5 s forever.
//
// On a cluster (docs/PROTOCOL.md "Clusters") the page's server may answer `redirect`:
// `follow` connects to the node named instead, says hello with the same name and sends
// the message there again. A drop reconnects to that node; a node that cannot be reached
// sends the page back to its own server (the cluster's entry), which redirects again.

import { decode, encode } from "../vendor/msgpack/index.mjs";

export const PROTOCOL_VERSION = 2;       // 2: updates may be patches (docs/PROTOCOL.md "update")

const FIRST_PAUSE = 500;        // ms before connecting again after the first failure
const LONGEST_PAUSE = 10000;
const STEADY_MS = 3000;         // a connection up this long after its welcome: the pause is reset
                                // (a redirect hop, or a node that welcomes and drops, is far shorter)
// The server closes a connection that sends no message for 600 s (docs/PROTOCOL.md
// "Connection lifetime"; WebSocket pings do not count, and a page cannot send one): a page
// with nothing to say for KEEPALIVE_MS (a spectator, a player waiting for a table to fill or
// for a long turn) sends list_tables, as the terminal client does (headless/core.py).
export const KEEPALIVE_MS = 240000;
const KEEPALIVE_LOOK_MS = 30000;  // how often the page looks whether it was silent that long

export class Connection {
  constructor({ name, onMessage, onState }) {
    this.name = name;
    this.onMessage = onMessage;
    this.onState = onState;       // (state, detail): "connecting" | "open" | "lost" | "closed"
    this.ws = null;
    this.pause = FIRST_PAUSE;     // the wait before the next try after a failure
    this.steady = null;           // the timer that resets it once a connection stayed up
    this.stopped = false;
    this.welcome = null;
    this.node = null;             // the cluster node this page was sent to; null: the page's own server
    this.resend = null;           // the message to send again once that node says welcome
    this.lastSent = 0;            // performance.now() of the last message sent
    this.keepalive = setInterval(() => {
      if (this.ready && performance.now() - this.lastSent >= KEEPALIVE_MS) this.send({ type: "list_tables" });
    }, KEEPALIVE_LOOK_MS);
  }

  url() {
    if (this.node) return this.node;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${location.host}/`;
  }

  open() {
    this.onState("connecting", "");
    const ws = new WebSocket(this.url());
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => {
      this.send({ type: "hello", version: PROTOCOL_VERSION, name: this.name, client: "wildtable-web" });
    };
    ws.onmessage = (ev) => {
      // a socket this page has left (follow) may still deliver what was on its way: not ours now
      if (this.ws !== ws || !(ev.data instanceof ArrayBuffer)) return;
      let msg;
      try {
        msg = decode(new Uint8Array(ev.data));
      } catch (e) {
        this.onState("lost", `the server sent a frame that is not msgpack (${e.message})`);
        return;
      }
      if (msg && msg.type === "welcome") {
        this.welcome = msg;
        clearTimeout(this.steady);
        this.steady = setTimeout(() => {
          if (this.ws === ws && this.welcome !== null) this.pause = FIRST_PAUSE;
        }, STEADY_MS);
        this.onState("open", msg.server || "");
        if (this.resend) {
          // here after a redirect: the message it was about, not a fresh start
          const again = this.resend;
          this.resend = null;
          this.send(again);
          return;
        }
      }
      this.onMessage(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      const welcomed = this.welcome !== null;     // (set by this socket's welcome only)
      this.ws = null;
      this.welcome = null;
      clearTimeout(this.steady);
      if (this.stopped) {
        this.onState("closed", "");
        return;
      }
      const why = ev.reason ? `${ev.code}: ${ev.reason}` : `code ${ev.code}`;
      if (this.node && !welcomed) {
        // the node we were sent to cannot be reached: back to the page's own server
        // after the pause, which grows: the page's server may send it to the same node again
        const dead = this.node;
        this.node = null;
        this.resend = null;
        this.onState("lost", `cannot reach ${dead} (${why}); connecting to this page's server again in ${this.later()}`);
        return;
      }
      this.onState("lost", `connection lost (${why}); connecting again in ${this.later()}`);
    };
  }

  // Connect again after the pause, and double the pause for the next failure; the wait, in words.
  later() {
    const wait = this.pause;
    setTimeout(() => { if (!this.stopped) this.open(); }, wait);
    this.pause = Math.min(this.pause * 2, LONGEST_PAUSE);
    return `${Math.round(wait / 100) / 10} s`;
  }

  get ready() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN && this.welcome !== null;
  }

  send(msg) {
    if (this.ws === null || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(encode(msg));
    this.lastSent = performance.now();
    return true;
  }

  // Go to the cluster node at ``url`` (ws:// or wss://) and send ``msg`` there once it
  // says welcome; the connection to this node is closed.
  follow(url, msg) {
    const old = this.ws;
    this.ws = null;                 // its close is not a drop to reconnect after
    this.welcome = null;
    clearTimeout(this.steady);      // nor a connection that stayed up
    this.node = url;
    this.resend = msg;
    if (old) old.close(1000, "redirected");
    this.open();
  }

  close() {
    this.stopped = true;
    clearInterval(this.keepalive);
    if (this.ws) this.ws.close(1000, "bye");
  }
}
