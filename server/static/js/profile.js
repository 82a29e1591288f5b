// A player's home (#profile for yourself, #profile=p_… for anyone): the account panel (yours
// only), the statistics (GET /api/players/{id}/stats) as a table and two SVG charts (win rate
// per variant; moves of each win over time, from the history's wins), and the history of games
// (GET /api/players/{id}/games) with its filters and keyset paging ("Show more" passes the
// server's next_cursor). Every finished game links to its replay.

import { AccountPanel } from "./account.js";
import { barChart, timeChart } from "./charts.js";
import { FAMILIES, HISTORY_LIMIT } from "./facts.js";
import { formatDate, formatNumber, i18nEvents, t } from "./i18n.js";
import { api } from "./identity.js";
import { formatTime } from "./infobar.js";
import { el, scrollingTable } from "./ui.js";

const VARIANTS = FAMILIES; // one daily family for each variant
const PAGE = 20;
const GAME_NAMES = { heart_to_heart: "game.HH", seahaven: "game.SH" };
const CHART_WINS = HISTORY_LIMIT.max; // the newest wins drawn in the moves chart (one page of the history)

function variantName(variant) {
  const key = `home.variant.${variant}`;
  const text = t(key);
  return text === key ? variant : text;
}

function percent(rate) {
  return rate === null || rate === undefined ? "–" : formatNumber(rate, { style: "percent", maximumFractionDigits: 0 });
}

function orDash(value, format = (v) => formatNumber(v)) {
  return value === null || value === undefined ? "–" : format(value);
}

/** Each cell names its column (data-label), so a phone can show a row as a small card. */
function labelled(row, keys) {
  [...row.children].forEach((cell, i) => {
    if (keys[i]) cell.dataset.label = t(keys[i]);
  });
  return row;
}

const STATS_COLUMNS = ["home.col.variant", "home.col.played", "home.col.won", "home.col.rate", "home.col.streak", "home.col.best_streak", "home.col.best_moves", "home.col.avg_moves", "home.col.best_time"];
const HISTORY_COLUMNS = ["home.col.when", "home.col.code", "home.col.result", "home.col.moves", "home.col.time", "home.col.open"];

export class ProfilePage {
  constructor(app, account) {
    this.app = app;
    this.account = account;
    this.section = el("section", { id: "view-profile", class: "view page", hidden: true, "aria-labelledby": "profile-title" });
    document.getElementById("main").append(this.section);
    this.panel = new AccountPanel(account);
    this.playerId = null;
    this.filter = {};
    this.cursor = null;
    this.loadToken = 0;
    account.onChange(() => {
      if (!this.section.hidden && this.isMine()) this.show(null);
    });
    i18nEvents.addEventListener("change", () => {
      if (!this.section.hidden) this.show(this.playerId);
    });
  }

  route(view, value) {
    if (view !== "profile") return null;
    this.show(value || null);
    return "profile";
  }

  /** The header's Profile link is current on your own profile (it is outside the main nav). */
  shown(name) {
    const link = document.getElementById("nav-profile");
    if (name === "profile" && this.isMine()) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }

  isMine() {
    return !this.playerId || this.playerId === this.app.player.id;
  }

  /** Draw the page for a player (null: yourself) and load its statistics and first page. */
  async show(playerId) {
    const token = ++this.loadToken;
    this.playerId = playerId && playerId !== this.app.player.id ? playerId : null;
    const id = this.playerId || this.app.player.id;
    this.title = el("h2", { id: "profile-title" }, this.isMine() ? t("home.title_mine") : t("home.title"));
    this.statsRoot = el("section", { class: "panel", id: "stats", "aria-labelledby": "stats-title", "aria-busy": "true" }, el("h3", { id: "stats-title" }, t("home.stats")), el("p", { class: "muted" }, t("home.loading")));
    this.historyRoot = el("section", { class: "panel", id: "history", "aria-labelledby": "history-title" });
    const parts = [this.title];
    if (this.isMine()) {
      this.panel.render();
      parts.push(this.panel.root);
    }
    parts.push(this.statsRoot, this.historyRoot);
    this.section.replaceChildren(...parts);
    this.section.dataset.player = id;
    this.buildHistory();
    this.loadHistory(true, token); // beside the statistics, not after them
    try {
      const [stats, wins] = await Promise.all([
        api("GET", `/api/players/${encodeURIComponent(id)}/stats`),
        api("GET", `/api/players/${encodeURIComponent(id)}/games?result=won&limit=${CHART_WINS}`, undefined, this.app.player.token),
      ]);
      if (token !== this.loadToken) return;
      this.title.textContent = this.isMine() ? t("home.title_mine_named", { name: stats.player.name }) : t("home.title_named", { name: stats.player.name });
      this.renderStats(stats, wins.games);
    } catch (error) {
      if (token !== this.loadToken) return;
      this.statsRoot.replaceChildren(el("p", { class: "error" }, error.message || t("home.failed")));
    }
  }

