// The game view: draws the board for the session's state and turns input into actions.

import { Animator } from "./animate.js";
import { Assist } from "./assist.js";
import { cardName } from "./cards.js";
import { HeartsBoard } from "./hearts.js";
import { i18nEvents, t } from "./i18n.js";
import { InfoBar } from "./infobar.js";
import { moveFocus } from "./keys.js";
import { errorText, placeName, refusalText } from "./messages.js";
import { SeahavenBoard } from "./seahaven.js";
import { sounds } from "./sound.js";
import { el, say, toast } from "./ui.js";

const DEAD_ENDS = new Set(["stalemate", "stuck", "lost"]);
const BANNERS = {
  stalemate: "status.stalemate",
  stuck: "status.stuck",
  lost: "status.lost",
  resigned: "status.resigned",
};
const OPEN_STATUSES = new Set(["playing", ...DEAD_ENDS]);

export class PlayView {
  constructor({ session, settings, endDialog, rankFor, onSolution, onGiveUp, onNewGame }) {
    this.session = session;
    this.settings = settings;
    this.endDialog = endDialog;
    this.rankFor = rankFor;
    this.solutionButton = document.getElementById("btn-solution");
    this.root = document.getElementById("board");
    this.banner = document.getElementById("banner");
    this.undoButton = document.getElementById("btn-undo");
    this.giveUpButton = document.getElementById("btn-give-up");
    this.restartButton = document.getElementById("btn-restart");
    this.animator = new Animator(this.root);
    this.previous = null;
    this.info = new InfoBar();
    this.board = null;
    this.kind = null;
    this.lastStatus = null;
    session.addEventListener("state", (ev) => this.onState(ev.detail));
    session.addEventListener("outcome", (ev) => this.onOutcome(ev.detail));
    session.addEventListener("refused", (ev) => this.onRefused(ev.detail));
    settings.addEventListener("change", () => this.redraw());
    this.undoButton.addEventListener("click", () => this.undo());
    this.giveUpButton.addEventListener("click", () => onGiveUp && onGiveUp());
    i18nEvents.addEventListener("change", () => this.relabel());
    this.solutionButton.addEventListener("click", () => onSolution && onSolution(this.session.info));
    this.shareButton = document.getElementById("btn-share");
    this.stats = document.querySelector("#infobar .stats");
    this.assist = new Assist({ session, root: this.root, act: (action) => this.act(action), canPlay: () => this.canPlay });
    this.empty = emptyState(onNewGame);
    this.root.after(this.empty);
    this.setEmpty(true);
    new ResizeObserver(() => this.fit()).observe(this.root);
    this.root.addEventListener("keydown", (ev) => this.onBoardKey(ev));
  }

  get canPlay() {
    const state = this.session.state;
    return Boolean(this.session.isOwner && state && OPEN_STATUSES.has(state.status) && !this.session.info.finished_at);
  }

  onState({ state, info, role, cause }) {
    const started = performance.now();
    this.drawState({ state, info, role, cause });
    // How long a new position takes to draw and start its motion (read by the browser tests).
    performance.measure("solitaire:draw", { start: started });
  }

  /** No game on the table: its controls off, its figures gone, an invitation to deal one. */
  setEmpty(empty) {
    this.empty.hidden = !empty;
    this.stats.hidden = empty;
    this.shareButton.disabled = empty;
    if (!empty) return;
    this.undoButton.disabled = true;
    this.giveUpButton.hidden = true;
    this.restartButton.hidden = true;
    this.solutionButton.hidden = true;
    this.assist.clear();
  }

  drawState({ state, info, role, cause }) {
    this.setEmpty(false);
    const fresh = cause === "new" || cause === "open";
    this.previous = fresh ? null : this.current;
    this.current = state;
    this.ensureBoard(state.game);
    // Where every card is now, so that the new position can glide from there (animate.js).
    const before = fresh || cause === "resume" ? null : this.animator.measure();
    this.draw(state);
    if (before) this.animator.play(before, { undo: this.lastActionWasUndo });
    this.lastActionWasUndo = false;
    this.info.show(state);
    this.undoButton.disabled = !this.canPlay || state.undo_depth === 0;
    this.giveUpButton.hidden = !this.canPlay;
    this.restartButton.hidden = !state.code || !this.session.isOwner; // a daily's code is sealed
    this.solutionButton.hidden = !isFinished(info, state);
    this.showBanner(state, info, role);
    this.assist.update(state, info, cause);
    if (fresh) this.focusBoard();
    if (fresh) this.lastStatus = state.status;
    else this.statusChanged(state);
    this.lastStatus = state.status;
  }

  ensureBoard(game) {
    if (this.kind === game && this.board) return;
    if (this.board) this.board.destroy();
    this.kind = game;
    const handlers = {
      onAction: (action) => this.act(action),
      onMove: (action) => this.move(action),
      onNotice: (text, always) => this.notice(text, always),
    };
    this.board = game === "HH" ? new HeartsBoard(this.root, handlers) : new SeahavenBoard(this.root, handlers);
    this.root.dataset.game = game;
    this.fit();
  }

