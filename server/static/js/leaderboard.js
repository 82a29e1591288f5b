// Leaderboard pages: today's dailies and any code, updated live.
//
// A board is named by a code, or, for a daily challenge, by DAY/FAMILY: its code is sealed
// until the day ends, so the server answers it by day and family only.
// The page subscribes to the board over the WebSocket (subscribe_leaderboard); each
// leaderboard_update push re-reads the top of the board and the player's own window over HTTP,
// so every rank shown is the server's.

import { FAMILIES, dailyKey, parseDailyKey } from "./dailies.js";
import { api } from "./identity.js";
import { formatTime } from "./infobar.js";
import { el } from "./ui.js";

const CODE_RE = /^\s*[A-Za-z]{2}\d+-[A-Za-z0-9]+-[A-Za-z2-7]{7}\s*$/;
const PAGE = 25;

/** The HTTP path of a board: a code's, or a daily's by day and family. */
function boardPath(key) {
  const daily = parseDailyKey(key);
  if (daily) return `/api/daily/${daily.day}/${encodeURIComponent(daily.family)}/leaderboard`;
  return `/api/leaderboards/${encodeURIComponent(key)}`;
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
const RESULTS = { won: "Won", resigned: "Gave up", expired: "Expired", stalemate: "Stalemate", stuck: "Stuck", lost: "No winning line" };

export class LeaderboardPage {
  constructor(app, dailies) {
    this.app = app;
    this.dailies = dailies;
    this.section = document.getElementById("view-boards");
    this.code = null;
    this.subscribed = null;
    this.refreshTimer = null;
    this.build();
    app.net.addEventListener("ready", () => this.resubscribe());
    app.net.addEventListener("push", (ev) => this.onPush(ev.detail));
    dailies.addEventListener("change", () => this.renderTabs());
  }

  dailyFor(family) {
    return this.dailies.dailyFor(family);
  }

  build() {
    this.title = el("h2", { id: "boards-title", text: "Leaderboards" });
    this.tabs = el("nav", { class: "tabs", "aria-label": "Today's daily challenges" });
    this.form = el(
      "form",
      { class: "code-form", onsubmit: (ev) => this.onCodeForm(ev) },
      el("label", { for: "board-code" }, "Any code"),
      el("input", { id: "board-code", name: "code", placeholder: "HH1-N-AAAAAAM", autocomplete: "off", spellcheck: "false" }),
      el("button", { class: "btn", type: "submit" }, "Show leaderboard"),
    );
    this.heading = el("h3", { id: "board-heading", "aria-live": "polite" });
    this.actions = el("div", { class: "row" });
    this.table = el("table", { id: "board-table", "aria-labelledby": "board-heading" });
    this.mine = el("p", { id: "board-mine", class: "muted" });
    this.more = el("button", { class: "btn", type: "button", id: "board-more", hidden: true, onclick: () => this.loadMore() }, "Show more");
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
    return this.code || this.dailies.keyOf("HH1-N") || (this.app.session.state && this.app.session.state.code) || null;
  }

  renderTabs() {
    const tabs = FAMILIES.filter((f) => this.dailies.keyOf(f.key)).map((f) => {
      const key = this.dailies.keyOf(f.key);
      return el("a", {
        class: "btn",
        href: `#board=${key}`,
        "aria-current": key === this.code ? "page" : null,
        dataset: { family: f.key },
      }, `${f.label} daily`);
    });
    this.tabs.replaceChildren(...tabs);
    this.tabs.hidden = !tabs.length;
  }

  onCodeForm(ev) {
    ev.preventDefault();
    const input = this.form.elements.code;
    if (!CODE_RE.test(input.value)) {
      input.setCustomValidity("Type a code such as HH1-N-AAAAAAM");
      input.reportValidity();
      return;
    }
    input.setCustomValidity("");
    location.hash = `board=${input.value.trim().toUpperCase()}`;
  }

  async show(code) {
    this.renderTabs();
    if (!code) {
      this.heading.textContent = "Today's challenges are loading…";
      this.dailies.load().then(() => this.show(this.defaultCode())).catch(() => {
        this.heading.textContent = "Type a code to see its leaderboard";
      });
      return;
    }
    code = code.toUpperCase();
    if (this.subscribed && this.subscribed !== code) this.unsubscribe();
    this.code = code;
    this.renderTabs();
    const daily = parseDailyKey(code);
    const known = daily && FAMILIES.find((f) => f.key === daily.family);
    const label = daily ? `${known ? known.label : daily.family} daily · ${daily.day}` : code;
    this.heading.textContent = label;
    this.section.dataset.code = code;
    this.renderActions(code);
    await this.subscribe(code);
  }

  renderActions(code) {
    const daily = parseDailyKey(code);
    if (daily) {
      const today = daily.day === this.dailies.day;
      this.actions.replaceChildren(...(today ? [el("a", { class: "btn primary", href: `#daily=${daily.family}` }, "Play this daily")] : []));
      return;
    }
    this.actions.replaceChildren(
      el("a", { class: "btn primary", href: `#code=${code}` }, "Play this code"),
      el("button", { class: "btn", type: "button", onclick: () => this.app.races.openRace({ code }) }, "Race on this code"),
    );
  }

  async subscribe(code) {
    try {
      await this.app.net.whenReady();
      const reply = await this.app.net.request("subscribe_leaderboard", { ...boardFields(code), limit: PAGE });
      if (this.code !== code) return;
      this.subscribed = code;
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
      const limit = Math.min(100, Math.max(PAGE, this.rowCount || 0));
      const body = await api("GET", `${boardPath(code)}?limit=${limit}`);
      if (code !== this.subscribed) return;
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
      this.mine.textContent = `Your rank: #${body.rank} (${describe(body.entry)})`;
    } catch {
      this.mine.textContent = "You have no result on this code yet.";
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
    const head = el("thead", {}, el("tr", {}, ...["Rank", "Player", "Result", "Cleared", "Moves", "Time", ""].map((h) => el("th", { scope: "col" }, h))));
    const rows = entries.map((entry) => this.row(entry));
    const body = el("tbody", {}, ...rows);
    if (!rows.length) body.append(el("tr", {}, el("td", { colspan: "7", class: "muted" }, "No results yet: be the first.")));
    this.table.replaceChildren(head, body);
    this.flash = null;
  }

  row(entry) {
    const me = entry.player.id === this.app.player.id;
    const tr = el(
      "tr",
      { class: [me ? "me" : "", this.flash === entry.player.id ? "flash" : ""].join(" ").trim() || null, dataset: { player: entry.player.id, rank: String(entry.rank) } },
      el("td", {}, `#${entry.rank}`),
      el("td", {}, entry.player.name, me ? " (you)" : ""),
      el("td", {}, RESULTS[entry.result] || entry.result),
      el("td", {}, String(entry.progress)),
      el("td", {}, String(entry.moves)),
      el("td", {}, formatTime(entry.elapsed_ms)),
      el("td", {}, el("a", { href: `#game=${entry.game_id}` }, "View")),
    );
    return tr;
  }

  showError(error) {
    this.table.replaceChildren();
    this.mine.textContent = error.message || "This leaderboard could not be loaded";
  }
}

function describe(entry) {
  return `${RESULTS[entry.result] || entry.result}, ${entry.progress} cleared, ${entry.moves} moves, ${formatTime(entry.elapsed_ms)}`;
}