  renderStats(stats, wins) {
    const rows = stats.variants.filter((v) => VARIANTS.includes(v.variant) || v.played);
    const table = el(
      "table",
      { class: "stats-table stack-table", id: "stats-table" },
      el("caption", { class: "sr-only" }, t("home.stats")),
      el("thead", {}, el("tr", {}, ...STATS_COLUMNS.map((k) => el("th", { scope: "col" }, t(k))))),
      el(
        "tbody",
        {},
        ...rows.map((v) => labelled(
          el(
            "tr",
            { dataset: { variant: v.variant, played: String(v.played), won: String(v.won) } },
            el("th", { scope: "row" }, variantName(v.variant)),
            el("td", {}, formatNumber(v.played)),
            el("td", {}, formatNumber(v.won)),
            el("td", {}, percent(v.win_rate)),
            el("td", {}, formatNumber(v.current_streak)),
            el("td", {}, formatNumber(v.best_streak)),
            el("td", {}, orDash(v.best_moves)),
            el("td", {}, orDash(v.average_moves, (m) => formatNumber(m, { maximumFractionDigits: 1 }))),
            el("td", {}, orDash(v.best_time_ms, formatTime)),
          ),
          STATS_COLUMNS,
        )),
      ),
    );
    const chartRows = stats.variants
      .filter((v) => VARIANTS.includes(v.variant))
      .map((v) => ({
        key: v.variant,
        label: variantName(v.variant),
        value: v.win_rate,
        text: v.played ? t("home.rate_text", { rate: percent(v.win_rate), won: v.won, played: v.played }) : t("home.no_games"),
      }));
    const rateDescription = chartRows.map((r) => `${variantName(r.key)}: ${r.text}`).join("; ");
    const rateChart = el("figure", { class: "chart-box", id: "chart-rate" }, barChart(chartRows, { title: t("home.chart_rate"), description: rateDescription }), el("figcaption", {}, t("home.chart_rate")));
    const series = VARIANTS.map((variant) => ({
      key: variant,
      label: variantName(variant),
      points: wins
        .filter((g) => g.variant === variant && g.finished_at)
        .map((g) => ({ x: g.finished_at, y: g.moves }))
        .sort((a, b) => a.x - b.x),
    }));
    const total = series.reduce((n, s) => n + s.points.length, 0);
    const movesChart = total
      ? timeChart(series, {
        title: t("home.chart_moves"),
        description: series.filter((s) => s.points.length).map((s) => t("home.moves_desc", { variant: variantName(s.key), count: s.points.length, best: Math.min(...s.points.map((p) => p.y)), last: s.points[s.points.length - 1].y })).join("; "),
        formatX: (ms) => formatDate(ms, { month: "short", day: "numeric" }),
        yLabel: t("home.axis_moves"),
      })
      : el("p", { class: "muted" }, t("home.no_wins"));
    const moves = el("figure", { class: "chart-box", id: "chart-moves" }, movesChart, el("figcaption", {}, t("home.chart_moves")));
    const d = stats.dailies;
    const dailies = el(
      "dl",
      { class: "stats daily-stats", id: "daily-stats" },
      ...[
        ["home.daily.days", formatNumber(d.days_played)],
        ["home.daily.streak", formatNumber(d.current_streak)],
        ["home.daily.best_streak", formatNumber(d.best_streak)],
        ["home.daily.best_rank", orDash(d.best_rank, (r) => `#${formatNumber(r)}`)],
        ["home.daily.median", orDash(d.median_percentile, (p) => formatNumber(p, { maximumFractionDigits: 1 }))],
      ].map(([k, v]) => el("div", {}, el("dt", {}, t(k)), el("dd", {}, v))),
    );
    const totals = el(
      "p",
      { id: "game-totals" },
      (stats.games || [])
        .map((g) => t("home.game_total", { game: t(GAME_NAMES[g.game] || "home.title"), played: g.played, won: g.won, rate: percent(g.win_rate) }))
        .join(" · "),
    );
    this.statsRoot.removeAttribute("aria-busy");
    this.statsRoot.replaceChildren(
      el("h3", { id: "stats-title" }, t("home.stats")),
      totals,
      scrollingTable(table, "stats-title"),
      el("div", { class: "charts" }, rateChart, moves),
      el("h4", {}, t("home.dailies")),
      dailies,
      el("p", { class: "help", id: "daily-rule" }, t("home.daily.rule")),
    );
  }

  // -- history ---------------------------------------------------------------------------

