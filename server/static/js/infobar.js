// The information bar: time (server elapsed_ms, counted on locally while the clock runs),
// score, moves, progress and the deal's code.

import { gameName } from "./dailies.js";
import { IDLE_GAP_CAP_MS } from "./facts.js";
import { formatNumber, t } from "./i18n.js";

export function formatTime(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export class InfoBar {
  constructor(doc = document) {
    this.time = doc.getElementById("info-time");
    this.score = doc.getElementById("info-score");
    this.moves = doc.getElementById("info-moves");
    this.progress = doc.getElementById("info-progress");
    this.code = doc.getElementById("info-code");
    this.base = 0;
    this.since = 0;
    this.running = false;
    this.timer = setInterval(() => this.tick(), 250);
  }

  show(state) {
    this.base = state.elapsed_ms || 0;
    this.since = performance.now();
    this.running = Boolean(state.clock_running) && state.status !== "won";
    this.score.textContent = formatNumber(state.score);
    this.moves.textContent = formatNumber(state.moves);
    this.progress.textContent = t("info.progress", { done: state.progress, total: state.progress_total });
    this.code.textContent = gameName(state); // a daily's code is sealed: its family names it
    this.tick();
  }

  clear() {
    this.running = false;
    this.base = 0;
    for (const el of [this.score, this.moves]) el.textContent = "0";
    this.progress.textContent = "–";
    this.code.textContent = "—";
    this.tick();
  }

  elapsed() {
    if (!this.running) return this.base;
    return this.base + Math.min(performance.now() - this.since, IDLE_GAP_CAP_MS);
  }

  tick() {
    const text = formatTime(this.elapsed());
    if (this.time.textContent !== text) this.time.textContent = text;
  }
}
