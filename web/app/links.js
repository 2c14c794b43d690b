// A table's address (issue #26; docs/PLAYING.md "In a browser", Links): this page's with
// #t=ID. main.js opens it (openLink: rejoin this browser's seat under the same name, else
// join, else watch); here: reading it, writing it to the address bar, and the box that
// shows it with "Copy link".

import { button, h, text } from "./dom.js";

export function linkedTable() {
  const m = /^#t=([^&]+)$/.exec(location.hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

function tableLink(id) {
  return `${location.origin}${location.pathname}#t=${encodeURIComponent(id)}`;
}

// the address bar names the table the tab is at, or none
export function showLink(id) {
  const want = id ? `#t=${encodeURIComponent(id)}` : "";
  if (location.hash === want || (!id && !location.hash.startsWith("#t="))) return;
  history.replaceState(null, "", `${location.pathname}${location.search}${want}`);
}

// The table's address, to send to a friend: selected and copied by "Copy link" (the
// clipboard is there on https and localhost; elsewhere the address stays selected).
export function linkBox(id) {
  const input = h("input", { id: "table-link", readonly: true, value: tableLink(id), size: 28, "data-key": "table-link" });
  const copy = button("Copy link", async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(input.value);
      text(copy, "Copied");
    } catch {
      text(copy, "Selected: copy it");
    }
  }, { class: "small", id: "copy-link", "data-key": "copy-link" });
  return h("p", { class: "tablelink" }, h("label", { for: "table-link" }, "Link for friends "), input, " ", copy);
}
