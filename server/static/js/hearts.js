// Heart to Heart board: the heart drawn by deal.md's geometry, the stock and the waste.
//
// x is the card's centre in half-card widths and each row sits half a card lower, so a card's
// left edge is x/2 card widths and its top row/2 card heights; later rows are drawn on top.

import { shake } from "./animate.js";
import { cardLabel, makeCard, setBack, setFace } from "./cards.js";
import { HEART_ROWS } from "./facts.js";
import { t } from "./i18n.js";

const GEOMETRY = HEART_ROWS.flatMap((xs, row) => xs.map((x) => ({ row, x })));
const RATIO = 1.4;

export class HeartsBoard {
  constructor(root, { onAction }) {
    this.root = root;
    this.onAction = onAction;
    this.el = document.createElement("div");
    this.el.className = "hh";
    this.heart = document.createElement("div");
    this.heart.className = "heart";
    this.heart.setAttribute("role", "group");
    this.heart.dataset.i18nLabel = "hh.heart";
    this.heart.setAttribute("aria-label", t("hh.heart"));
    this.cards = GEOMETRY.map((geo, i) => this.makeHeartCard(geo, i + 1));
    this.piles = document.createElement("div");
    this.piles.className = "piles";
    this.stock = this.makePile("stock", "hh.stock");
    this.waste = this.makePile("waste", "hh.waste");
    this.el.append(this.heart, this.piles);
    this.el.addEventListener("click", (ev) => this.onClick(ev));
    root.append(this.el);
  }

  makeHeartCard({ row, x }, pos) {
    const el = makeCard(`heart:${pos}`);
    el.style.setProperty("--x", x);
    el.style.setProperty("--row", row);
    el.dataset.pos = pos;
    this.heart.append(el);
    return el;
  }

  makePile(loc, title) {
    const wrap = document.createElement("div");
    wrap.className = `pile pile-${loc}`;
    const el = makeCard(loc);
    const count = document.createElement("span");
    count.className = "count";
    count.setAttribute("aria-hidden", "true");
    const caption = document.createElement("span");
    caption.className = "pile-caption";
    caption.setAttribute("aria-hidden", "true");
    caption.dataset.i18n = title;
    caption.textContent = t(title);
    wrap.append(el, count, caption);
    this.piles.append(wrap);
    return { el, count };
  }

  /** Size the board to the space it has: heart beside the piles, or above them on narrow screens. */
  fit(width, height) {
    const wide = Math.min(width / 7.7, height / (4 * RATIO + 0.3));
    const tall = Math.min(width / 6.3, height / (5 * RATIO + 0.7));
    const cw = Math.max(24, Math.min(Math.max(wide, tall), 150));
    this.el.classList.toggle("tall", tall > wide);
    setCardSize(this.el, cw);
  }

  render(state, ctx) {
    const board = state.board;
    const hints = state.hints || {};
    const help = ctx.placementHelp ? hints : { framed: [], matches: [], dimmed: [] };
    const looks = {
      framed: new Set(help.framed || []),
      matches: new Set(help.matches || []),
      dimmed: new Set(help.dimmed || []),
      selection: board.selection,
    };
    board.heart.forEach((slot, i) => this.renderHeartCard(this.cards[i], slot, looks, ctx));
    this.renderStock(board);
    this.renderWaste(board, looks, ctx);
  }

  renderHeartCard(el, slot, looks, ctx) {
    const loc = el.dataset.loc;
    el.hidden = !slot.card;
    setFace(el, slot.card);
    if (!slot.card) return;
    markLooks(el, loc, looks);
    el.classList.toggle("covered", !slot.free);
    el.setAttribute("aria-disabled", String(!ctx.canPlay));
    el.setAttribute("aria-label", describe(slot.card, t(slot.free ? "card.free" : "card.covered"), el));
  }

  renderStock(board) {
    const { el, count } = this.stock;
    const n = board.stock_count;
    setBack(el, n > 0);
    el.classList.toggle("empty", n === 0);
    el.classList.toggle("redeal", n === 0 && board.waste_count > 0);
    count.textContent = String(n);
    el.dataset.count = String(n);
    let label = t("hh.stock_draw", { count: n });
    if (n === 0) label = board.waste_count ? t("hh.stock_redeal", { count: board.waste_count }) : t("hh.stock_empty");
    el.setAttribute("aria-label", label);
    el.setAttribute("aria-keyshortcuts", "D");
  }

  renderWaste(board, looks, ctx) {
    const { el, count } = this.waste;
    setFace(el, board.waste_top);
    count.textContent = String(board.waste_count);
    markLooks(el, "waste", looks);
    el.setAttribute("aria-disabled", String(!board.waste_top || !ctx.canPlay));
    const what = board.waste_top ? describe(board.waste_top, t("hh.waste_top", { count: board.waste_count }), el) : t("hh.waste_empty");
    el.setAttribute("aria-label", what);
  }

  onClick(ev) {
    const el = ev.target.closest("[data-loc]");
    if (!el || !this.el.contains(el)) return;
    if (el.dataset.loc === "waste" && !el.dataset.card) return;
    this.onAction({ type: "touch", at: el.dataset.loc }, el);
  }

  /** A refused touch: the card shakes, whether or not move errors are shown. */
  refused(loc) {
    if (loc) shake(this.elementFor(loc));
  }

  /** The focusable element for a location (for the keyboard shortcuts). */
  elementFor(loc) {
    return this.el.querySelector(`[data-loc="${loc}"]`);
  }

  destroy() {
    this.el.remove();
  }
}

function markLooks(el, loc, looks) {
  const selected = looks.selection === loc;
  el.classList.toggle("selected", selected);
  el.classList.toggle("framed", looks.framed.has(loc) && !selected);
  el.classList.toggle("match", looks.matches.has(loc));
  el.classList.toggle("dimmed", looks.dimmed.has(loc));
  el.setAttribute("aria-pressed", String(selected));
}

function describe(card, where, el) {
  const extra = [];
  if (el.classList.contains("selected")) extra.push(t("card.selected"));
  if (el.classList.contains("match")) extra.push(t("card.matches"));
  else if (el.classList.contains("framed")) extra.push(t("card.has_partner"));
  return cardLabel(card, where, ...extra);
}

export function setCardSize(el, cw) {
  el.style.setProperty("--cw", `${cw.toFixed(1)}px`);
  el.style.setProperty("--ch", `${(cw * RATIO).toFixed(1)}px`);
  el.style.setProperty("--fs", `${Math.max(11, Math.min(26, cw * 0.3)).toFixed(1)}px`);
}
