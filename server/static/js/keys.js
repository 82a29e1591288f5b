// Keyboard: arrow keys move focus between cards by their position on screen.

const FOCUSABLE = "[data-loc]:not([hidden])";

/** Move focus from `from` to the nearest visible card or slot in the arrow's direction. */
export function moveFocus(root, from, key) {
  const dir = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[key];
  if (!dir) return false;
  const origin = centre(from.getBoundingClientRect());
  let best = null;
  let bestScore = Infinity;
  for (const el of root.querySelectorAll(FOCUSABLE)) {
    if (el === from || !el.getClientRects().length) continue;
    const c = centre(el.getBoundingClientRect());
    const along = (c.x - origin.x) * dir[0] + (c.y - origin.y) * dir[1];
    if (along <= 2) continue;
    const across = Math.abs((c.x - origin.x) * dir[1]) + Math.abs((c.y - origin.y) * dir[0]);
    const score = along + across * 1.2;
    if (score < bestScore) {
      bestScore = score;
      best = el;
    }
  }
  if (best) best.focus();
  return Boolean(best);
}

function centre(rect) {
  return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
}

/** True when a key press belongs to a text field or an open dialog, not to the game. */
export function typingIn(ev) {
  const t = ev.target;
  if (t.closest && t.closest("dialog[open]")) return true;
  return t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName);
}
