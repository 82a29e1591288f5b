// Leaderboard pages: today's dailies and any code, updated live.
//
// A board is named by a code, or, for a daily challenge, by DAY/FAMILY: its code is sealed
// until the day ends, so the server answers it by day and family only.
// The page subscribes to the board over the WebSocket (subscribe_leaderboard); each
// leaderboard_update push re-reads the top of the board and the player's own window over HTTP,
// so every rank shown is the server's.

import { typedCode } from "./codes.js";
import { dailyKey, parseDailyKey } from "./dailies.js";
import { FAMILIES, LEADERBOARD_LIMIT } from "./facts.js";
import { formatDate, formatNumber, i18nEvents, t } from "./i18n.js";
import { api } from "./identity.js";
import { formatTime } from "./infobar.js";
import { errorText } from "./messages.js";
import { el, labelOf, textOf } from "./ui.js";
import { verifyGame } from "./verified.js";

const PAGE = 25;

/** The HTTP path of a board: a code's, or a daily's by day and family. */
function boardPath(key) {
  const daily = parseDailyKey(key);
  if (daily) return `/api/daily/${daily.day}/${encodeURIComponent(daily.family)}/leaderboard`;
  return `/api/leaderboards/${encodeURIComponent(key)}`;
}

/** Whether the player's result on a board (its API path) waits for review: the rank read
 * leaves a flagged entry out, the board's `include=flagged` view marks it (standing `flagged`). */
export async function heldForReview(path, playerId) {
  try {
    const body = await api("GET", `${path}?include=flagged&limit=100`);
    return body.entries.some((e) => e.player.id === playerId && e.standing === "flagged");
  } catch {
    return false;
  }
}

/** The subscribe_leaderboard fields naming a board. */
function boardFields(key) {
  const daily = parseDailyKey(key);
  return daily ? { day: daily.day, family: daily.family } : { code: key };
}

/** The board a leaderboard message is about. */
function messageKey(message) {
  return message.code || dailyKey(message.day, message.family);
}
const RESULTS = {
  won: "result.won",
  resigned: "result.resigned",
  expired: "result.expired",
  stalemate: "result.stalemate",
  stuck: "result.stuck",
  lost: "result.lost",
};
const COLUMNS = [
  "boards.col.rank",
  "boards.col.player",
  "boards.col.result",
  "boards.col.cleared",
  "boards.col.moves",
  "boards.col.time",
  "boards.col.game",
];

function resultText(result) {
  return RESULTS[result] ? t(RESULTS[result]) : result;
}

export class LeaderboardPage {
  constructor(app, dailies) {
    this.app = app;
    this.dailies = dailies;
    this.section = document.getElementById("view-boards");
    this.code = null;
    this.subscribed = null;
    this.refreshTimer = null;
    this.build();
    app.net.onReady(() => this.resubscribe());
    app.net.addEventListener("push", (ev) => this.onPush(ev.detail));
    dailies.addEventListener("change", () => {
      this.renderTabs();
      if (this.code) this.renderActions(this.code); // today's board offers its daily once today is known
    });
    i18nEvents.addEventListener("change", () => {
      if (this.code && document.body.dataset.view === "boards") this.show(this.code);
    });
  }

  dailyFor(family) {
    return this.dailies.dailyFor(family);
  }

  build() {
    this.title = el("h2", { id: "boards-title", ...textOf("boards.title") });
    this.tabs = el("nav", { class: "tabs", ...labelOf("boards.tabs") });
    this.form = el(
      "form",
      { class: "code-form", onsubmit: (ev) => this.onCodeForm(ev) },
      el("label", { for: "board-code", ...textOf("boards.any_code") }),
      el("input", { id: "board-code", name: "code", placeholder: "HH1-N-AAAAAAM", autocomplete: "off", spellcheck: "false" }),
      el("button", { class: "btn", type: "submit", ...textOf("boards.show") }),
    );
    this.heading = el("h3", { id: "board-heading", "aria-live": "polite" });
    this.actions = el("div", { class: "row" });
    this.table = el("table", { id: "board-table", class: "folding", "aria-labelledby": "board-heading" });
    this.mine = el("p", { id: "board-mine", class: "muted" });
    this.more = el("button", { class: "btn", type: "button", id: "board-more", hidden: true, onclick: () => this.loadMore(), ...textOf("boards.more") });
    this.section.append(this.title, this.tabs, this.form, this.heading, this.actions, this.table, this.more, this.mine);
  }

