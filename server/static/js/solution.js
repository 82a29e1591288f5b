// A finished game's solution (docs/protocol.md, "Solutions and dead ends"): was the deal
// winnable, and a winning line from the deal, shown as a numbered list of moves to step through
// beside a board showing the position after the current move.
//
// The solution is a list of engine actions from the deal. To name the cards they move, the deal
// is dealt here from its code (the public algorithm of docs/protocol.md, "Deals") and the
// actions are replayed on that copy: the solver only sends moves the rules accept, so the
// replay needs no validation. Each position is drawn by the game's own board, read-only.

import { cardName, rankText, SUITS } from "./cards.js";
import { GEOMETRY, HeartsBoard } from "./hearts.js";
import { api } from "./identity.js";
import { SeahavenBoard } from "./seahaven.js";
import { el } from "./ui.js";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const RANKS = "A23456789TJQK";
const MASK = (1n << 64n) - 1n;
const CELLS = { C4: 4, C2: 2, C1: 1 };
const PLAY_MS = 900;
const BOARD_PADDING_PX = 6; // .solution-board's padding in app.css

/** SplitMix64 from a seed (BigInt): a function returning the next 64-bit number. */
function splitmix(seed) {
  let state = seed;
  return () => {
    state = (state + 0x9e3779b97f4a7c15n) & MASK;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  };
}

