// A finished game's solution (docs/protocol.md, "Solutions and dead ends"): was the deal
// winnable, and a winning line from the deal, shown as a numbered list of moves to step through
// beside a board showing the position after the current move.
//
// The browser draws, the engine decides: the server sends every position of the line
// (`steps`, replayed by engine/replay.py from the deal), each with the action's events naming
// the cards it moved. This module only words those events and draws each step's `view` with the
// game's own board, read-only; it holds no rules, no deal and no move of its own.

import { cardName, rankText, sentence, SUITS } from "./cards.js";
import { HeartsBoard } from "./hearts.js";
import { t } from "./i18n.js";
import { api, storedPlayer } from "./identity.js";
import { errorText, placeName } from "./messages.js";
import { SeahavenBoard } from "./seahaven.js";
import { el } from "./ui.js";

const PLAY_MS = 900;
const BOARD_PADDING_PX = 6; // .solution-board's padding in app.css
const STATUS_TEXT = { won: "solution.status.won", stalemate: "solution.status.stalemate", stuck: "solution.status.stuck" };

function short(card) {
  return `${rankText(card)}${SUITS[card[1]].symbol}`;
}

/** A place as the list of moves writes it: short, foundations by their suit's symbol. */
function place(loc) {
  const [kind, n] = loc.split(":");
  if (kind === "heart") return t("solution.place.heart", { n: Number(n) });
  if (kind === "found") return n ? t("solution.place.found_symbol", { symbol: SUITS[n].symbol }) : t("solution.place.own_found");
  return placeName(loc);
}

function actionText(action) {
  return [action.type, ...Object.entries(action).filter(([k]) => k !== "type").map(([, v]) => v)].join(" ");
}

/** What a step's action did, worded from the engine's events: {text, spoken}. */
/** Mark step `current` in a list of steps (items with data-step) and keep it in view. */
export function markStep(list, current) {
  for (const item of list.children) {
    const on = Number(item.dataset.step) === current;
    item.classList.toggle("current", on);
    if (on) {
      item.setAttribute("aria-current", "step");
      keepInView(list, item);
    } else item.removeAttribute("aria-current");
  }
}

/** Scroll the list (only the list: never the page around it) so that `item` shows. */
function keepInView(list, item) {
  const outer = list.getBoundingClientRect();
  const inner = item.getBoundingClientRect();
  if (inner.top < outer.top) list.scrollTop -= outer.top - inner.top;
  else if (inner.bottom > outer.bottom) list.scrollTop += inner.bottom - outer.bottom;
}

export function describeStep(step) {
  const event = step.events.find((e) => ["move", "pair", "draw", "redeal"].includes(e.kind));
  if (event?.kind === "move") {
    const { cards } = event;
    const what = cards.length > 1
      ? t("solution.text.group", { first: short(cards[0]), last: short(cards[cards.length - 1]), count: cards.length })
      : short(cards[0]);
    const from = place(event.from);
    const to = place(event.to);
    const spoken = cards.length > 1
      ? t("solution.say.group", { card: cardName(cards[0]), count: cards.length - 1, from, to: placeName(event.to) })
      : t("solution.say.move", { card: cardName(cards[0]), from, to: placeName(event.to) });
    return { text: t("solution.text.move", { what, from, to }), spoken: sentence(spoken) };
  }
  if (event?.kind === "pair") {
    const [a, b] = event.cards;
    return {
      text: t("solution.text.pair", { a: place(a.at), first: short(a.card), b: place(b.at), second: short(b.card) }),
      spoken: t("solution.say.pair", { first: cardName(a.card), a: place(a.at), second: cardName(b.card), b: place(b.at) }),
    };
  }
  if (event?.kind === "draw") {
    return { text: t("solution.text.draw", { card: short(event.card) }), spoken: t("solution.say.draw", { card: cardName(event.card) }) };
  }
  if (event?.kind === "redeal") {
    const text = t("solution.redeal");
    return { text, spoken: text };
  }
  const touched = step.events.find((e) => ["select", "deselect", "undo"].includes(e.kind));
  if (touched?.kind === "select") {
    return {
      text: t("solution.text.select", { card: short(touched.card), at: place(touched.at) }),
      spoken: sentence(t("say.select", { card: cardName(touched.card) })),
    };
  }
  if (touched?.kind === "deselect" || touched?.kind === "undo") {
    const text = t(`say.${touched.kind}`);
    return { text, spoken: text };
  }
  if (step.action.type === "undo") return { text: t("say.undo"), spoken: t("say.undo") };
  const text = step.action.at ? t("solution.text.touch", { at: place(step.action.at) }) : actionText(step.action);
  return { text, spoken: text };
}

/** The information bar of a step, as one line. */
function barText(step) {
  const status = STATUS_TEXT[step.status];
  const line = t("solution.bar", { score: step.score, moves: step.moves, done: step.progress, total: step.progress_total });
  return status ? `${line} · ${t(status)}` : line;
}

