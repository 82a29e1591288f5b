// Motion: every card that changes place glides from where it was to where it is now.
//
// The board is drawn at once in its new position (input never waits); this module then plays
// the difference with the Web Animations API, "FLIP" style: measure every card before the draw,
// measure again after, and animate each card from its old box to its new one. Cards that leave
// (a Heart to Heart pair) fly off as ghosts, cards that come back (undo) fly in from where they
// went, a draw flies from the stock to the waste and a redeal back. Group moves go card by card.
// A new position cancels what is still playing, so nothing ever waits for an animation.
// prefers-reduced-motion turns all of it off.

import { makeCard, setBack, setFace } from "./cards.js";

const GLIDE_MS = 200;
const LEAVE_MS = 220;
const STAGGER_MS = 35; // between the cards of a group
const MAX_STAGGER_MS = 160;
const CELEBRATE_MS = 1600;
const SYMBOLS = ["♥", "♠", "♦", "♣"];

const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");

let scale = 1; // the settings' animation speed: durations times this, 0 for none (appearance.js)

export function setMotionScale(factor) {
  scale = factor;
}

export function motionAllowed() {
  return !reduced.matches && scale > 0;
}

/** A duration at the chosen speed. */
function ms(duration) {
  return duration * scale;
}

/** One visible card: its element, what it shows, and where. A card being dragged (drag.js
 * lifts it: its copy follows the pointer) is where its copy is, so that a dropped card settles
 * from where it was let go instead of gliding again from the place it was dragged from. */
function snapshot(root) {
  const cards = new Map();
  const dragged = new Map();
  for (const copy of document.querySelectorAll(".ghost > .card[data-card]")) dragged.set(copy.dataset.card, copy);
  for (const el of root.querySelectorAll(".card[data-loc]")) {
    if (el.hidden || el.closest("[hidden]")) continue;
    const copy = el.classList.contains("lifted") && dragged.get(el.dataset.card);
    const rect = (copy || el).getBoundingClientRect();
    if (!rect.width) continue;
    const count = Number(el.dataset.count || 0);
    cards.set(el, { card: el.dataset.card || "", back: el.classList.contains("back"), rect, loc: el.dataset.loc, count });
  }
  return cards;
}

export class Animator {
  constructor(root) {
    this.root = root;
    this.layer = null;
    this.running = [];
  }

  /** Where the cards are before a new position is drawn (null when motion is off). */
  measure() {
    if (!motionAllowed()) return null;
    this.stop(); // where the cards are, not where a glide still playing (or waiting) shows them
    return snapshot(this.root);
  }

  /** Animate from `before` (a measure()) to the position drawn now. */
  play(before, { undo = false } = {}) {
    this.stop();
    if (!before || !motionAllowed()) return;
    const after = snapshot(this.root);
    const stock = findLoc(before, "stock") || findLoc(after, "stock");
    let moved = 0;
    const moves = [];
    for (const [el, now] of after) {
      const was = before.get(el);
      if (!was) {
        // Shown again (an undone pair): fly in from where cards go when they leave. A
        // foundation's new top came from somewhere it was measured; one uncovered below does not.
        if (!now.loc.startsWith("found:")) moves.push(() => this.fadeIn(el));
        continue;
      }
      if (el.dataset.loc === "waste" && was.card !== now.card) {
        // A draw comes from the stock; an undone draw or a redeal goes back to it; a pair
        // with the waste card sends it off (and an undone one brings it back).
        const drawn = stockCount(after) - stockCount(before);
        if (drawn < 0 && stock) moves.push(() => this.glide(el, stock.rect, now.rect, 0));
        else if (drawn > 0 && was.card && stock) this.ghost(was, stock.rect, { flip: true });
        else if (!undo && was.card) this.ghost(was, null, {});
        else if (now.card) moves.push(() => this.fadeIn(el));
        continue;
      }
      if (was.card !== now.card && el.dataset.loc !== "stock") continue; // redrawn in place
      if (Math.abs(was.rect.left - now.rect.left) > 1 || Math.abs(was.rect.top - now.rect.top) > 1) {
        const delay = ms(Math.min(moved * STAGGER_MS, MAX_STAGGER_MS));
        moved += 1;
        moves.push(() => this.glide(el, was.rect, now.rect, delay));
      }
    }
    for (const [el, was] of before) {
      if (after.has(el) || !was.card || was.loc.startsWith("found:")) continue; // covered there
      // Gone (a pair leaving, a Seahaven card whose element is drawn elsewhere is in `after`).
      this.ghost(was, null, {});
    }
    for (const start of moves) start();
  }

  glide(el, from, to, delay) {
    const dx = from.left - to.left;
    const dy = from.top - to.top;
    const sx = from.width / (to.width || 1);
    const sy = from.height / (to.height || 1);
    const animation = el.animate(
      [
        { transform: `translate(${dx}px, ${dy}px) scale(${sx}, ${sy})`, zIndex: 50 },
        { transform: "none", zIndex: 50 },
      ],
      { duration: ms(GLIDE_MS), delay, easing: "cubic-bezier(.2,.7,.3,1)", fill: "backwards" },
    );
    this.running.push(animation);
  }

