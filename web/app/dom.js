// Building the page. Every string goes in as a text node (textContent), never as markup:
// player names and every other text from a peer are shown as text, whatever they hold.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "onclick" || k === "onsubmit" || k === "oninput" || k === "onchange" || k === "onkeydown") {
      el.addEventListener(k.slice(2), v);
    } else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "text") el.textContent = String(v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function button(label, onclick, attrs = {}) {
  return h("button", { type: "button", ...attrs, onclick }, label);
}

// Keep the element that had the focus focused across a redraw: if the redraw replaced or
// moved it, its successor is found by its data-key. An element the redraw kept in place
// keeps the focus by itself, and is not focused again (focus() makes the browser lay the
// page out at once, the dearest step of a redraw).
export function keepFocus(root, draw) {
  const active = document.activeElement;
  const key = active && root.contains(active) ? active.dataset.key : undefined;
  draw();
  if (key !== undefined && document.activeElement !== active) {
    const again = root.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
}

// ------------------------------------------------------------------ redrawing what changed
// A screen that changes often (a Run Wild table) keeps its elements from one drawing to
// the next and rewrites only what changed: `kept` remakes an element only when its
// signature changed (a string of everything it was made from, its handlers' data
// included, compared with ===; or an object that stands for it); `keyed` does so for a
// list, one element per key; `put` makes a parent's children exactly the ones given,
// removing what went and moving only what is out of place; `attr` and `text` write a value
// only if it differs. Text still goes in as text nodes only.

export function kept(cache, key, sig, make) {
  const old = cache.get(key);
  if (old && old.sig === sig) return old.el;
  const el = make();
  cache.set(key, { sig, el });
  return el;
}

// ``items`` drawn as elements, each kept while keyOf(item) and sigOf(item) stay the same;
// ``cache`` (a Map of this list's own) forgets the keys no longer in the list.
export function keyed(cache, items, keyOf, sigOf, make) {
  const keys = items.map(keyOf);
  const els = items.map((item, i) => kept(cache, keys[i], sigOf(item), () => make(item)));
  forget(cache, keys);
  return els;
}

// ``cache`` (a Map) forgets every key not in ``keys``: what is no longer drawn.
export function forget(cache, keys) {
  const now = new Set(keys);
  for (const k of [...cache.keys()]) if (!now.has(k)) cache.delete(k);
}

// New elements (not yet children of ``parent``: a new hand, a new meld's cards) that go in
// side by side are gathered in one fragment and inserted at once: one insertion into the
// page, not one per card (bench/README.md "Fewer elements per face").
export function put(parent, ...children) {
  const list = children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false && c !== "");
  // the children as they are already (most of a drawing): nothing to do
  let same = list.length === parent.childNodes.length;
  for (let i = 0, n = parent.firstChild; same && i < list.length; i++, n = n.nextSibling) same = list[i] === n;
  if (same) return parent;
  const wanted = new Set(list.filter((c) => c instanceof Node));
  let at = parent.firstChild;
  let batch = null;
  const flush = () => {
    if (batch) parent.insertBefore(batch, at);
    batch = null;
  };
  for (const c of list) {
    if (c instanceof Node && c.parentNode !== parent) {
      (batch ||= document.createDocumentFragment()).append(c);
      continue;
    }
    if (c instanceof Node) {
      // what goes away goes first, so that what stays is not moved (a move loses the focus)
      while (at && at !== c && !wanted.has(at)) {
        const next = at.nextSibling;
        parent.removeChild(at);
        at = next;
      }
      flush();
      if (c === at) at = at.nextSibling;
      else parent.insertBefore(c, at);
    } else if (at && at.nodeType === Node.TEXT_NODE && at.data === String(c)) {
      flush();
      at = at.nextSibling;
    } else {
      (batch ||= document.createDocumentFragment()).append(document.createTextNode(String(c)));
    }
  }
  while (at) {
    const next = at.nextSibling;
    parent.removeChild(at);
    at = next;
  }
  flush();
  return parent;
}

// an attribute as h() sets it (null, undefined or false: absent; true: present, empty)
export function attr(el, name, value) {
  if (value === undefined || value === null || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
    return el;
  }
  const s = value === true ? "" : String(value);
  if (el.getAttribute(name) !== s) el.setAttribute(name, s);
  return el;
}

export function text(el, value) {
  const s = String(value);
  if (el.textContent !== s) el.textContent = s;
  return el;
}