/** The "Show a solution" dialog: asks the server once per game, then steps through the moves. */
export class SolutionDialog {
  constructor() {
    this.dialog = document.getElementById("dlg-solution");
    this.summary = document.getElementById("solution-summary");
    this.walk = document.getElementById("solution-walk");
    this.list = document.getElementById("solution-steps");
    this.stepLine = document.getElementById("solution-step");
    this.bar = document.getElementById("solution-bar");
    this.prev = document.getElementById("solution-prev");
    this.next = document.getElementById("solution-next");
    this.playButton = document.getElementById("solution-play");
    this.boardRoot = document.getElementById("solution-board");
    this.board = null;
    this.answers = new Map(); // game id -> the server's answer (a finished game's never changes)
    this.steps = []; // the server's steps: [0] is the deal, [n] the position after move n
    this.texts = []; // the wording of each step's move ([0], the deal, has none)
    this.current = 0;
    this.timer = null;
    this.gameId = null;
    this.prev.addEventListener("click", () => this.go(this.current - 1));
    this.next.addEventListener("click", () => this.go(this.current + 1));
    this.playButton.addEventListener("click", () => (this.timer ? this.stop() : this.play()));
    this.list.addEventListener("click", (ev) => {
      const item = ev.target.closest("li[data-step]");
      if (item) this.go(Number(item.dataset.step));
    });
    this.list.addEventListener("keydown", (ev) => {
      const delta = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[ev.key];
      if (delta) {
        ev.preventDefault();
        this.go(this.current + delta);
      }
    });
    this.dialog.addEventListener("close", () => this.stop());
  }

  /** Open the dialog for a finished game (its info) and fetch the answer if needed. */
  async show(info) {
    this.stop();
    this.gameId = info.id;
    this.setState("loading", t("solution.loading"));
    this.walk.hidden = true;
    if (!this.dialog.open) this.dialog.showModal();
    let answer = this.answers.get(info.id);
    if (!answer) {
      try {
        // With the player's token: a daily's solution is sealed to everyone else until its day ends.
        const me = storedPlayer();
        answer = await api("GET", `/api/games/${encodeURIComponent(info.id)}/solution`, undefined, me && me.token);
      } catch (error) {
        if (this.gameId !== info.id) return;
        // A refusal (a daily until its day ends, a game still open) carries the server's reason.
        if (["conflict", "sealed"].includes(error.code)) this.setState("refused", t(info.daily ? "solution.refused_daily" : "solution.refused_open"));
        else this.setState("error", errorText(error, "solution.failed"));
        return;
      }
      this.answers.set(info.id, answer);
    }
    if (this.gameId === info.id) this.render(answer);
  }

  setState(state, text) {
    this.dialog.dataset.state = state;
    this.summary.textContent = text;
  }

  render(answer) {
    if (answer.winnable === false) {
      this.setState("impossible", t("solution.impossible", { code: answer.code }));
      return;
    }
    if (!answer.winnable || !answer.steps) {
      this.setState("unknown", t("solution.unknown", { code: answer.code }));
      return;
    }
    this.steps = answer.steps;
    this.texts = this.steps.map((step) => (step.action ? describeStep(step) : null));
    const moves = this.steps.length - 1;
    this.showBoard(answer.code);
    this.setState("won", t("solution.won", { code: answer.code, count: moves }));
    this.list.replaceChildren(
      ...this.steps.slice(1).map((step) => el("li", { dataset: { step: String(step.index) }, text: this.texts[step.index].text })),
    );
    this.walk.hidden = false;
    this.go(0, { quiet: true });
  }

  go(index, { quiet = false } = {}) {
    const last = this.steps.length - 1;
    this.current = Math.max(0, Math.min(last, index));
    markStep(this.list, this.current);
    this.list.dataset.current = String(this.current);
    this.drawPosition();
    this.prev.disabled = this.current <= 0;
    this.next.disabled = this.current >= last;
    if (this.current >= last) this.stop();
    const text = this.current === 0
      ? t("solution.deal", { count: last })
      : t("solution.step", { n: this.current, total: last, text: this.texts[this.current].spoken });
    this.stepLine.textContent = quiet ? "" : text;
  }

  /** A read-only board of the deal's game in the dialog (made again for each solution). */
  showBoard(code) {
    const game = code.slice(0, 2).toUpperCase();
    if (this.board) this.board.destroy();
    this.boardRoot.replaceChildren();
    const quiet = { onAction: () => {}, onMove: async () => false, onNotice: () => {} };
    this.board = game === "HH" ? new HeartsBoard(this.boardRoot, quiet) : new SeahavenBoard(this.boardRoot, quiet);
    this.boardRoot.dataset.game = game;
    this.boardRoot.hidden = false;
  }

  /** Draw the current step's position as the server sent it, and its information bar. */
  drawPosition() {
    if (!this.board) return;
    const step = this.steps[this.current];
    const pad = 2 * BOARD_PADDING_PX;
    this.board.fit((this.boardRoot.clientWidth || 480) - pad, (this.boardRoot.clientHeight || 250) - pad);
    this.board.render({ board: step.view.board, hints: step.view.hints }, { canPlay: false, placementHelp: false });
    this.boardRoot.dataset.step = String(this.current);
    this.boardRoot.dataset.status = step.status;
    this.boardRoot.dataset.fingerprint = step.view.fingerprint;
    this.bar.textContent = barText(step);
  }

  play() {
    if (this.current >= this.steps.length - 1) this.go(0, { quiet: true });
    this.playButton.textContent = t("solution.pause");
    this.timer = setInterval(() => this.go(this.current + 1), PLAY_MS);
    this.go(this.current + 1);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = t("solution.play");
  }
}
