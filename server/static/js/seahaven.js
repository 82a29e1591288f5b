// Seahaven Towers board: the variant's cells, four foundations and ten fanned columns.
//
// Pointer input (mouse, touch, pen) goes through drag.js: a press that moves becomes a drag and
// drop (a `move` with the count of cards from the pressed card to the top); a press that does
// not move is a tap. The first tap on a card that can go to its foundation sends `tap` at once
// (a double tap would do the same, SH-16 tries the foundation first); otherwise the board waits
// briefly for a second tap and sends `double_tap` with the count, or `tap` when none comes.

import { shake } from "./animate.js";
import { cardName, faceText, makeCard, rankValue, sentence, setFace, suitName } from "./cards.js";
import { DragController } from "./drag.js";
import { setCardSize } from "./hearts.js";
import { t } from "./i18n.js";

const FOUNDATION_SUITS = ["S", "H", "D", "C"];
// The place keys (docs/browser.md, "Keyboard"): a first key names the source, a second the
// destination, so a move takes two presses wherever the focus is. 1-9 and 0 are the columns,
// Q W E R the cells; as a destination F is the foundation and C the first free cell. The same
// key twice is a double tap: the card goes to the best place for it.
const CELL_KEYS = ["q", "w", "e", "r"];
const DOUBLE_TAP_MS = 320;
const RATIO = 1.4;
const GAP = 0.1; // between columns, in card widths

/** Card widths of two rows of five columns under a top row of eight (cells and foundations). */
function twoRowSizes(width, height) {
  const top = Math.min(width / (8 + 7 * GAP + 0.6), 90);
  const rows = (height - top * RATIO - top * 0.5) / 2; // each row of five columns
  const byWidth = width / (5 + 4 * GAP * 2 + 0.2);
  const byHeight = rows / (RATIO * 2); // a column of five with a quarter of each card showing
  const cw = Math.max(22, Math.min(byWidth, byHeight, 120));
  return { cw, topCw: Math.min(top, cw) };
}

/** The card width of one row of ten columns under the top row. */
function oneRowWidth(width, height) {
  const byWidth = width / (10 + 9 * GAP + 0.2);
  // Room for the top row and a column of about three card heights; on a short screen (a
  // phone held sideways) a little less, since a growing column's overlap tightens anyway.
  const byHeight = height / (RATIO * (height < 480 ? 3.6 : 4.2) + 0.3);
  return Math.max(22, Math.min(byWidth, byHeight, 120));
}

export class SeahavenBoard {
  constructor(root, { onAction, onMove, onNotice }) {
    this.root = root;
    this.onAction = onAction;
    this.onMove = onMove;
    this.onNotice = onNotice;
    this.state = null;
    this.ctx = {};
    this.cards = new Map();
    this.lastTap = null;
    this.tapTimer = null;
    this.picked = null;
    this.build();
    this.drag = new DragController(this.el, {
      canDrag: (el) => this.dragInfo(el),
      onDrop: (info, target) => this.drop(info, target),
      onTap: (el) => this.tapped(el),
      onLift: (info, ghost) => this.showGroupLimit(info, ghost),
    });
    this.el.addEventListener("keydown", (ev) => this.onKey(ev));
    this.el.addEventListener("click", (ev) => ev.preventDefault());
    root.append(this.el);
  }

  build() {
    this.el = document.createElement("div");
    this.el.className = "sh";
    const top = div("sh-top");
    this.topRow = top;
    this.cellRow = div("cells");
    this.cellRow.setAttribute("role", "group");
    this.cellRow.setAttribute("aria-label", t("sh.cells"));
    this.foundRow = div("foundations");
    this.foundRow.setAttribute("role", "group");
    this.foundRow.setAttribute("aria-label", t("sh.foundations"));
    this.foundSlots = FOUNDATION_SUITS.map((s) => this.makeSlot(`found:${s}`, this.foundRow, `found-${s}`));
    top.append(this.cellRow, this.foundRow);
    this.colRow = div("columns");
    this.columns = [];
    for (let i = 1; i <= 10; i += 1) {
      const col = div("column");
      col.dataset.drop = `col:${i}`;
      col.setAttribute("role", "group");
      col.setAttribute("aria-label", t("sh.column", { n: i }));
      const slot = makeSlot(`col:${i}`);
      col.append(slot);
      this.colRow.append(col);
      this.columns.push({ el: col, slot });
    }
    this.cellSlots = [];
    this.el.append(top, this.colRow);
  }