  fit() {
    if (!this.board) return;
    const style = getComputedStyle(this.root);
    const padX = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    const padY = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
    this.board.fit(this.root.clientWidth - padX, this.root.clientHeight - padY);
  }

  draw(state) {
    const focusKey = document.activeElement && this.root.contains(document.activeElement)
      ? document.activeElement.dataset.focusKey
      : null;
    this.board.render(state, { placementHelp: this.settings.get("placementHelp"), canPlay: this.canPlay });
    this.root.dataset.seq = String(state.seq);
    this.root.dataset.status = state.status;
    this.root.dataset.role = this.session.role;
    this.root.dataset.gameId = this.session.gameId;
    this.root.classList.toggle("four-color", Boolean(this.settings.get("fourColor")));
    this.root.classList.toggle("readonly", !this.canPlay);
    if (focusKey) this.restoreFocus(focusKey);
  }

  /** After a deal the keys play at once: focus goes to the board's first card, unless a dialog
   * or a text field has it. */
  focusBoard() {
    const active = document.activeElement;
    if (active && (active.closest("dialog[open]") || ["INPUT", "TEXTAREA", "SELECT"].includes(active.tagName))) return;
    if (document.querySelector("dialog[open]")) return;
    const first = this.root.querySelector(".card[data-loc]:not([hidden]):not(.covered)") ||
      this.root.querySelector("[data-loc]:not([hidden])");
    (first || this.root).focus({ preventScroll: true });
  }

  restoreFocus(key) {
    const active = document.activeElement;
    if (active && active.dataset.focusKey === key && !active.hidden) return;
    const target = this.root.querySelector(`[data-focus-key="${key}"]:not([hidden])`) ||
      this.root.querySelector("[data-loc]:not([hidden]):not(.covered)");
    if (target) target.focus({ preventScroll: true });
    else this.root.focus({ preventScroll: true });
  }

  redraw() {
    if (this.session.state) this.draw(this.session.state);
  }

  /** Texts drawn from the state again in the new language (the board's labels, the banner). */
  relabel() {
    if (!this.session.state) return;
    if (this.board) this.board.destroy(); // built with the old language's labels: build it again
    this.board = null;
    this.ensureBoard(this.session.state.game);
    this.redraw();
    this.showBanner(this.session.state, this.session.info, this.session.role);
  }

  showBanner(state, info, role) {
    let text = "";
    if (role === "spectator") text = t("status.watching", { name: info.owner.name });
    else if (BANNERS[state.status]) text = t(BANNERS[state.status]);
    this.banner.hidden = !text;
    this.banner.textContent = text;
    this.banner.dataset.kind = role === "spectator" ? "watch" : DEAD_ENDS.has(state.status) ? "dead-end" : "info";
  }

  statusChanged(state) {
    if (state.status === this.lastStatus) return;
    if (!this.session.isOwner) {
      if (state.status === "won") say(t("status.other_won", { name: this.session.info.owner.name }));
      if (state.status === "lost") say(t("status.other_lost", { name: this.session.info.owner.name }));
      return;
    }
    if (state.status === "lost") say(t("status.lost")); // it arrives on its own, after the move
    if (state.status === "resigned") say(t("status.you_resigned"));
    if (state.status === "won") {
      sounds.play("win");
      this.showEnd(state, "won"); // the dialog opens at once (showEnd awaits only the rank) …
      this.animator.celebrate(); // … and the celebration plays over it
    }
    else if (DEAD_ENDS.has(state.status)) this.showEnd(state, state.status);
    else if (DEAD_ENDS.has(this.lastStatus)) this.endDialog.close();
  }

  async showEnd(state, kind) {
    if (document.getElementById("dlg-race").open) return; // the race's results say it all
    const canBoard = Boolean(this.rankFor);
    this.endDialog.show({ state, kind, rankText: "", canBoard, gameId: this.session.gameId });
    if (kind !== "won" || !this.rankFor) return;
    this.endDialog.setRank(t("end.rank_loading"));
    const text = await this.rankFor(this.session.info, state).catch(() => null);
    this.endDialog.setRank(text || "");
  }

  act(action) {
    if (!this.canPlay) {
      if (!this.session.isOwner && this.session.state) this.notice(t("status.not_yours"), true);
      return Promise.resolve(null);
    }
    return this.session.act(action);
  }

  async move(action) {
    const reply = await this.act(action);
    return Boolean(reply);
  }

  undo() {
    if (!this.canPlay || this.session.state.undo_depth === 0) return;
    this.lastActionWasUndo = true;
    this.act({ type: "undo" });
  }

  onOutcome({ action, outcome }) {
    if (outcome.reason) {
      // HH-16: another rank was touched; it is the new selection. Worded as the refusal it
      // explains, from the cards on screen (the earlier selection and the touched card).
      const select = (outcome.events || []).find((event) => event.kind === "select");
      const first = selectedCard(this.previous);
      const text = first && select ? refusalText("rank_mismatch", { first, second: select.card }) : t("refusal.rank_mismatch_plain");
      if (this.settings.get("moveErrors")) toast(text, { kind: "error" });
      this.board.refused(select ? select.at : null);
      sounds.play("error");
      say(text);
      return;
    }
    playSound(outcome);
    const text = describeOutcome(action, outcome);
    if (text) say(text);
  }