  route(view, value) {
    if (view === "leaderboards") {
      this.show(this.defaultCode());
      return "boards";
    }
    if (view === "board") {
      this.show(value);
      return "boards";
    }
    return null;
  }

  shown(name) {
    if (name !== "boards") this.leave();
  }

  defaultCode() {
    return this.code || this.dailies.keyOf(FAMILIES[0]) || (this.app.session.state && this.app.session.state.code) || null;
  }

  renderTabs() {
    const tabs = FAMILIES.filter((family) => this.dailies.keyOf(family)).map((family) => {
      const key = this.dailies.keyOf(family);
      return el("a", {
        class: "btn",
        href: `#board=${key}`,
        "aria-current": key === this.code ? "page" : null,
        dataset: { family },
      }, t(`family.${family}`));
    });
    this.tabs.replaceChildren(...tabs);
    this.tabs.hidden = !tabs.length;
  }

  onCodeForm(ev) {
    ev.preventDefault();
    const input = this.form.elements.code;
    const code = typedCode(input.value);
    if (!code) {
      input.setCustomValidity(t("new.code_invalid"));
      input.reportValidity();
      return;
    }
    input.setCustomValidity("");
    location.hash = `board=${code}`;
  }

  async show(code) {
    this.renderTabs();
    if (!code) {
      this.heading.textContent = t("boards.loading");
      this.dailies.load().then(() => this.show(this.defaultCode())).catch(() => {
        this.heading.textContent = t("boards.type_code");
      });
      return;
    }
    code = code.toUpperCase();
    if (this.subscribed && this.subscribed !== code) this.unsubscribe();
    this.code = code;
    this.renderTabs();
    const daily = parseDailyKey(code);
    const day = daily ? formatDate(`${daily.day}T12:00:00Z`, { dateStyle: "long", timeZone: "UTC" }) : "";
    const label = daily ? t("boards.heading_daily", { family: t(`family.${daily.family}`), day }) : t("boards.heading_code", { code });
    this.heading.textContent = label;
    this.section.dataset.code = code;
    this.renderActions(code);
    await this.subscribe(code);
  }

  renderActions(code) {
    const daily = parseDailyKey(code);
    if (daily) {
      const today = daily.day === this.dailies.day;
      this.actions.replaceChildren(...(today ? [el("a", { class: "btn primary", href: `#daily=${daily.family}`, ...textOf("boards.play_daily") })] : []));
      return;
    }
    this.actions.replaceChildren(
      el("a", { class: "btn primary", href: `#code=${code}`, ...textOf("boards.play_code") }),
      el("button", { class: "btn", type: "button", onclick: () => this.app.races.openRace({ code }), ...textOf("boards.race_code") }),
    );
  }

  async subscribe(code) {
    try {
      await this.app.net.whenReady();
      const reply = await this.app.net.request("subscribe_leaderboard", { ...boardFields(code), limit: PAGE });
      if (this.code !== code) return;
      this.subscribed = code;
      this.published = Boolean(reply.code); // a daily's board names its code once the day is over
      this.render(reply.entries, reply.next_cursor);
      this.loadMine(reply.entries);
    } catch (error) {
      if (this.code === code) this.showError(error);
    }
  }

  resubscribe() {
    if (this.subscribed && document.body.dataset.view === "boards") {
      const code = this.subscribed;
      this.subscribed = null;
      this.subscribe(code);
    }
  }

  unsubscribe() {
    const code = this.subscribed;
    this.subscribed = null;
    if (code) this.app.net.request("unsubscribe_leaderboard", boardFields(code)).catch(() => {});
  }

  leave() {
    this.unsubscribe();
  }