  makeSlot(loc, parent, extraClass) {
    const wrap = div(`slot-wrap ${extraClass || ""}`);
    wrap.dataset.drop = loc;
    const slot = makeSlot(loc);
    wrap.append(slot);
    parent.append(wrap);
    return { wrap, slot };
  }

  ensureCells(n) {
    while (this.cellSlots.length < n) {
      const i = this.cellSlots.length + 1;
      this.cellSlots.push(this.makeSlot(`cell:${i}`, this.cellRow, "cell"));
    }
    while (this.cellSlots.length > n) this.cellSlots.pop().wrap.remove();
  }

  /** Size the board to both the width and the height there is.
   *
   * Wide screens (and phones held sideways) get one row of ten columns. A narrow screen (a phone
   * in portrait) gets two rows of five columns under the cells and foundations, whose cards are
   * sized on their own to fit their row of eight: ten columns side by side would leave cards
   * some 35 px wide and most of the screen empty. The choice is by width and by which layout
   * gives the larger cards, not by the board's height alone: the daily line, a banner or a
   * race strip above the board take height, and must not turn a phone's board into ten thin
   * columns. */
  fit(width, height) {
    this.width = width;
    this.height = height;
    const tall = twoRowSizes(width, height);
    const wide = oneRowWidth(width, height);
    const portrait = width < 600 && tall.cw > wide;
    this.el.classList.toggle("portrait", portrait);
    this.el.classList.toggle("narrow", width < 600);
    if (portrait) {
      this.cw = tall.cw;
      this.topCw = tall.topCw;
      setCardSize(this.el, this.cw);
      setCardSize(this.topRow, this.topCw);
    } else {
      this.cw = wide;
      this.topCw = this.cw;
      setCardSize(this.el, this.cw);
      for (const name of ["--cw", "--ch", "--fs"]) this.topRow.style.removeProperty(name);
    }
    if (this.state) this.layoutColumns();
  }

  render(state, ctx) {
    this.state = state;
    this.ctx = ctx;
    const board = state.board;
    const seen = new Set();
    this.ensureCells(board.cell_count);
    board.cells.forEach((card, i) => this.renderCell(i, card, seen));
    FOUNDATION_SUITS.forEach((suit, i) => this.renderFoundation(i, suit, board.foundations[suit], seen));
    board.columns.forEach((cards, i) => this.renderColumn(i, cards, seen));
    for (const [card, el] of this.cards) {
      if (!seen.has(card)) {
        el.remove();
        this.cards.delete(card);
      }
    }
    this.layoutColumns();
    if (this.picked) this.markPicked();
  }

  card(text) {
    let el = this.cards.get(text);
    if (!el) {
      el = makeCard("", `card:${text}`);
      setFace(el, text);
      this.cards.set(text, el);
    }
    return el;
  }

  placeCard(el, parent, before, loc, count, label) {
    setFace(el, el.dataset.card); // in the language (and letters) of now
    label = `${faceText(el.dataset.card)}, ${label}`; // the name opens with the text shown
    el.dataset.loc = loc;
    el.dataset.count = String(count);
    if (el.parentElement !== parent || el.nextElementSibling !== before) parent.insertBefore(el, before);
    el.setAttribute("aria-label", label);
    const tappable = this.ctx.placementHelp && count === 1 && (this.state.hints.tappable || []).includes(loc);
    el.classList.toggle("framed", Boolean(tappable));
    el.setAttribute("aria-disabled", String(!this.ctx.canPlay));
    if (!loc.startsWith("col:")) el.classList.remove("covered");
  }