  onRefused({ error, action }) {
    const message = errorText(error, "status.refused");
    // The day's end is news, not a move error: said whatever the settings.
    const dayOver = error && (error.code || (error.reply && error.reply.code)) === "day_over";
    if (dayOver || this.settings.get("moveErrors")) toast(message, { kind: "error" });
    // Feedback even with move errors off: the card shakes (a drag glides back in drag.js).
    if (this.board) this.board.refused(action && (action.at || action.from || action.a));
    sounds.play("error");
    say(message);
  }

  /** A local explanation: shown like a move error (only when they are on), unless `always`. */
  notice(text, always = false) {
    if (always || this.settings.get("moveErrors")) toast(text, { kind: always ? "info" : "error" });
    say(text);
  }

  onBoardKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key.startsWith("Arrow") && ev.target.closest("[data-loc]")) {
      if (moveFocus(this.root, ev.target.closest("[data-loc]"), ev.key)) ev.preventDefault();
    }
  }

  /** Keys that work anywhere on the page (see the help dialog). */
  shortcut(ev) {
    const key = ev.key.toLowerCase();
    if (this.assist.shortcut(ev)) return true; // before undo: Shift+Ctrl+Z is redo
    if (key === "u" || (key === "z" && (ev.ctrlKey || ev.metaKey))) {
      this.undo();
      return true;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return false;
    if (this.kind === "SH" && this.board) {
      if (key === "escape" && this.board.cancelKey()) return true;
      if (!ev.shiftKey && this.board.placeKey(key)) return true;
    }
    if (this.kind === "HH" && key === "d") {
      this.act({ type: "touch", at: "stock" });
      return true;
    }
    if (this.kind === "HH" && key === "w") {
      const waste = this.board.elementFor("waste");
      if (waste) waste.focus();
      return true;
    }
    if (key === "enter" && ev.target === document.body && this.board) {
      const first = this.root.querySelector("[data-loc]:not([hidden]):not(.covered)");
      if (first) first.focus();
      return Boolean(first);
    }
    return false;
  }

  clear() {
    if (this.board) this.board.destroy();
    this.board = null;
    this.kind = null;
    this.info.clear();
    this.banner.hidden = true;
    this.setEmpty(true);
    for (const key of ["seq", "status", "role", "gameId", "game"]) delete this.root.dataset[key];
  }
}

/** What the play view shows with no game: a line to say so and the way to a game. */
function emptyState(onNewGame) {
  const title = el("h2", { id: "empty-title", "data-i18n": "play.empty_title" }, t("play.empty_title"));
  const text = el("p", { "data-i18n": "play.empty_text" }, t("play.empty_text"));
  const button = el("button", { type: "button", class: "btn primary", id: "empty-new", "data-i18n": "nav.new_game" }, t("nav.new_game"));
  button.addEventListener("click", () => onNewGame && onNewGame());
  return el("div", { id: "empty-state", class: "empty-state", role: "region", "aria-labelledby": "empty-title" }, title, text, button);
}

const FINAL_STATUSES = new Set(["won", "resigned", "expired"]);

/** Over for good (won, given up, expired): its deal's solution may be asked for. */
export function isFinished(info, state) {
  return Boolean((info && (info.finished_at || info.result)) || (state && FINAL_STATUSES.has(state.status)));
}

function describeOutcome(action, outcome) {
  for (const event of outcome.events || []) {
    if (event.kind === "won") return t("say.won");
    if (event.kind === "pair") {
      const [first, second] = event.cards.map((c) => cardName(c.card));
      return t("say.pair", { first, second, points: event.points });
    }
    if (event.kind === "draw") return t("say.draw", { card: cardName(event.card) });
    if (event.kind === "redeal") return t("say.redeal");
    if (event.kind === "select") return t("say.select", { card: cardName(event.card) });
    if (event.kind === "deselect") return t("say.deselect");
    if (event.kind === "undo") return t("say.undo");
    if (event.kind === "move") return t("say.move", { cards: event.cards.map((c) => cardName(c)).join(", "), place: placeName(event.to) });
  }
  return action.type === "undo" ? t("say.undo") : "";
}

/** The sound of an accepted action's outcome (sound.js plays nothing unless switched on). */
function playSound(outcome) {
  const kinds = (outcome.events || []).map((event) => event.kind);
  if (kinds.includes("won")) return;
  if (kinds.includes("pair")) sounds.play("pair");
  else if (kinds.some((kind) => ["move", "draw", "redeal", "undo"].includes(kind))) sounds.play("move");
}

/** The card selected in a Heart to Heart state (heart position or waste), or null. */
function selectedCard(state) {
  const board = state && state.board;
  if (!board || !board.selection) return null;
  if (board.selection === "waste") return board.waste_top;
  const slot = board.heart.find((entry) => `heart:${entry.pos}` === board.selection);
  return slot ? slot.card : null;
}
