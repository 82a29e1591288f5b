// Watching a finished game again (#replay=g_…&move=37) and racing its ghost.
//
// The server sends every position (GET /api/games/{id}/replay: the engine's steps with their
// events, information bar, public view and recorded times); the page only draws a step's view
// with the game's own board, read-only, and words its move from the events (the solution
// dialog's wording). First, previous, next, last, a slider, play/pause at a chosen speed (or at
// the recorded pace), the move list, the information bar as it was; the address follows the
// step, so a link points at a move.
//
// "Race this ghost" sends ghost_race: a new game of the same deal for you, with the ghost's
// progress (ghost_progress, timed by the server from the recorded times) in a strip above the
// board, and who won (ghost_finished) in a dialog. After a reconnect, ghost_watch follows the
// race again on the new connection.

import { HeartsBoard } from "./hearts.js";
import { formatDate, formatNumber, i18nEvents, t } from "./i18n.js";
import { api } from "./identity.js";
import { formatTime } from "./infobar.js";
import { replaceHash } from "./router.js";
import { SeahavenBoard } from "./seahaven.js";
import { describeStep, markStep } from "./solution.js";
import { el, toast } from "./ui.js";

const SPEEDS = [0.5, 1, 2, 4, 8]; // moves a second; "real" plays at the recorded pace
const REAL_GAP_CAP_MS = 4000; // at the recorded pace, a long think is shortened to this
const BOARD_PAD_PX = 12;
const FINAL = new Set(["won", "resigned", "expired"]);

/** The move a link asks for: #replay=g_…&move=37 (none: the deal). */
export function linkedMove(hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const move = Number.parseInt(params.get("move") || "0", 10);
  return Number.isFinite(move) && move > 0 ? move : 0;
}

