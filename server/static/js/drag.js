// Drag and drop with pointer events (mouse, touch and pen alike).
//
// A press that moves more than a few pixels lifts the cards into a floating ghost that follows
// the pointer; releasing it over an element with `data-drop` asks `onDrop(info, target)`, which
// resolves true when the move was accepted. Otherwise the ghost glides back ("snaps back").
// A press that does not move is reported to `onTap(element)`. `onLift(info, ghost)`, if given,
// may decorate the ghost when the cards are lifted.

const SLOP_PX = 6;
const SNAP_MS = 180;

export class DragController {
  constructor(root, { canDrag, onDrop, onTap, onLift = null }) {
    this.root = root;
    this.canDrag = canDrag;
    this.onDrop = onDrop;
    this.onTap = onTap;
    this.onLift = onLift;
    this.press = null;
    this.handlers = {
      pointerdown: (ev) => this.down(ev),
      pointermove: (ev) => this.move(ev),
      pointerup: (ev) => this.up(ev),
      pointercancel: (ev) => this.cancel(ev),
    };
    for (const [name, fn] of Object.entries(this.handlers)) root.addEventListener(name, fn);
  }

  down(ev) {
    if (this.press || (ev.pointerType === "mouse" && ev.button !== 0)) return;
    const el = ev.target.closest("[data-loc]");
    if (!el || !this.root.contains(el)) return;
    this.press = { el, id: ev.pointerId, x: ev.clientX, y: ev.clientY, info: null, ghost: null };
    try {
      el.setPointerCapture(ev.pointerId);
    } catch {
      /* the element may be gone already */
    }
  }

  move(ev) {
    const press = this.press;
    if (!press || ev.pointerId !== press.id) return;
    const dx = ev.clientX - press.x;
    const dy = ev.clientY - press.y;
    if (!press.ghost) {
      if (Math.hypot(dx, dy) < SLOP_PX) return;
      press.info = this.canDrag(press.el);
      if (!press.info) return;
      press.ghost = lift(press.info.els);
      if (this.onLift) this.onLift(press.info, press.ghost);
    }
    ev.preventDefault();
    press.ghost.style.transform = `translate(${dx}px, ${dy}px)`;
    this.hover(targetAt(ev.clientX, ev.clientY, press.ghost));
  }

  async up(ev) {
    const press = this.press;
    if (!press || ev.pointerId !== press.id) return;
    this.press = null;
    this.hover(null);
    if (!press.ghost) {
      if (Math.hypot(ev.clientX - press.x, ev.clientY - press.y) < SLOP_PX * 2) this.onTap(press.el);
      return;
    }
    const target = targetAt(ev.clientX, ev.clientY, press.ghost);
    let accepted = false;
    try {
      accepted = await this.onDrop(press.info, target ? target.dataset.drop : null);
    } finally {
      if (accepted) land(press);
      else snapBack(press);
    }
  }

  cancel(ev) {
    const press = this.press;
    if (!press || ev.pointerId !== press.id) return;
    this.press = null;
    this.hover(null);
    if (press.ghost) snapBack(press);
  }

  hover(target) {
    if (this.hovered === target) return;
    if (this.hovered) this.hovered.classList.remove("drop-hover");
    this.hovered = target;
    if (target) target.classList.add("drop-hover");
  }

  destroy() {
    for (const [name, fn] of Object.entries(this.handlers)) this.root.removeEventListener(name, fn);
  }
}

/** A floating copy of the dragged cards, placed exactly over them; the originals fade. */
function lift(els) {
  const ghost = document.createElement("div");
  ghost.className = "ghost";
  ghost.setAttribute("aria-hidden", "true");
  const styles = getComputedStyle(els[0]);
  for (const name of ["--cw", "--ch", "--fs"]) ghost.style.setProperty(name, styles.getPropertyValue(name));
  for (const el of els) {
    const rect = el.getBoundingClientRect();
    const copy = el.cloneNode(true);
    copy.removeAttribute("id");
    copy.classList.remove("framed", "picked");
    copy.style.left = `${rect.left}px`;
    copy.style.top = `${rect.top}px`;
    ghost.append(copy);
    el.classList.add("lifted");
  }
  document.body.append(ghost);
  return ghost;
}

function targetAt(x, y, ghost) {
  ghost.hidden = true;
  const hit = document.elementFromPoint(x, y);
  ghost.hidden = false;
  return hit ? hit.closest("[data-drop]") : null;
}

function land(press) {
  press.ghost.remove();
  for (const el of press.info.els) el.classList.remove("lifted");
}

function snapBack(press) {
  const { ghost } = press;
  ghost.classList.add("snapping");
  ghost.style.transform = "translate(0px, 0px)";
  const done = () => {
    ghost.remove();
    for (const el of press.info.els) el.classList.remove("lifted");
  };
  ghost.addEventListener("transitionend", done, { once: true });
  setTimeout(done, SNAP_MS + 120);
}