/** The deal of a code such as `SH1-C4-AAAAAJ2`: {game, heart, stock, waste} or {game, columns, cells}. */
export function dealOf(code) {
  const [head, variant, seedText] = code.trim().toUpperCase().split("-");
  const game = head.slice(0, 2);
  let seed = 0n;
  for (const ch of seedText) seed = seed * 32n + BigInt(BASE32.indexOf(ch));
  const deck = Array.from({ length: 52 }, (_, i) =>
    RANKS[i % 13] + (game === "HH" ? "H" : "SHDC"[Math.floor(i / 13)]));
  const next = splitmix(seed);
  for (let i = 51; i >= 1; i--) {
    const j = Number(next() % BigInt(i + 1));
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  if (game === "HH") return { game, heart: deck.slice(0, 25), stock: deck.slice(25, 51), waste: [deck[51]] };
  const columns = Array.from({ length: 10 }, () => []);
  for (let k = 0; k < 50; k++) columns[k % 10].push(deck[k]);
  const cells = new Array(CELLS[variant] || 4).fill(null);
  cells[0] = deck[50];
  if (variant === "C1") columns[1].push(deck[51]);
  else cells[1] = deck[51];
  return { game, columns, cells, found: { S: null, H: null, D: null, C: null } };
}

/** A deep copy of a position, kept for each step of the solution. */
function copyOf(pos) {
  return pos.game === "HH"
    ? { ...pos, heart: [...pos.heart], stock: [...pos.stock], waste: [...pos.waste] }
    : { ...pos, columns: pos.columns.map((c) => [...c]), cells: [...pos.cells], found: { ...pos.found } };
}

// Heart positions (0-based) covering each heart position: the cards half a card to either side
// in the next row down (deal.md's geometry).
const COVERED_BY = GEOMETRY.map((a) =>
  GEOMETRY.flatMap((b, j) => (b.row === a.row + 1 && Math.abs(b.x - a.x) === 1 ? [j] : [])));

/** The state a board draws (the server's view of a game), for a position of the replay. */
export function viewOf(pos) {
  if (pos.game === "HH") {
    const heart = pos.heart.map((card, i) => ({
      pos: i + 1, card, free: card !== null && COVERED_BY[i].every((j) => pos.heart[j] === null),
    }));
    const board = {
      heart, stock_count: pos.stock.length, waste_count: pos.waste.length,
      waste_top: pos.waste.length ? pos.waste[pos.waste.length - 1] : null, selection: null,
    };
    return { board, hints: { framed: [], matches: [], dimmed: [] } };
  }
  const board = {
    columns: pos.columns, cells: pos.cells, foundations: pos.found, cell_count: pos.cells.length,
  };
  return { board, hints: { tappable: [], movable: [], runs: {} } };
}

function short(card) {
  return `${rankText(card)}${SUITS[card[1]].symbol}`;
}

function place(loc) {
  const [kind, n] = loc.split(":");
  if (kind === "col") return `column ${n}`;
  if (kind === "cell") return `cell ${n}`;
  if (kind === "heart") return `heart ${n}`;
  if (kind === "waste") return "the waste";
  return n ? `the ${SUITS[n].symbol} foundation` : "its foundation";
}

function spokenPlace(loc) {
  const [kind, n] = loc.split(":");
  return kind === "found" && n ? `the ${SUITS[n].name} foundation` : place(loc);
}

function actionText(action) {
  return [action.type, ...Object.entries(action).filter(([k]) => k !== "type").map(([, v]) => v)].join(" ");
}

/** Each action as {text, spoken, position}: what it does, with the cards it moves, and the
 * position after it, replayed from the deal. */
export function describeSolution(code, actions) {
  const pos = dealOf(code);
  return actions.map((action) => {
    let step;
    try {
      step = pos.game === "HH" ? heartStep(pos, action) : seahavenStep(pos, action);
    } catch {
      step = { text: actionText(action), spoken: actionText(action) };
    }
    return { ...step, position: copyOf(pos) };
  });
}

function heartStep(pos, action) {
  if (action.type === "draw" || (action.type === "touch" && action.at === "stock")) {
    if (!pos.stock.length) {
      pos.stock = pos.waste;
      pos.waste = [];
      const text = "Turn the waste over into the stock";
      return { text, spoken: text };
    }
    const card = pos.stock.shift();
    pos.waste.push(card);
    return { text: `Draw (${short(card)} onto the waste)`, spoken: `Draw the ${cardName(card)}` };
  }
  if (action.type !== "pair") throw new Error("not a solver action");
  const take = (loc) => {
    if (loc === "waste") return pos.waste.pop();
    const index = Number(loc.split(":")[1]) - 1;
    const card = pos.heart[index];
    pos.heart[index] = null;
    return card;
  };
  const [a, b] = [take(action.a), take(action.b)];
  return {
    text: `Pair ${place(action.a)} (${short(a)}) with ${place(action.b)} (${short(b)})`,
    spoken: `Pair the ${cardName(a)} at ${place(action.a)} with the ${cardName(b)} at ${place(action.b)}`,
  };
}

function seahavenStep(pos, action) {
  if (action.type !== "move") throw new Error("not a solver action");
  const count = action.count || 1;
  const [kind, n] = action.from.split(":");
  let cards;
  if (kind === "col") cards = pos.columns[Number(n) - 1].splice(-count);
  else if (kind === "cell") {
    cards = [pos.cells[Number(n) - 1]];
    pos.cells[Number(n) - 1] = null;
  } else throw new Error("not a solver source");
  const to = action.to === "found" ? `found:${cards[0][1]}` : action.to;
  const [toKind, m] = to.split(":");
  if (toKind === "col") pos.columns[Number(m) - 1].push(...cards);
  else if (toKind === "cell") pos.cells[Number(m) - 1] = cards[0];
  else pos.found[m] = cards[0];
  const what = cards.length > 1 ? `${short(cards[0])}–${short(cards[cards.length - 1])} (${cards.length} cards)` : short(cards[0]);
  const spokenWhat = cards.length > 1
    ? `the ${cardName(cards[0])} and the ${cards.length === 2 ? "card" : `${cards.length - 1} cards`} on it`
    : `the ${cardName(cards[0])}`;
  return {
    text: `Move ${what} from ${place(action.from)} to ${place(to)}`,
    spoken: `Move ${spokenWhat} from ${place(action.from)} to ${spokenPlace(to)}`,
  };
}

/** The "Show a solution" dialog: asks the server once per game, then steps through the moves. */
export class SolutionDialog {
  constructor() {
    this.dialog = document.getElementById("dlg-solution");
    this.summary = document.getElementById("solution-summary");
    this.walk = document.getElementById("solution-walk");
    this.list = document.getElementById("solution-steps");
    this.stepLine = document.getElementById("solution-step");
    this.prev = document.getElementById("solution-prev");
    this.next = document.getElementById("solution-next");
    this.playButton = document.getElementById("solution-play");
    this.boardRoot = document.getElementById("solution-board");
    this.board = null;
    this.deal = null;
    this.answers = new Map(); // game id -> the server's answer (a finished game's never changes)
    this.steps = [];
    this.current = -1; // -1: the deal, before the first move
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
    this.setState("loading", "Asking the solver about this deal…");
    this.walk.hidden = true;
    if (!this.dialog.open) this.dialog.showModal();
    let answer = this.answers.get(info.id);
    if (!answer) {
      try {
        answer = await api("GET", `/api/games/${encodeURIComponent(info.id)}/solution`);
      } catch (error) {
        if (this.gameId !== info.id) return;
        // A refusal (a daily until its day ends, a game still open) carries the server's reason.
        this.setState(error.code === "conflict" ? "refused" : "error", error.message || "The solution could not be fetched");
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
      this.setState("impossible", `This deal cannot be won: the solver tried every way through ${answer.code}.`);
      return;
    }
    if (!answer.winnable || !answer.actions) {
      this.setState("unknown", `The solver could not decide within its budget whether ${answer.code} can be won.`);
      return;
    }
    this.steps = describeSolution(answer.code, answer.actions);
    this.showBoard(answer.code);
    this.setState("won", `This deal can be won. A winning line for ${answer.code}, ${this.steps.length} moves from the deal:`);
    this.list.replaceChildren(
      ...this.steps.map((step, i) => el("li", { dataset: { step: String(i) }, text: step.text })),
    );
    this.walk.hidden = false;
    this.current = -1;
    this.go(-1, { quiet: true });
  }

  go(index, { quiet = false } = {}) {
    const last = this.steps.length - 1;
    this.current = Math.max(-1, Math.min(last, index));
    for (const item of this.list.children) {
      const on = Number(item.dataset.step) === this.current;
      item.classList.toggle("current", on);
      if (on) {
        item.setAttribute("aria-current", "step");
        item.scrollIntoView({ block: "nearest" });
      } else item.removeAttribute("aria-current");
    }
    this.list.dataset.current = String(this.current + 1);
    this.drawPosition();
    this.prev.disabled = this.current < 0;
    this.next.disabled = this.current >= last;
    if (this.current >= last) this.stop();
    const text = this.current < 0
      ? `The deal: ${this.steps.length} moves to go. Next shows the first.`
      : `Move ${this.current + 1} of ${this.steps.length}: ${this.steps[this.current].spoken}`;
    this.stepLine.textContent = quiet ? "" : text;
  }

  /** A read-only board of the deal's game in the dialog (made again for each solution). */
  showBoard(code) {
    this.deal = dealOf(code);
    if (this.board) this.board.destroy();
    this.boardRoot.replaceChildren();
    const quiet = { onAction: () => {}, onMove: async () => false, onNotice: () => {} };
    this.board = this.deal.game === "HH" ? new HeartsBoard(this.boardRoot, quiet) : new SeahavenBoard(this.boardRoot, quiet);
    this.boardRoot.dataset.game = this.deal.game;
    this.boardRoot.hidden = false;
  }

  drawPosition() {
    if (!this.board) return;
    const pos = this.current < 0 ? this.deal : this.steps[this.current].position;
    const pad = 2 * BOARD_PADDING_PX;
    this.board.fit((this.boardRoot.clientWidth || 480) - pad, (this.boardRoot.clientHeight || 250) - pad);
    this.board.render(viewOf(pos), { canPlay: false, placementHelp: false });
    this.boardRoot.dataset.step = String(this.current + 1);
  }

  play() {
    if (this.current >= this.steps.length - 1) this.go(-1, { quiet: true });
    this.playButton.textContent = "Pause";
    this.timer = setInterval(() => this.go(this.current + 1), PLAY_MS);
    this.go(this.current + 1);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = "Play";
  }
}