  renderCell(i, card, seen) {
    const { wrap, slot } = this.cellSlots[i];
    const loc = `cell:${i + 1}`;
    slot.hidden = Boolean(card);
    slot.setAttribute("aria-label", t("sh.cell_empty", { n: i + 1 }));
    if (!card) return;
    seen.add(card);
    this.placeCard(this.card(card), wrap, null, loc, 1, sentence(t("sh.in_cell", { card: cardName(card), n: i + 1 })));
  }

  renderFoundation(i, suit, top, seen) {
    const { wrap, slot } = this.foundSlots[i];
    const loc = `found:${suit}`;
    slot.hidden = Boolean(top);
    slot.dataset.suit = suit;
    slot.setAttribute("aria-label", sentence(t("sh.found_empty", { suit: suitName(suit) })));
    if (!top) return;
    seen.add(top);
    const el = this.card(top);
    this.placeCard(el, wrap, null, loc, 1, sentence(t("sh.found_top", { card: cardName(top), suit: suitName(suit) })));
    el.classList.remove("framed");
    // Cards below the top of a foundation are no longer shown.
    for (const other of [...wrap.querySelectorAll(".card")]) if (other !== el) other.remove();
  }

  renderColumn(i, cards, seen) {
    const { el: col, slot } = this.columns[i];
    const loc = `col:${i + 1}`;
    const run = (this.state.hints.runs || {})[loc] || 0;
    slot.setAttribute("aria-label", t("sh.column_empty", { n: i + 1 }));
    slot.hidden = cards.length > 0;
    const mine = new Set(cards);
    for (const el of [...col.querySelectorAll(".card")]) {
      if (!mine.has(el.dataset.card)) el.remove(); // it belongs elsewhere now
    }
    cards.forEach((card, k) => {
      seen.add(card);
      const count = cards.length - k;
      const el = this.card(card);
      const where = count === 1 ? t("sh.top") : count <= run ? t("sh.run", { count }) : t("card.covered");
      el.style.setProperty("--i", String(k));
      const before = col.children[k + 1] || null; // child 0 is the empty-column slot
      this.placeCard(el, col, before === el ? el.nextElementSibling : before, loc, count,
        sentence(t("sh.in_column", { card: cardName(card), n: i + 1, where })));
      el.classList.toggle("covered", count > run);
    });
  }

  /** Fan each column so that it fits the height there is. */
  layoutColumns() {
    if (!this.cw || !this.state) return;
    const ch = this.cw * RATIO;
    // The height of one column (a row of them, in portrait), so a column's overlap tightens as
    // it grows and its top card always stays on screen.
    const room = this.columns[0].el.clientHeight || this.colRow.clientHeight || this.height - ch * 1.2;
    const widest = this.el.classList.contains("narrow") ? ch * 0.5 : ch * 0.3;
    this.state.board.columns.forEach((cards, i) => {
      const n = cards.length;
      const fan = n > 1 ? Math.min(widest, Math.max(ch * 0.12, (room - ch) / (n - 1))) : 0;
      this.columns[i].el.style.setProperty("--fan", `${fan.toFixed(1)}px`);
    });
  }

  // -- input --------------------------------------------------------------------------------

  /** What a press on this element would drag, or null. */
  dragInfo(el) {
    if (!this.ctx.canPlay || !el.classList.contains("card") || !el.dataset.card) return null;
    const loc = el.dataset.loc;
    const count = Number(el.dataset.count || 1);
    if (loc.startsWith("col:")) {
      const run = (this.state.hints.runs || {})[loc] || 0;
      if (count > run) return null;
      const col = el.parentElement;
      const els = [...col.querySelectorAll(".card")].slice(-count);
      return { from: loc, count, els };
    }
    return { from: loc, count: 1, els: [el] };
  }

  /** While a group is dragged, a badge on it says how many cards may move together (SH-10/11). */
  showGroupLimit(info, ghost) {
    if (info.count < 2) return;
    const board = this.state.board;
    const onCard = board.group_limit;
    const toEmpty = board.group_limit_to_empty;
    const fits = info.count <= Math.max(onCard, toEmpty || 0);
    const empty = toEmpty == null ? "" : t("sh.group_badge_empty", { limit: toEmpty });
    const badge = document.createElement("div");
    badge.className = fits ? "ghost-badge" : "ghost-badge over";
    badge.textContent = t("sh.group_badge", { count: info.count, limit: onCard, empty });
    const first = ghost.firstElementChild;
    badge.style.left = first.style.left;
    badge.style.top = first.style.top;
    ghost.append(badge);
  }