export class ReplayPage {
  constructor(app, ghosts) {
    this.app = app;
    this.ghosts = ghosts;
    this.section = el("section", { id: "view-replay", class: "view page replay-page", hidden: true, "aria-labelledby": "replay-title" });
    document.getElementById("main").append(this.section);
    this.replay = null;
    this.current = 0;
    this.timer = null;
    this.speed = "1";
    this.board = null;
    this.loadToken = 0;
    i18nEvents.addEventListener("change", () => {
      if (this.replay) this.render(this.current);
    });
    document.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  route(view, value) {
    if (view !== "replay") {
      this.stop();
      return null;
    }
    this.open(value, linkedMove());
    return "replay";
  }

  async open(gameId, move) {
    this.stop();
    if (this.replay && this.replay.game_id === gameId) {
      this.go(move);
      return;
    }
    const token = ++this.loadToken;
    this.replay = null;
    this.section.replaceChildren(el("h2", { id: "replay-title" }, t("replay.title")), el("p", { class: "muted", role: "status" }, t("home.loading")));
    let replay;
    try {
      replay = await api("GET", `/api/games/${encodeURIComponent(gameId)}/replay`, undefined, this.app.player.token);
    } catch (error) {
      if (token !== this.loadToken) return;
      this.section.replaceChildren(el("h2", { id: "replay-title" }, t("replay.title")), el("p", { class: "error", id: "replay-error", role: "alert" }, error.message || t("replay.failed")));
      return;
    }
    if (token !== this.loadToken) return;
    this.replay = replay;
    this.texts = replay.steps.map((step) => (step.action ? describeStep(step) : null));
    this.render(move);
  }

  get last() {
    return this.replay.steps.length - 1;
  }

  render(move) {
    const r = this.replay;
    const result = t(`home.result.${r.result}`);
    this.boardRoot = el("div", { class: "replay-board", id: "replay-board", role: "group", "aria-label": t("replay.board") });
    this.infoBar = el("dl", { class: "stats replay-bar", id: "replay-bar", "aria-label": t("replay.bar") });
    this.stepLine = el("p", { class: "replay-step", id: "replay-step", "aria-live": "polite" });
    this.slider = el("input", { type: "range", id: "replay-slider", min: "0", max: String(this.last), value: "0", step: "1", oninput: () => this.go(Number(this.slider.value)) });
    const button = (id, key, onclick, shortcut) => el("button", { class: "btn", type: "button", id, onclick, "aria-keyshortcuts": shortcut }, t(key));
    this.firstButton = button("replay-first", "replay.first", () => this.go(0), "Home");
    this.prevButton = button("replay-prev", "replay.prev", () => this.go(this.current - 1), "ArrowLeft");
    this.playButton = button("replay-play", "replay.play", () => (this.timer ? this.stop() : this.play()), "Space");
    this.nextButton = button("replay-next", "replay.next", () => this.go(this.current + 1), "ArrowRight");
    this.lastButton = button("replay-last", "replay.last", () => this.go(this.last), "End");
    const speed = el(
      "select",
      { id: "replay-speed", onchange: (ev) => this.setSpeed(ev.target.value) },
      ...SPEEDS.map((s) => el("option", { value: String(s), selected: this.speed === String(s) }, t("replay.speed_n", { count: s }))),
      el("option", { value: "real", selected: this.speed === "real" }, t("replay.speed_real")),
    );
    this.list = el("ol", { class: "solution-steps replay-moves", id: "replay-moves", tabindex: "0", "aria-label": t("replay.moves") });
    this.list.append(...r.steps.slice(1).map((step) => el("li", { dataset: { step: String(step.index) } }, this.texts[step.index].text)));
    this.list.addEventListener("click", (ev) => {
      const item = ev.target.closest("li[data-step]");
      if (item) this.go(Number(item.dataset.step));
    });
    this.list.addEventListener("keydown", (ev) => {
      const delta = { ArrowDown: 1, ArrowUp: -1 }[ev.key];
      if (delta) {
        ev.preventDefault();
        this.go(this.current + delta);
      }
    });
    const ghost = el("button", { class: "btn primary", type: "button", id: "replay-ghost", onclick: () => this.ghosts.start(r.game_id) }, t("replay.ghost"));
    const when = r.finished_at ? formatDate(r.finished_at, { dateStyle: "medium", timeStyle: "short" }) : "";
    this.section.replaceChildren(
      el("h2", { id: "replay-title" }, t("replay.title_named", { name: r.owner.name, code: r.code ?? r.family })),
      el(
        "p",
        { class: "muted", id: "replay-summary" },
        t("replay.summary", { result, moves: r.moves, time: formatTime(r.elapsed_ms), when }),
        " ",
        el("a", { href: `#profile=${r.owner.id}` }, t("replay.owner_profile", { name: r.owner.name })),
      ),
      this.infoBar,
      this.boardRoot,
      this.stepLine,
      el(
        "div",
        { class: "replay-controls", role: "group", "aria-label": t("replay.controls") },
        el("div", { class: "row" }, this.firstButton, this.prevButton, this.playButton, this.nextButton, this.lastButton),
        el("div", { class: "row" }, el("label", { for: "replay-slider" }, t("replay.slider")), this.slider),
        el("div", { class: "row" }, el("label", { for: "replay-speed" }, t("replay.speed")), speed, ghost),
      ),
      this.list,
    );
    this.makeBoard(r.family); // a daily's code stays sealed until its day ends, even to its player
    this.go(move, { quiet: true });
    // A replay opens at its top (title, board, controls), whatever move the address names.
    this.section.scrollTop = 0;
    window.scrollTo(0, 0);
  }

  makeBoard(family) {
    const game = family.slice(0, 2).toUpperCase();
    if (this.board) this.board.destroy();
    const quiet = { onAction: () => {}, onMove: async () => false, onNotice: () => {} };
    this.board = game === "HH" ? new HeartsBoard(this.boardRoot, quiet) : new SeahavenBoard(this.boardRoot, quiet);
    this.boardRoot.dataset.game = game;
    if (!this.resizer) this.resizer = new ResizeObserver(() => this.draw());
    this.resizer.disconnect();
    this.resizer.observe(this.boardRoot);
  }

  /** Show step `index` (0: the deal; n: after the n-th action) and put it in the address. */
  go(index, { quiet = false } = {}) {
    if (!this.replay) return;
    this.current = Math.max(0, Math.min(this.last, Number.isFinite(index) ? index : 0));
    markStep(this.list, this.current);
    this.slider.value = String(this.current);
    this.slider.setAttribute("aria-valuetext", this.current ? t("replay.at_move", { n: this.current, total: this.last }) : t("replay.at_deal"));
    this.firstButton.disabled = this.prevButton.disabled = this.current <= 0;
    this.nextButton.disabled = this.lastButton.disabled = this.current >= this.last;
    this.draw();
    this.showBar(this.replay.steps[this.current]);
    const text = this.current === 0
      ? t("replay.deal_line", { count: this.last })
      : t("replay.step_line", { n: this.current, total: this.last, text: this.texts[this.current].spoken });
    this.stepLine.textContent = quiet && !this.timer ? (this.current ? text : "") : text;
    if (this.current >= this.last) this.stop();
    const hash = `#replay=${this.replay.game_id}${this.current ? `&move=${this.current}` : ""}`;
    if (location.hash !== hash && document.body.dataset.view === "replay") replaceHash(hash.slice(1));
  }

  draw() {
    if (!this.board || !this.replay) return;
    const step = this.replay.steps[this.current];
    this.board.fit((this.boardRoot.clientWidth || 480) - BOARD_PAD_PX, (this.boardRoot.clientHeight || 260) - BOARD_PAD_PX);
    this.board.render({ board: step.view.board, hints: step.view.hints }, { canPlay: false, placementHelp: false });
    this.boardRoot.dataset.step = String(this.current);
    this.boardRoot.dataset.status = step.status;
    this.boardRoot.dataset.fingerprint = step.view.fingerprint;
  }

  /** The information bar as it was after this step: time, score, moves, cleared, status. */
  showBar(step) {
    const item = (key, value, id) => el("div", {}, el("dt", {}, t(key)), el("dd", { id }, value));
    this.infoBar.replaceChildren(
      item("info.time", formatTime(step.elapsed_ms), "replay-time"),
      item("info.score", formatNumber(step.score), "replay-score"),
      item("info.moves", formatNumber(step.moves), "replay-moves-count"),
      item("info.cleared", `${step.progress} / ${step.progress_total}`, "replay-progress"),
      item("replay.status", this.statusText(step), "replay-status"),
    );
  }

  /** A step's status; the last one of a game given up or expired says so (the engine's status
   * of that position is still "playing"). */
  statusText(step) {
    const r = this.replay;
    if (step.index === this.last && r.result && r.result !== "won") return t(`home.result.${r.result}`);
    return t(`replay.status.${step.status}`);
  }

  setSpeed(value) {
    this.speed = value;
    if (this.timer) {
      this.stop();
      this.play();
    }
  }

  /** Milliseconds until the next step: from the chosen speed, or the recorded gap. */
  delay() {
    if (this.speed !== "real") return 1000 / Number(this.speed);
    const steps = this.replay.steps;
    const next = steps[this.current + 1];
    const here = steps[this.current];
    if (!next || !here.at || !next.at) return 500;
    return Math.min(REAL_GAP_CAP_MS, Math.max(40, next.at - here.at));
  }

  play() {
    if (!this.replay) return;
    if (this.current >= this.last) this.go(0, { quiet: true });
    this.playButton.textContent = t("replay.pause");
    this.playButton.setAttribute("aria-pressed", "true");
    const tick = () => {
      this.timer = setTimeout(() => {
        this.go(this.current + 1);
        if (this.timer) tick();
      }, this.delay());
    };
    tick();
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.playButton) {
      this.playButton.textContent = t("replay.play");
      this.playButton.setAttribute("aria-pressed", "false");
    }
  }

