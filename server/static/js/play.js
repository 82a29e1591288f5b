// The game view: draws the board for the session's state and turns input into actions.

import { cardName } from "./cards.js";
import { HeartsBoard } from "./hearts.js";
import { InfoBar } from "./infobar.js";
import { moveFocus } from "./keys.js";
import { SeahavenBoard } from "./seahaven.js";
import { say, toast } from "./ui.js";

const DEAD_ENDS = new Set(["stalemate", "stuck", "lost"]);
export const LOST_TEXT = "No winning line remains from here — undo or start a new game.";
const OPEN_STATUSES = new Set(["playing", ...DEAD_ENDS]);

export class PlayView {
  constructor({ session, settings, endDialog, rankFor, onSolution }) {
    this.session = session;
    this.settings = settings;
    this.endDialog = endDialog;
    this.rankFor = rankFor;
    this.solutionButton = document.getElementById("btn-solution");
    this.root = document.getElementById("board");
    this.banner = document.getElementById("banner");
    this.undoButton = document.getElementById("btn-undo");
    this.info = new InfoBar();
    this.board = null;
    this.kind = null;
    this.lastStatus = null;
    session.addEventListener("state", (ev) => this.onState(ev.detail));
    session.addEventListener("outcome", (ev) => this.onOutcome(ev.detail));
    session.addEventListener("refused", (ev) => this.onRefused(ev.detail));
    settings.addEventListener("change", () => this.redraw());
    this.undoButton.addEventListener("click", () => this.undo());
    this.solutionButton.addEventListener("click", () => onSolution && onSolution(this.session.info));
    new ResizeObserver(() => this.fit()).observe(this.root);
    this.root.addEventListener("keydown", (ev) => this.onBoardKey(ev));
  }

  get canPlay() {
    const state = this.session.state;
    return Boolean(this.session.isOwner && state && OPEN_STATUSES.has(state.status) && !this.session.info.finished_at);
  }

  onState({ state, info, role, cause }) {
    this.ensureBoard(state.game);
    this.draw(state);
    this.info.show(state);
    this.undoButton.disabled = !this.canPlay || state.undo_depth === 0;
    this.solutionButton.hidden = !isFinished(info, state);
    this.showBanner(state, info, role);
    const fresh = cause === "new" || cause === "open";
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

  showBanner(state, info, role) {
    let text = "";
    if (role === "spectator") text = `Watching ${info.owner.name}'s game live`;
    else if (state.status === "stalemate") text = "No more possible moves: undo, or start a new game.";
    else if (state.status === "stuck") text = "Stuck: no card can move. Undo, or start a new game.";
    else if (state.status === "lost") text = LOST_TEXT;
    else if (state.status === "resigned") text = "This game was given up.";
    this.banner.hidden = !text;
    this.banner.textContent = text;
    this.banner.dataset.kind = role === "spectator" ? "watch" : DEAD_ENDS.has(state.status) ? "dead-end" : "info";
  }

  statusChanged(state) {
    if (state.status === this.lastStatus) return;
    if (!this.session.isOwner) {
      if (state.status === "won") say(`${this.session.info.owner.name} won`);
      if (state.status === "lost") say(`${this.session.info.owner.name}'s game has no winning line left`);
      return;
    }
    if (state.status === "lost") say(LOST_TEXT); // it arrives on its own, after the move
    if (state.status === "resigned") say("You gave up this game. Show a solution tells whether it could be won.");
    if (state.status === "won") this.showEnd(state, "won");
    else if (DEAD_ENDS.has(state.status)) this.showEnd(state, state.status);
    else if (DEAD_ENDS.has(this.lastStatus)) this.endDialog.close();
  }

  async showEnd(state, kind) {
    if (document.getElementById("dlg-race").open) return; // the race's results say it all
    const canBoard = Boolean(this.rankFor);
    this.endDialog.show({ state, kind, rankText: "", canBoard });
    if (kind !== "won" || !this.rankFor) return;
    this.endDialog.setRank("Looking up your rank…");
    const text = await this.rankFor(this.session.info, state).catch(() => null);
    this.endDialog.setRank(text || "");
  }

  act(action) {
    if (!this.canPlay) {
      if (!this.session.isOwner && this.session.state) this.notice("You are watching: this game is not yours to play", true);
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
    this.act({ type: "undo" });
  }

  onOutcome({ action, outcome }) {
    if (outcome.reason && this.settings.get("moveErrors")) toast(outcome.reason, { kind: "error" });
    const text = describeOutcome(action, outcome);
    if (text) say(text);
  }

  onRefused({ error }) {
    const message = error.message || "That is not allowed";
    if (this.settings.get("moveErrors")) toast(message, { kind: "error" });
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
    if (key === "u" || (key === "z" && (ev.ctrlKey || ev.metaKey))) {
      this.undo();
      return true;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return false;
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
    this.undoButton.disabled = true;
    this.solutionButton.hidden = true;
    for (const key of ["seq", "status", "role", "gameId", "game"]) delete this.root.dataset[key];
  }
}

const FINAL_STATUSES = new Set(["won", "resigned", "expired"]);

/** Over for good (won, given up, expired): its deal's solution may be asked for. */
export function isFinished(info, state) {
  return Boolean((info && (info.finished_at || info.result)) || (state && FINAL_STATUSES.has(state.status)));
}

function describeOutcome(action, outcome) {
  for (const event of outcome.events || []) {
    if (event.kind === "won") return "You won!";
    if (event.kind === "pair") return `Pair removed: ${event.cards.map((c) => cardName(c.card)).join(" and ")}, ${event.points} points`;
    if (event.kind === "draw") return `Drew ${cardName(event.card)}`;
    if (event.kind === "redeal") return "The waste was turned over into the stock";
    if (event.kind === "select") return `Selected ${cardName(event.card)}`;
    if (event.kind === "deselect") return "Selection cleared";
    if (event.kind === "undo") return "Undone";
    if (event.kind === "move") return `Moved ${event.cards.map(cardName).join(", ")} to ${placeName(event.to)}`;
  }
  return action.type === "undo" ? "Undone" : "";
}

function placeName(loc) {
  const [kind, n] = loc.split(":");
  if (kind === "col") return `column ${n}`;
  if (kind === "cell") return `cell ${n}`;
  return "the foundation";
}