  onPush(message) {
    if (message.type !== "leaderboard_update" || messageKey(message) !== this.subscribed) return;
    this.flash = message.entry.player.id;
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => this.refresh(), 120);
  }

  async refresh() {
    const code = this.subscribed;
    if (!code) return;
    try {
      const limit = Math.min(LEADERBOARD_LIMIT.max, Math.max(PAGE, this.rowCount || 0));
      const body = await api("GET", `${boardPath(code)}?limit=${limit}`);
      if (code !== this.subscribed) return;
      this.published = Boolean(body.code);
      this.render(body.entries, body.next_cursor);
      this.loadMine(body.entries);
    } catch (error) {
      this.showError(error);
    }
  }

  async loadMine(entries) {
    const me = this.app.player.id;
    if (entries.some((e) => e.player.id === me)) {
      this.mine.textContent = "";
      return;
    }
    try {
      const body = await api("GET", `${boardPath(this.code)}/players/${me}?radius=0`);
      this.mine.textContent = t("boards.your_rank", { rank: body.rank, result: describe(body.entry) });
    } catch {
      const held = await heldForReview(boardPath(this.code), me);
      this.mine.textContent = t(held ? "boards.held" : "boards.no_result");
    }
  }

  /** The next page of the board (keyset paging with the server's cursor). */
  async loadMore() {
    const code = this.code;
    try {
      const query = `limit=${PAGE}&cursor=${encodeURIComponent(this.cursor)}`;
      const body = await api("GET", `${boardPath(code)}?${query}`);
      if (code !== this.code) return;
      this.table.tBodies[0].append(...body.entries.map((entry) => this.row(entry)));
      this.rowCount += body.entries.length;
      this.setCursor(body.next_cursor);
    } catch (error) {
      this.showError(error);
    }
  }

  setCursor(cursor) {
    this.cursor = cursor;
    this.more.hidden = !cursor;
  }

  render(entries, cursor = null) {
    this.rowCount = entries.length;
    this.setCursor(cursor);
    const head = el("thead", {}, el("tr", {}, ...COLUMNS.map((key) => el("th", { scope: "col" }, t(key)))));
    const rows = entries.map((entry) => this.row(entry));
    const body = el("tbody", {}, ...rows);
    if (!rows.length) body.append(el("tr", {}, el("td", { colspan: "7", class: "muted" }, t("boards.empty"))));
    this.table.replaceChildren(head, body);
    this.flash = null;
  }

  row(entry) {
    const me = entry.player.id === this.app.player.id;
    const tr = el(
      "tr",
      { class: [me ? "me" : "", this.flash === entry.player.id ? "flash" : ""].join(" ").trim() || null, dataset: { player: entry.player.id, rank: String(entry.rank) } },
      cell("boards.col.rank", `#${entry.rank}`),
      cell("boards.col.player", entry.player.name, me ? t("common.you_suffix") : ""),
      cell("boards.col.result", resultText(entry.result)),
      cell("boards.col.cleared", formatNumber(entry.progress)),
      cell("boards.col.moves", formatNumber(entry.moves)),
      cell("boards.col.time", formatTime(entry.elapsed_ms)),
      cell(
        "boards.col.game",
        el("a", { href: `#game=${entry.game_id}`, "aria-label": t("boards.view_game", { name: entry.player.name }) }, t("boards.view")),
        this.verifiedMark(entry),
      ),
    );
    return tr;
  }

  /** A past daily's result gets a mark once the browser has checked it against the signed log. */
  verifiedMark(entry) {
    const daily = parseDailyKey(this.code);
    if (!daily || !this.published) return null; // not a daily, or still sealed: no proof yet
    const mark = el("span", { class: "verified", dataset: { verified: "checking" }, hidden: true });
    verifyGame(entry.game_id, daily.day).then((ok) => {
      mark.dataset.verified = ok ? "yes" : "no";
      if (!ok) return;
      mark.textContent = ` ✓ ${t("boards.verified")}`;
      mark.title = t("boards.verified_title");
      mark.hidden = false;
    });
    return mark;
  }

  showError(error) {
    this.table.replaceChildren();
    this.mine.textContent = errorText(error, "boards.failed");
  }
}

function describe(entry) {
  return [resultText(entry.result), `${t("info.cleared")} ${formatNumber(entry.progress)}`, `${t("info.moves")} ${formatNumber(entry.moves)}`, formatTime(entry.elapsed_ms)].join(", ");
}

/** A table cell that names its column, for the folded (phone) layout of app.css. */
export function cell(columnKey, ...children) {
  return el("td", { "data-label": t(columnKey) }, ...children);
}