  onKey(ev) {
    if (document.body.dataset.view !== "replay" || !this.replay || ev.defaultPrevented) return;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const target = ev.target;
    if (target instanceof HTMLElement && target.closest("input, select, textarea, button, ol")) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1 };
    if (ev.key in moves) this.go(this.current + moves[ev.key]);
    else if (ev.key === "Home") this.go(0);
    else if (ev.key === "End") this.go(this.last);
    else if (ev.key === " ") (this.timer ? this.stop() : this.play());
    else return;
    ev.preventDefault();
  }
}

/** A ghost race of this page: the strip above the board and the result. */
export class GhostRaces {
  constructor(app) {
    this.app = app;
    this.run = null; // {raceId, gameId, ghost: Racer, recorded, done}
    this.strip = el("section", { id: "ghost-strip", class: "race-strip ghost-strip", hidden: true, "aria-label": t("ghost.label") });
    document.getElementById("race-strip").after(this.strip);
    this.dialog = el("dialog", { id: "dlg-ghost", class: "dialog", "aria-labelledby": "dlg-ghost-title" });
    document.body.append(this.dialog);
    app.net.addEventListener("push", (ev) => this.onPush(ev.detail));
    app.net.onReady((detail) => {
      if (detail.again && this.run && !this.run.done) this.refollow(this.run);
    });
    // A finished game on screen can be watched again: a link beside Share and the solution.
    this.watchAgain = el("a", { class: "btn", id: "btn-watch-again", hidden: true }, t("home.replay"));
    document.querySelector("#infobar .actions").append(this.watchAgain);
    app.session.onState((detail) => {
      this.render();
      const { info, state } = detail;
      const done = Boolean(info && (info.finished_at || info.result || FINAL.has(state.status)));
      this.watchAgain.hidden = !done;
      if (done) this.watchAgain.href = `#replay=${info.id}`;
    });
    i18nEvents.addEventListener("change", () => {
      this.watchAgain.textContent = t("home.replay");
    });
  }