  async drop(info, target) {
    if (!target || target === info.from) return true;
    const to = target.startsWith("found:") ? "found" : target;
    return this.onMove({ type: "move", from: info.from, to, count: info.count });
  }

  tapped(el) {
    if (!this.ctx.canPlay || !el.dataset.card) return;
    const loc = el.dataset.loc;
    const count = Number(el.dataset.count || 1);
    if (loc.startsWith("found:")) {
      this.onNotice(t("sh.found_drag"));
      return;
    }
    const now = performance.now();
    const last = this.lastTap;
    if (last && last.loc === loc && now - last.at < DOUBLE_TAP_MS) {
      this.lastTap = null;
      clearTimeout(this.tapTimer);
      if (!last.sent) this.onAction({ type: "double_tap", at: loc, count: last.count });
      return;
    }
    clearTimeout(this.tapTimer);
    const tappable = count === 1 && (this.state.hints.tappable || []).includes(loc);
    this.lastTap = { loc, count, at: now, sent: tappable };
    if (tappable) {
      this.onAction({ type: "tap", at: loc });
      return;
    }
    this.tapTimer = setTimeout(() => this.singleTap(loc, count), DOUBLE_TAP_MS);
  }

  singleTap(loc, count) {
    this.lastTap = null;
    if (count === 1) this.onAction({ type: "tap", at: loc });
    else this.onNotice(t("sh.only_top"));
  }

