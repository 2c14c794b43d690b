// A game this page has no module for: its view as text, and nothing to click.
import { h } from "../dom.js";
import { phaseWords } from "./names.js";

export default {
  name: "",
  title: "",
  status: (ctx) => phaseWords(ctx.view.phase),
  render(ctx) {
    return { board: h("pre", { class: "raw" }, JSON.stringify(ctx.view, null, 1)), actions: [] };
  },
  describe: (ev) => ev.event || JSON.stringify(ev),
};
