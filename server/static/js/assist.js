// Help at the table, over the public protocol only: a hint from the server's solver (`hint`),
// redo after undo, and Seahaven's safe finish (`hints.finish`, played a tap at a time).
//
// Redo is the client's own: the actions this page played, each with the undo depth it left,
// are remembered; an undo moves the ones it took back onto the redo list, Redo sends the
// earliest of them again as a normal action, and any other move clears the list.

import { cardName } from "./cards.js";
import { i18nEvents, t } from "./i18n.js";
import { errorText, placeName } from "./messages.js";
import { say } from "./ui.js";

const KEEP_CAUSES = new Set(["result", "status"]); // a new state the redo list stays valid across

export class Assist {
  /** `act(action)` plays through the view (resolves with the result, or null); `canPlay()` says
   * whether the player may act now. */
  constructor({ session, root, act, canPlay }) {
    this.session = session;
    this.root = root;
    this.act = act;
    this.canPlay = canPlay;
    this.redoButton = document.getElementById("btn-redo");
    this.hintButton = document.getElementById("btn-hint");
    this.finishButton = document.getElementById("btn-finish");
    this.line = document.getElementById("hint-line");
    this.lineText = document.getElementById("hint-text");
    this.playButton = document.getElementById("btn-hint-play");
    this.done = []; // {action, depth}: played here, oldest first
    this.undone = []; // the same, taken back by undo: the next to redo last
    this.redoing = null;
    this.hint = null; // {seq, action} shown on the board
    this.asking = false;
    this.finishing = false;
    this.redoButton.addEventListener("click", () => this.redo());
    this.hintButton.addEventListener("click", () => this.askHint());
    this.playButton.addEventListener("click", () => this.playHint());
    this.finishButton.addEventListener("click", () => this.finish());
    session.addEventListener("outcome", (ev) => this.onOutcome(ev.detail));
    session.addEventListener("refused", (ev) => this.onRefused(ev.detail));
    i18nEvents.addEventListener("change", () => this.relabel()); // after the view rebuilt its board
    this.clear();
  }

  /** A new state on screen (drawn already): drop what no longer holds, set the buttons. */
  update(state, info, cause) {
    if (!KEEP_CAUSES.has(cause)) this.forget();
    if (this.hint && this.hint.seq !== state.seq) this.hideHint();
    this.refresh(state, info);
  }

  refresh(state = this.session.state, info = this.session.info) {
    if (!state) return;
    const playing = this.canPlay();
    this.redoButton.disabled = !playing || !this.undone.length;
    const reason = hintRefusal(state, info);
    this.hintButton.hidden = state.game !== "SH"; // HH-25: no solver during a Heart to Heart game
    this.hintButton.disabled = !playing || Boolean(reason) || this.asking;
    this.hintButton.toggleAttribute("aria-describedby", Boolean(reason));
    if (reason) this.hintButton.setAttribute("aria-describedby", "hint-text");
    if (reason && playing && state.game === "SH") this.showLine(t(reason), "reason");
    else if (this.line.dataset.kind === "reason") this.hideHint();
    const finish = playing && state.game === "SH" && state.status === "playing" && Boolean(state.hints && state.hints.finish);
    this.finishButton.hidden = !finish;
    this.finishButton.disabled = this.finishing;
  }

  forget() {
    this.done = [];
    this.undone = [];
    this.redoing = null;
    this.finishing = false;
  }

  /** No game on the table. */
  clear() {
    this.forget();
    this.hideHint();
    this.redoButton.disabled = true;
    this.hintButton.disabled = true;
    this.hintButton.hidden = true;
    this.finishButton.hidden = true;
  }

  onOutcome({ action, pushed }) {
    const state = this.session.state;
    if (pushed || !state) {
      this.forget(); // played from elsewhere: this page's lists no longer describe the game
    } else if (action.type === "undo") {
      while (this.done.length && this.done[this.done.length - 1].depth > state.undo_depth) {
        this.undone.push(this.done.pop());
      }
    } else {
      if (action !== this.redoing) this.undone = [];
      else this.undone.pop();
      this.redoing = null;
      this.done.push({ action, depth: state.undo_depth });
    }
    this.refresh();
  }

  onRefused({ action }) {
    if (action && action === this.redoing) this.undone = []; // the rules refuse it now: nothing to redo
    this.redoing = null;
    this.finishing = false;
    this.refresh();
  }