  buildHistory() {
    const select = (name, label, options) => [
      el("label", { for: `history-${name}` }, label),
      el("select", { id: `history-${name}`, name }, ...options.map(([value, text]) => el("option", { value, selected: (this.filter[name] || "") === value }, text))),
    ];
    const form = el(
      "form",
      { id: "history-filters", class: "filters", onchange: () => this.onFilter(form), onsubmit: (ev) => ev.preventDefault() },
      ...select("variant", t("home.filter.variant"), [["", t("home.filter.all")], ...VARIANTS.map((v) => [v, variantName(v)])]),
      ...select("result", t("home.filter.result"), [["", t("home.filter.all")], ...["won", "resigned", "expired", ...(this.isMine() ? ["open"] : [])].map((r) => [r, t(`home.result.${r}`)])]),
      el("label", { class: "inline" }, el("input", { type: "checkbox", name: "daily", id: "history-daily", checked: Boolean(this.filter.daily) }), ` ${t("home.filter.daily")}`),
    );
    this.historyBody = el("tbody", {});
    this.more = el("button", { class: "btn", type: "button", id: "history-more", hidden: true, onclick: () => this.loadHistory(false, this.loadToken) }, t("home.more"));
    this.historyNote = el("p", { class: "muted", role: "status", id: "history-note" });
    const table = el(
      "table",
      { class: "history stack-table", id: "history-table" },
      el("caption", { class: "sr-only" }, t("home.history")),
      el("thead", {}, el("tr", {}, ...HISTORY_COLUMNS.map((k) => el("th", { scope: "col" }, t(k))))),
      this.historyBody,
    );
    this.historyRoot.replaceChildren(el("h3", { id: "history-title" }, t("home.history")), form, scrollingTable(table, "history-title"), this.historyNote, this.more);
  }

  onFilter(form) {
    const data = form.elements;
    this.filter = { variant: data.variant.value, result: data.result.value, daily: data.daily.checked };
    this.loadHistory(true, this.loadToken);
  }

  query() {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (this.filter.variant) q.set("variant", this.filter.variant);
    if (this.filter.result) q.set("result", this.filter.result);
    if (this.filter.daily) q.set("daily", "true");
    if (this.cursor) q.set("cursor", this.cursor);
    return q.toString();
  }

  /** One page of the history: the first (fresh) or the next after the server's cursor. */
  async loadHistory(fresh, pageToken) {
    if (fresh) {
      this.cursor = null;
      this.historyBody.replaceChildren();
      this.historyLoads = (this.historyLoads || 0) + 1; // an answer to an older filter is dropped
    }
    const loads = this.historyLoads;
    const current = () => pageToken === this.loadToken && loads === this.historyLoads;
    const id = this.playerId || this.app.player.id;
    this.more.disabled = true;
    let page;
    try {
      page = await api("GET", `/api/players/${encodeURIComponent(id)}/games?${this.query()}`, undefined, this.app.player.token);
    } catch (error) {
      if (current()) this.historyNote.textContent = error.message || t("home.failed");
      return;
    }
    if (!current()) return;
    this.historyBody.append(...page.games.map((g) => this.historyRow(g)));
    this.cursor = page.next_cursor;
    this.more.hidden = !page.next_cursor;
    this.more.disabled = false;
    const shown = this.historyBody.children.length;
    this.historyNote.textContent = shown ? t("home.shown", { count: shown }) : t("home.no_history");
  }

  historyRow(g) {
    const finished = g.result !== null;
    const result = g.result ? t(`home.result.${g.result}`) : t("home.result.open");
    const tags = [g.daily ? t("home.tag.daily", { day: g.daily }) : null, g.race_id ? t("home.tag.race") : null].filter(Boolean);
    const named = g.code ?? g.variant; // a daily's code stays sealed until its day ends, even here
    const link = finished
      ? el("a", { href: `#replay=${g.id}`, class: "btn small", "aria-label": t("home.replay_named", { code: named }) }, t("home.replay"))
      : el("a", { href: `#game=${g.id}`, class: "btn small" }, t("home.continue"));
    const row = el(
      "tr",
      { dataset: { game: g.id, result: g.result || "open" } },
      el("td", {}, formatDate(g.created_at, { dateStyle: "medium", timeStyle: "short" })),
      el("td", {}, g.code ? el("code", {}, g.code) : el("span", { title: t("home.code_sealed") }, named), tags.length ? el("span", { class: "muted" }, ` · ${tags.join(" · ")}`) : null),
      el("td", {}, result),
      el("td", {}, formatNumber(g.moves)),
      el("td", {}, formatTime(g.elapsed_ms)),
      el("td", {}, link),
    );
    return labelled(row, HISTORY_COLUMNS);
  }
}
