// The line above a daily challenge's board: which day and family it is, whether this attempt is
// ranked or practice, the countdown to the next reset, and the player's rank on that day's board.
//
// A daily is named by its day and family, never by its code (a daily's code may be kept from
// the client until its day ends). The rank comes from that day and family's leaderboard,
// refreshed on every leaderboard push for it; the daily streak from the player's statistics
// (`GET /api/players/{id}/stats`, `dailies.current_streak`), read when the game opens and when it ends.

import { formatDate, i18nEvents, t } from "./i18n.js";
import { api } from "./identity.js";
import { formatTime } from "./infobar.js";

const TICK_MS = 1000;

export class DailyContext {
  constructor(app, dailies) {
    this.app = app;
    this.dailies = dailies;
    this.el = document.getElementById("daily-context");
    this.rank = null;
    this.stats = null;
    this.timer = null;
    this.gameId = null;
    app.session.onState((detail) => this.onState(detail)); // a daily on screen already: its line now
    app.net.addEventListener("push", (ev) => this.onPush(ev.detail));
    dailies.addEventListener("change", () => this.paint());
    i18nEvents.addEventListener("change", () => this.paint());
  }

  get info() {
    return this.app.session.info;
  }

  onState({ info, state, cause }) {
    if (!info || !info.daily) {
      this.stop();
      return;
    }
    const fresh = info.id !== this.gameId;
    this.gameId = info.id;
    this.family = `${state.game}1-${state.variant}`;
    if (fresh) {
      this.rank = null;
      this.loadStats();
    }
    if (fresh || cause === "update" || state.status === "won") this.loadRank();
    if (!fresh && state.status !== "playing" && this.status === "playing") this.loadStats();
    this.status = state.status;
    this.paint();
    if (!this.timer) this.timer = setInterval(() => this.paint(), TICK_MS);
  }

  onPush(message) {
    if (message.type !== "leaderboard_update" || !this.info) return;
    const info = this.info;
    const mine = info.code ? message.code === info.code : message.day === info.daily && message.family === info.family;
    if (mine) this.loadRank();
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
    this.gameId = null;
    this.el.hidden = true;
    this.el.textContent = "";
  }

  async loadRank() {
    const info = this.info;
    if (!info) return;
    try {
      const me = this.app.player.id;
      const board = info.code // a daily's code is sealed during its day: its board is named by day and family
        ? `/api/leaderboards/${encodeURIComponent(info.code)}`
        : `/api/daily/${info.daily}/${encodeURIComponent(info.family)}/leaderboard`;
      const body = await api("GET", `${board}/players/${me}?radius=0`);
      if (this.info && this.info.id === info.id) this.rank = body.rank;
    } catch {
      this.rank = null; // no result on the board yet
    }
    this.paint();
  }

  /** The player's daily streak, from their statistics (null while unknown). */
  async loadStats() {
    try {
      const body = await api("GET", `/api/players/${this.app.player.id}/stats`);
      this.stats = { daily_streak: body.dailies.current_streak };
    } catch {
      this.stats = null;
    }
    this.paint();
  }

  paint() {
    const info = this.info;
    if (!info || !info.daily) return;
    const day = formatDate(`${info.daily}T12:00:00Z`, { dateStyle: "long", timeZone: "UTC" });
    const parts = [
      t("daily.context", { day, family: t(`family.${this.family}`) }),
      info.ranked ? t("daily.ranked") : t("daily.practice"),
    ];
    const endsAt = this.dailies.endsAt;
    if (endsAt && this.dailies.day === info.daily) {
      const left = Math.max(0, endsAt - this.dailies.serverNow());
      parts.push(t("daily.resets", { time: formatTime(left) }));
    }
    parts.push(this.rank ? t("daily.rank", { rank: this.rank }) : t("daily.no_rank"));
    if (this.stats && this.stats.daily_streak > 0) parts.push(t("daily.streak", { count: this.stats.daily_streak }));
    this.el.textContent = parts.join(" · ");
    this.el.dataset.ranked = String(Boolean(info.ranked));
    this.el.hidden = false;
  }
}