  redo() {
    const next = this.undone[this.undone.length - 1];
    if (!next || !this.canPlay() || this.redoing) return;
    this.redoing = next.action;
    this.act(next.action);
  }

  async askHint() {
    const state = this.session.state;
    if (!state || this.hintButton.disabled || this.hintButton.hidden) return;
    this.asking = true;
    this.hideHint();
    this.showLine(t("assist.hint_thinking"), "thinking");
    this.refresh();
    const gameId = this.session.gameId;
    try {
      const reply = await this.session.net.request("hint", { game_id: gameId });
      if (this.session.gameId !== gameId || !this.session.state || reply.seq !== this.session.state.seq) {
        this.hideHint(); // the game moved on meanwhile: this hint is for another position
      } else this.showHint(reply);
    } catch (error) {
      this.showLine(errorText(error), "error");
    } finally {
      this.asking = false;
      this.refresh();
    }
  }

  /** The hint's words in the new language, its marks on the rebuilt board. */
  relabel() {
    const reply = this.hint && this.hint.reply;
    if (reply && this.session.state && reply.seq === this.session.state.seq) {
      this.hideHint();
      this.showHint(reply);
    } else if (this.line.dataset.kind !== "thinking") {
      this.hideHint();
      this.refresh();
    }
  }

  showHint(reply) {
    if (reply.result !== "won" || !reply.action) {
      this.showLine(t(reply.result === "impossible" ? "assist.hint_none" : "assist.hint_unknown"), reply.result);
      return;
    }
    const { from, to, count = 1 } = reply.action;
    const source = this.root.querySelector(`.card[data-loc="${from}"][data-count="${count}"]`);
    const targets = this.root.querySelectorAll(`[data-loc="${to}"]:not([hidden])`);
    const target = targets[targets.length - 1] || null;
    if (source) source.classList.add("hinted");
    if (target) target.classList.add("hint-target");
    this.hint = { seq: reply.seq, action: reply.action, source, target, reply };
    this.root.dataset.hint = `${from}>${to}`;
    const card = source ? cardName(source.dataset.card) : placeName(from);
    const text = count > 1 ? t("assist.hint_group", { card, count, place: placeName(to) }) : t("assist.hint_move", { card, place: placeName(to) });
    this.showLine(text, "move");
    this.playButton.hidden = false;
  }

  showLine(text, kind) {
    this.line.hidden = false;
    this.line.dataset.kind = kind;
    this.lineText.textContent = text;
    this.playButton.hidden = true;
    if (kind !== "reason") say(text);
  }

  hideHint() {
    if (this.hint) {
      if (this.hint.source) this.hint.source.classList.remove("hinted");
      if (this.hint.target) this.hint.target.classList.remove("hint-target");
    }
    this.hint = null;
    delete this.root.dataset.hint;
    this.line.hidden = true;
    delete this.line.dataset.kind;
    this.lineText.textContent = "";
    this.playButton.hidden = true;
  }

  playHint() {
    if (this.hint && this.canPlay()) this.act(this.hint.action);
  }

  /** Seahaven's safe finish: a tap on a tappable card, then the next, until won or it stops
   * holding (every tap keeps it, so it stops only when something else happened). */
  async finish() {
    if (this.finishing) return;
    this.finishing = true;
    this.refresh();
    say(t("assist.finishing"));
    let state = this.session.state;
    while (this.finishing && state && this.canPlay() && state.status === "playing" && state.hints.finish && state.hints.tappable.length) {
      const reply = await this.act({ type: "tap", at: state.hints.tappable[0] });
      if (!reply) break;
      state = this.session.state;
    }
    this.finishing = false;
    this.refresh();
  }

  /** Keys for the play view: Ctrl+Y and Shift+Ctrl+Z redo, H asks for a hint. */
  shortcut(ev) {
    const key = ev.key.toLowerCase();
    const ctrl = ev.ctrlKey || ev.metaKey;
    if (ctrl && !ev.altKey && (key === "y" || (key === "z" && ev.shiftKey))) {
      this.redo();
      return true;
    }
    if (key === "h" && !ctrl && !ev.altKey && !ev.shiftKey && !this.hintButton.hidden) {
      this.askHint();
      return true;
    }
    return false;
  }
}

/** The catalog key of why this game gets no hint (the server's `hint_refused`), or null. */
export function hintRefusal(state, info) {
  if (!state || state.game !== "SH") return "assist.hint_hearts";
  if (info && info.daily && info.ranked) return "assist.hint_ranked";
  if (info && info.race_id) return "assist.hint_race";
  return null;
}
