// Play by dragging a card onto its target (issue #26; docs/PLAYING.md "In a browser"):
// pointer events, so a mouse and a finger drag alike. A card that can be dragged carries
// data-drag (what it is: "hand", "meld"), a place it can go data-drop (what it is: "trick",
// "meld", "new-meld", "seat", ...); the game's module says what a drop does (its `drop`,
// which sends the same intents as its buttons: the click, tap and keyboard paths stay whole).
// A press that moves less than SLOP pixels is a click, as before. While dragging, a copy of
// the card (the ghost) follows the pointer, fixed to the viewport, so an update that
// redraws the hand under it does not end the drag; the drop is found under the pointer when
// it is let go. Positions go through the CSSOM (el.style), which the page's CSP allows
// (it forbids style attributes in markup only).
//
// A finger (pointerType "touch") is not a mouse: on a phone most swipes that start on a card
// mean to scroll the page, so a finger drags a card only after a press and hold (HOLD ms,
// moving less than TOUCH_SLOP pixels meanwhile), as a list's items are picked up on a phone
// (Android's and iOS's drag and drop, SortableJS's delayOnTouchOnly, dnd-kit's TouchSensor):
// the card then lifts (its ghost appears under the finger) and follows it, and the page does
// not scroll until it is let go. A finger that moves before the hold scrolls the page as
// anywhere else (the cards' touch-action lets the browser pan, style.css), and plays nothing.
// A quick tap is a tap (a click), as before.

const SLOP = 6;
const HOLD = 250;           // ms a finger holds a card still before it drags it
const TOUCH_SLOP = 10;      // px a finger may stray during the hold (more: it scrolls)
let press = null;       // {pointerId, el, x0, y0, x, y, touch, held, timer, moved, ghost, over, from}
let swallowClick = false;

function datasetOf(el) {
  return { ...el.dataset };
}

function dropAt(x, y) {
  const el = document.elementFromPoint(x, y);
  return el ? el.closest("[data-drop]") : null;
}

function markOver(target) {
  if (press.over === target) return;
  if (press.over) press.over.classList.remove("drop-over");
  press.over = target;
  if (target) target.classList.add("drop-over");
}

function startGhost(ev) {
  const r = press.el.getBoundingClientRect();
  const ghost = press.el.cloneNode(true);
  ghost.removeAttribute("id");
  ghost.removeAttribute("data-card");        // not a card on the table (motion.js)
  ghost.removeAttribute("data-key");
  ghost.setAttribute("aria-hidden", "true");
  ghost.tabIndex = -1;
  ghost.classList.add("drag-ghost");
  ghost.style.width = `${r.width}px`;
  ghost.style.height = `${r.height}px`;
  press.dx = ev.clientX - r.left;
  press.dy = ev.clientY - r.top;
  document.body.append(ghost);
  press.ghost = ghost;
  press.el.classList.add("drag-source");
  document.documentElement.classList.add("dragging");
}

function moveGhost(ev) {
  press.ghost.style.left = `${ev.clientX - press.dx}px`;
  press.ghost.style.top = `${ev.clientY - press.dy}px`;
  markOver(dropAt(ev.clientX, ev.clientY));
}

function end() {
  if (!press) return;
  clearTimeout(press.timer);
  if (press.ghost) {
    press.ghost.remove();
    press.el.classList.remove("drag-source");
    document.documentElement.classList.remove("dragging");
    if (press.over) press.over.classList.remove("drop-over");
  }
  press = null;
}

// ``onDrop(from, to)``: from and to are the datasets of the card dragged and of the place
// it was dropped on; called only for a drop on a place (anywhere else: nothing happens).
export function enableDrag(root, onDrop) {
  root.addEventListener("pointerdown", (ev) => {
    if (press || ev.button !== 0 || !ev.isPrimary) return;
    const el = ev.target.closest("[data-drag]");
    if (!el || el.disabled || el.closest(".replay-board")) return;
    const touch = ev.pointerType === "touch";
    press = { pointerId: ev.pointerId, el, x0: ev.clientX, y0: ev.clientY, x: ev.clientX, y: ev.clientY, touch,
      held: !touch, timer: 0, moved: false, ghost: null, over: null, from: datasetOf(el) };
    if (touch) {
      // held still for HOLD ms: the card is picked up where the finger is now
      press.timer = setTimeout(() => {
        if (!press || !press.touch || press.ghost) return;
        if (!press.el.isConnected) {         // redrawn away under the finger: nothing to drag
          end();
          return;
        }
        press.held = true;
        const at = { clientX: press.x, clientY: press.y };
        startGhost(at);
        moveGhost(at);
      }, HOLD);
    }
    // no text selection and no native drag of the page's text from this press (a redraw
    // may take the card from under it, and a native drag takes the pointer away:
    // pointercancel); the press's one other default, the card's focus, is given here.
    // (For a finger this does not stop the page scrolling: touch-action decides that.)
    ev.preventDefault();
    el.focus({ preventScroll: true });
  });
  document.addEventListener("pointermove", (ev) => {
    if (!press || ev.pointerId !== press.pointerId) return;
    press.x = ev.clientX;
    press.y = ev.clientY;
    const moved = Math.hypot(ev.clientX - press.x0, ev.clientY - press.y0);
    if (!press.ghost) {
      if (!press.held) {
        // a finger that moves before the hold is a swipe: the browser scrolls, we let go
        if (moved >= TOUCH_SLOP) end();
        return;
      }
      if (moved < SLOP) return;
      startGhost(ev);
    }
    if (moved >= SLOP) press.moved = true;
    ev.preventDefault();
    moveGhost(ev);
  });
  // While a finger drags a card the page does not scroll (touch-action lets it pan, so the
  // touch's moves are cancelled instead: a listener that may cancel must not be passive).
  document.addEventListener("touchmove", (ev) => {
    if (press && press.touch && press.ghost && ev.cancelable) ev.preventDefault();
  }, { passive: false });
  // a finger held on a card opens no menu (Android's long press) while it picks the card up
  document.addEventListener("contextmenu", (ev) => {
    if (press && press.touch) ev.preventDefault();
  });
  document.addEventListener("pointerup", (ev) => {
    if (!press || ev.pointerId !== press.pointerId) return;
    // a finger held but never moved: a (slow) tap, not a drop on the card's own place
    const dragged = press.ghost !== null && !(press.touch && !press.moved);
    const target = dragged ? dropAt(ev.clientX, ev.clientY) : null;
    const from = press.from;
    end();
    if (!dragged) return;
    // the click that follows a drag's release is not a click on the card
    swallowClick = true;
    setTimeout(() => { swallowClick = false; }, 0);
    if (target) onDrop(from, datasetOf(target));
  });
  document.addEventListener("pointercancel", (ev) => {
    if (press && ev.pointerId === press.pointerId) end();
  });
  document.addEventListener("click", (ev) => {
    if (!swallowClick) return;
    swallowClick = false;
    ev.stopPropagation();
    ev.preventDefault();
  }, true);
  // Escape drops nothing: the card goes back
  document.addEventListener("keydown", (ev) => {
    if (press && press.ghost && ev.key === "Escape") end();
  });
}
