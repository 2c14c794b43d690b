// One WebSocket to the page's own server (ws://HOST:PORT/, binary msgpack frames,
// docs/PROTOCOL.md), kept open: after a drop it connects again (with a growing pause)
// and says hello again; the app then rejoins its seat.

import { decode, encode } from "../vendor/msgpack/index.mjs";

export const PROTOCOL_VERSION = 1;

export class Connection {
  constructor({ name, onMessage, onState }) {
    this.name = name;
    this.onMessage = onMessage;
    this.onState = onState;       // (state, detail): "connecting" | "open" | "lost" | "closed"
    this.ws = null;
    this.pause = 500;
    this.stopped = false;
    this.welcome = null;
  }

  url() {
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
      if (!(ev.data instanceof ArrayBuffer)) return;
      let msg;
      try {
        msg = decode(new Uint8Array(ev.data));
      } catch (e) {
        this.onState("lost", `the server sent a frame that is not msgpack (${e.message})`);
        return;
      }
      if (msg && msg.type === "welcome") {
        this.welcome = msg;
        this.pause = 500;
        this.onState("open", msg.server || "");
      }
      this.onMessage(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.welcome = null;
      if (this.stopped) {
        this.onState("closed", "");
        return;
      }
      const why = ev.reason ? `${ev.code}: ${ev.reason}` : `code ${ev.code}`;
      this.onState("lost", `connection lost (${why}); connecting again in ${Math.round(this.pause / 100) / 10} s`);
      setTimeout(() => { if (!this.stopped) this.open(); }, this.pause);
      this.pause = Math.min(this.pause * 2, 10000);
    };
  }

  get ready() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN && this.welcome !== null;
  }

  send(msg) {
    if (this.ws === null || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(encode(msg));
    return true;
  }

  close() {
    this.stopped = true;
    if (this.ws) this.ws.close(1000, "bye");
  }
}