  fadeIn(el) {
    const animation = el.animate(
      [{ opacity: 0, transform: "translateY(-24px) scale(.7)" }, { opacity: 1, transform: "none" }],
      { duration: ms(LEAVE_MS), easing: "ease-out", fill: "backwards" },
    );
    this.running.push(animation);
  }

  /** A copy of a card that is no longer drawn, flying off (or to `to`) and fading. */
  ghost(was, to, { flip = false }) {
    const layer = this.ensureLayer();
    const ghost = makeCard("ghost");
    ghost.classList.add("flying");
    ghost.tabIndex = -1;
    ghost.inert = true;
    setFace(ghost, was.card || null);
    setBack(ghost, flip || was.back);
    const sizes = getComputedStyle(this.root.firstElementChild || this.root);
    for (const name of ["--cw", "--ch", "--fs"]) ghost.style.setProperty(name, sizes.getPropertyValue(name));
    ghost.style.left = `${was.rect.left}px`;
    ghost.style.top = `${was.rect.top}px`;
    layer.append(ghost);
    const end = to
      ? { transform: `translate(${to.left - was.rect.left}px, ${to.top - was.rect.top}px)`, opacity: 0.4 }
      : { transform: "translateY(-40px) scale(.6) rotate(-8deg)", opacity: 0 };
    const animation = ghost.animate([{ transform: "none", opacity: 1 }, end], {
      duration: ms(LEAVE_MS),
      easing: "ease-in",
      fill: "forwards",
    });
    animation.onfinish = () => ghost.remove();
    animation.oncancel = () => ghost.remove();
    this.running.push(animation);
  }

  ensureLayer() {
    if (!this.layer || !this.layer.isConnected) {
      this.layer = document.createElement("div");
      this.layer.className = "motion-layer";
      this.layer.setAttribute("aria-hidden", "true");
      // In the top layer (a manual popover), so that motion shows over a modal dialog too.
      if (this.layer.showPopover) this.layer.popover = "manual";
      document.body.append(this.layer);
      if (this.layer.showPopover) this.layer.showPopover();
    }
    return this.layer;
  }

  /** Put the layer above whatever entered the top layer since (the win dialog just opened). */
  raise() {
    const layer = this.ensureLayer();
    if (!layer.showPopover) return;
    if (layer.matches(":popover-open")) layer.hidePopover();
    layer.showPopover();
  }

  /** Finish whatever still plays: the new position takes over at once. */
  stop() {
    for (const animation of this.running) {
      if (animation.playState !== "finished") animation.cancel();
    }
    this.running = [];
  }

  /** A win: suits burst from the board and fall away. Decorative only. */
  celebrate() {
    if (!motionAllowed()) return;
    const layer = this.ensureLayer();
    this.raise(); // over the win dialog, not behind its backdrop
    const box = this.root.getBoundingClientRect();
    const burst = document.createElement("div");
    burst.className = "celebration";
    burst.dataset.playing = "true";
    layer.append(burst);
    for (let i = 0; i < 36; i += 1) {
      const spark = document.createElement("span");
      spark.textContent = SYMBOLS[i % 4];
      spark.dataset.color = i % 2 ? "black" : "red";
      spark.style.left = `${box.left + box.width / 2}px`;
      spark.style.top = `${box.top + box.height / 3}px`;
      burst.append(spark);
      const angle = (i / 36) * Math.PI * 2;
      const reach = 120 + (i % 5) * 40;
      spark.animate(
        [
          { transform: "translate(0, 0) scale(.4)", opacity: 1 },
          { transform: `translate(${Math.cos(angle) * reach}px, ${Math.sin(angle) * reach}px) scale(1.4)`, opacity: 1, offset: 0.55 },
          { transform: `translate(${Math.cos(angle) * reach}px, ${Math.sin(angle) * reach + 160}px) scale(1)`, opacity: 0 },
        ],
        { duration: ms(CELEBRATE_MS), delay: ms((i % 6) * 30), easing: "ease-out", fill: "forwards" },
      );
    }
    setTimeout(() => burst.remove(), ms(CELEBRATE_MS) + 300);
  }
}

function stockCount(cards) {
  const stock = findLoc(cards, "stock");
  return stock ? stock.count : 0;
}

function findLoc(cards, loc) {
  for (const info of cards.values()) if (info.loc === loc) return info;
  return null;
}

/** A refused card shakes (or, with reduced motion, only flashes its outline: app.css). */
export function shake(el) {
  if (!el) return;
  el.classList.add("refused");
  const done = () => el.classList.remove("refused");
  if (!motionAllowed()) {
    setTimeout(done, 400);
    return;
  }
  const animation = el.animate(
    [
      { transform: "translateX(0)" },
      { transform: "translateX(-7px)" },
      { transform: "translateX(6px)" },
      { transform: "translateX(-4px)" },
      { transform: "translateX(3px)" },
      { transform: "translateX(0)" },
    ],
    { duration: 260, easing: "ease-in-out" },
  );
  animation.onfinish = done;
  animation.oncancel = done;
}