  onKey(ev) {
    const el = ev.target.closest("[data-loc]");
    if (!el || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const key = ev.key;
    if (key === "Enter" || key === " ") {
      ev.preventDefault();
      if (this.picked) this.dropPicked(el);
      else if (ev.shiftKey) this.keyDoubleTap(el);
      else this.keyTap(el);
    } else if (key === "m" || key === "M") {
      ev.preventDefault();
      if (this.picked) this.dropPicked(el);
      else this.pickUp(el);
    } else if (key === "Escape" && this.picked) {
      ev.preventDefault();
      this.cancelPick(t("sh.put_back"));
    }
  }

  /** The place a key names (`col:3`, `cell:1`, `found`, `cell` for any free cell), or null. */
  keyPlace(key) {
    if (/^[0-9]$/.test(key)) return `col:${key === "0" ? 10 : Number(key)}`;
    const cell = CELL_KEYS.indexOf(key);
    if (cell >= 0 && cell < this.cellSlots.length) return `cell:${cell + 1}`;
    if (key === "f") return "found";
    if (key === "c") return "cell";
    return null;
  }

  /** A place key pressed anywhere on the play view: true when it was one. */
  placeKey(key) {
    const place = this.state && this.keyPlace(key.toLowerCase());
    if (!place) return false;
    if (!this.ctx.canPlay) return true;
    if (!this.picked) {
      const el = place.includes(":") ? this.topAt(place) : null;
      if (!el) this.onNotice(t("sh.key_nothing"), true);
      else {
        el.focus({ preventScroll: true });
        this.picked = { from: place, count: 1, key: el.dataset.focusKey, byKey: true };
        this.markPicked();
        this.onNotice(sentence(t("sh.key_picked", { card: cardName(el.dataset.card) })), true);
      }
      return true;
    }
    const from = this.picked.from;
    this.picked = null;
    this.markPicked();
    if (place === from) this.onAction({ type: "double_tap", at: from, count: 1 });
    else {
      const to = place === "cell" ? this.freeCell() : place;
      this.onMove({ type: "move", from, to, count: this.countFor(from, to) });
    }
    return true;
  }

  /** The top card at a column or cell, or null when it is empty. */
  topAt(loc) {
    const cards = this.el.querySelectorAll(`.card[data-loc="${loc}"]`);
    return cards[cards.length - 1] || null;
  }

  freeCell() {
    const i = this.state.board.cells.findIndex((card) => !card);
    return `cell:${i < 0 ? 1 : i + 1}`; // none free: the server says why the move cannot be made
  }

  /** How many cards a keyed column-to-column move takes: the part of the source's run that
   * fits on the destination's top card, or as much of it as may go to an empty column. */
  countFor(from, to) {
    if (!from.startsWith("col:") || !to.startsWith("col:")) return 1;
    const board = this.state.board;
    const cards = board.columns[Number(from.slice(4)) - 1];
    const dest = board.columns[Number(to.slice(4)) - 1];
    const run = Math.max(1, (this.state.hints.runs || {})[from] || 0);
    if (!dest.length) return Math.max(1, Math.min(run, board.group_limit_to_empty ?? run));
    const top = dest[dest.length - 1];
    for (let k = 1; k <= Math.min(run, cards.length); k += 1) {
      const card = cards[cards.length - k];
      if (card[1] === top[1] && rankValue(card) + 1 === rankValue(top)) return k;
    }
    return 1;
  }

  /** Escape while a keyed move waits for its destination. */
  cancelKey() {
    if (!this.picked) return false;
    this.cancelPick(t("sh.put_back"));
    return true;
  }

  keyTap(el) {
    if (!this.ctx.canPlay || !el.dataset.card) return;
    const count = Number(el.dataset.count || 1);
    if (el.dataset.loc.startsWith("found:")) this.onNotice(t("sh.found_keys"));
    else if (count === 1) this.onAction({ type: "tap", at: el.dataset.loc });
    else this.onNotice(t("sh.only_top_keys"));
  }

  keyDoubleTap(el) {
    if (!this.ctx.canPlay || !el.dataset.card || el.dataset.loc.startsWith("found:")) return;
    this.onAction({ type: "double_tap", at: el.dataset.loc, count: Number(el.dataset.count || 1) });
  }

  pickUp(el) {
    const info = this.dragInfo(el);
    if (!info) {
      this.onNotice(t("sh.cannot_move"), true);
      return;
    }
    this.picked = { from: info.from, count: info.count, key: el.dataset.focusKey };
    this.markPicked();
    const card = cardName(el.dataset.card);
    const text = info.count > 1 ? t("sh.picked_group", { card, count: info.count - 1 }) : t("sh.picked", { card });
    this.onNotice(sentence(text), true);
  }

  markPicked() {
    for (const el of this.el.querySelectorAll(".picked")) el.classList.remove("picked");
    if (!this.picked) return;
    const source = this.el.querySelector(`[data-focus-key="${this.picked.key}"]`);
    const info = source && this.dragInfo(source);
    if (!info || info.from !== this.picked.from) {
      this.picked = null;
      return;
    }
    for (const el of info.els) el.classList.add("picked");
  }

  async dropPicked(el) {
    const picked = this.picked;
    this.picked = null;
    this.markPicked();
    const target = el.closest("[data-drop]");
    const to = target ? target.dataset.drop : el.dataset.loc;
    if (!to || to === picked.from) {
      this.onNotice(t("sh.put_back"), true);
      return;
    }
    const count = picked.byKey ? this.countFor(picked.from, to) : picked.count;
    await this.drop({ from: picked.from, count }, to);
  }

  cancelPick(message) {
    this.picked = null;
    this.markPicked();
    this.onNotice(message, true);
  }

  elementFor(loc) {
    return this.el.querySelector(`[data-loc="${loc}"]`);
  }

  /** A refused action's card shakes, whether or not move errors are shown. */
  refused(loc) {
    if (!loc) return;
    const cards = this.el.querySelectorAll(`.card[data-loc="${CSS.escape(loc)}"]`);
    shake(cards[cards.length - 1] || null);
  }

  destroy() {
    clearTimeout(this.tapTimer);
    this.drag.destroy();
    this.el.remove();
  }
}

function div(className) {
  const el = document.createElement("div");
  el.className = className;
  return el;
}

function makeSlot(loc) {
  const slot = document.createElement("button");
  slot.type = "button";
  slot.className = "slot";
  slot.dataset.loc = loc;
  slot.dataset.focusKey = `slot:${loc}`;
  return slot;
}