  async start(gameId) {
    try {
      await this.app.net.whenReady();
      const reply = await this.app.net.request("ghost_race", { game_id: gameId });
      this.run = { raceId: reply.race_id, gameId: reply.game.id, ghost: reply.ghost, recorded: reply.recorded, done: false, lost: false };
      this.app.session.adopt({ game: reply.game, state: reply.state, role: "owner" });
      location.hash = `game=${reply.game.id}`;
      document.getElementById("board").focus({ preventScroll: true });
      toast(t("ghost.started", { name: reply.ghost.player.name }));
    } catch (error) {
      toast(error.message || t("ghost.failed"), { kind: "error" });
    }
  }

  /** After a reconnect: the ghost's pushes went to the old connection; follow it on this one.
   * A race the server no longer has (finished meanwhile, or a restart) is shown as lost. */
  async refollow(run) {
    try {
      const reply = await this.app.net.request("ghost_watch", { race_id: run.raceId });
      if (this.run !== run) return;
      run.ghost = reply.ghost;
      run.lost = false;
    } catch (error) {
      if (error.code === "disconnected" || this.run !== run) return; // the next "ready" retries
      run.lost = true;
    }
    this.render();
  }

  onPush(message) {
    if (!this.run || message.race_id !== this.run.raceId) return;
    if (message.type === "ghost_progress") {
      this.run.ghost = message.racer;
      this.render();
    } else if (message.type === "ghost_finished") {
      this.run.ghost = message.ghost;
      this.run.done = true;
      this.render();
      this.showResult(message);
    }
  }

  render() {
    const run = this.run;
    const info = this.app.session.info;
    const state = this.app.session.state;
    const on = Boolean(run && info && info.id === run.gameId && state);
    this.strip.hidden = !on;
    if (!on) return;
    const you = { name: t("ghost.you"), progress: state.progress, total: state.progress_total, moves: state.moves, me: true, status: state.status };
    const g = run.ghost;
    const ghost = { name: t("ghost.name", { name: g.player.name }), progress: g.progress, total: g.progress_total, moves: g.moves, me: false, status: g.status };
    this.strip.dataset.ghostProgress = String(g.progress);
    this.strip.dataset.ghostFinished = String(Boolean(g.finished));
    const note = run.lost ? t("ghost.lost") : g.finished ? t("ghost.done", { moves: g.moves, time: formatTime(g.elapsed_ms) }) : g.status === "waiting" ? t("ghost.waiting") : "";
    this.strip.replaceChildren(el("span", { class: "race-status" }, t("ghost.label")), chip(you), chip(ghost), note ? el("span", { class: "muted", id: "ghost-note" }, note) : null);
  }

  showResult(message) {
    const key = { racer: "ghost.won", ghost: "ghost.lost_race", tie: "ghost.tie" }[message.winner] || "ghost.tie";
    const line = (who, r) => el("li", {}, t("ghost.line", { who, progress: r.progress, total: r.progress_total, moves: r.moves, time: formatTime(r.elapsed_ms) }));
    this.dialog.dataset.winner = message.winner;
    this.dialog.replaceChildren(
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: "dlg-ghost-title" }, t(key)),
        el("ul", { id: "ghost-result" }, line(t("ghost.you"), message.racer), line(t("ghost.name", { name: message.ghost.player.name }), message.ghost)),
        el(
          "div",
          { class: "row end" },
          el("a", { class: "btn", href: `#replay=${message.ghost.game_id}`, onclick: () => this.dialog.close() }, t("ghost.watch_ghost")),
          el("button", { class: "btn primary", type: "submit", value: "close" }, t("common.close")),
        ),
      ),
    );
    const endDialog = document.getElementById("dlg-end");
    if (endDialog.open) endDialog.close("dismiss");
    if (!this.dialog.open) this.dialog.showModal();
  }
}

function chip(r) {
  const total = r.total || 1;
  const pct = Math.round((100 * r.progress) / total);
  return el(
    "div",
    { class: `racer${r.me ? " me" : " ghost-racer"}`, dataset: { progress: String(r.progress), status: r.status } },
    el("span", { class: "name" }, r.name),
    el(
      "div",
      { class: "progress-cell" },
      el("div", { class: "bar", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": String(total), "aria-valuenow": String(r.progress), "aria-label": t("ghost.progress", { name: r.name, progress: r.progress, total }) }, el("span", { style: { width: `${pct}%` } })),
      el("span", {}, `${r.progress}/${total}`),
    ),
  );
}
