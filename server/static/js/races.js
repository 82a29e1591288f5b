// Races: open one, share its link, join, count down, follow everyone's progress live, results.
//
// The race page follows a race with race_watch (anyone) or race_join (racers); pushes are
// race_update (the whole race: joins, countdown, start, finish), race_progress (one racer) and,
// for each racer, race_started with their own game, which the page then plays.

import { typedCode } from "./codes.js";
import { gameName } from "./dailies.js";
import { COUNTDOWN_S, FAMILIES } from "./facts.js";
import { currentLang, formatNumber, i18nEvents, t } from "./i18n.js";
import { api } from "./identity.js";
import { formatTime } from "./infobar.js";
import { cell } from "./leaderboard.js";
import { errorText } from "./messages.js";
import { linkTo, replaceHash } from "./router.js";
import { copyText, el, labelOf, textOf, toast } from "./ui.js";

const COUNTDOWNS = [3, 5, 10, 30]; // the lengths offered, within the server's bounds

/** A family's race_open fields as the game select's value: `SH1-C4` is `SH:C4`. */
function gameAndVariant(family) {
  const [version, variant] = family.split("-");
  return `${version.slice(0, 2)}:${variant}`;
}

/** The countdowns the owner may pick: those offered that the server takes, its default among them. */
function countdownChoices() {
  const taken = COUNTDOWNS.filter((s) => s >= COUNTDOWN_S.min && s <= COUNTDOWN_S.max);
  return [...new Set([...taken, COUNTDOWN_S.default])].sort((a, b) => a - b);
}

const STATUS_TEXT = {
  countdown: "races.status.countdown",
  running: "races.status.running",
  finished: "races.status.finished",
  cancelled: "races.status.cancelled",
};
const RACER_STATUS = {
  waiting: "races.racer.waiting",
  playing: "races.racer.playing",
  won: "races.racer.won",
  resigned: "races.racer.resigned",
  expired: "races.racer.expired",
  stalemate: "races.racer.stalemate",
  stuck: "races.racer.stuck",
  lost: "races.racer.lost",
};
const COLUMNS = [
  "races.col.place",
  "races.col.racer",
  "races.col.status",
  "races.col.progress",
  "races.col.moves",
  "races.col.time",
  "races.col.watch",
];

export class RacePages {
  constructor(app, dailies) {
    this.app = app;
    this.dailies = dailies;
    this.section = document.getElementById("view-races");
    this.strip = document.getElementById("race-strip");
    this.resultsDialog = document.getElementById("dlg-race");
    this.race = null;
    this.role = null; // "owner" | "racer" | "spectator"
    this.myGameId = null;
    this.countdownTimer = null;
    this.buildLobby();
    this.detail = el("div", { id: "race-detail" });
    this.section.append(this.detail);
    app.net.onReady(() => this.refollow());
    app.net.addEventListener("push", (ev) => this.onPush(ev.detail));
    app.session.onState((detail) => this.onGameState(detail.info)); // a race game on screen already: its strip
    i18nEvents.addEventListener("change", () => {
      this.render();
      this.renderStrip();
    });
    this.resultsDialog.addEventListener("close", () => {
      if (this.resultsDialog.returnValue === "race" && this.race) location.hash = `race=${this.race.id}`;
    });
  }

  // -- routing -------------------------------------------------------------------------

  route(view, value) {
    if (view === "races") {
      this.showLobby();
      return "races";
    }
    if (view === "race") {
      this.showRace(value);
      return "races";
    }
    return null;
  }

  shown(name) {
    if (name !== "races" && this.race && this.role === "spectator") this.stopWatching();
  }

  // -- the lobby: open, join, watch ----------------------------------------------------------

  buildLobby() {
    this.liveList = el("ul", { id: "live-games", class: "live-games", "aria-live": "polite" });
    const open = el(
      "form",
      { id: "race-open-form", onsubmit: (ev) => this.onOpenForm(ev) },
      el("label", { for: "race-game", ...textOf("races.game") }),
      el(
        "select",
        { id: "race-game", name: "game" },
        ...FAMILIES.map((family) => el("option", { value: gameAndVariant(family), ...textOf(`family.${family}`) })),
      ),
      el("label", { for: "race-code", ...textOf("races.or_code") }),
      el("input", { id: "race-code", name: "code", "data-i18n-placeholder": "races.optional", placeholder: t("races.optional"), autocomplete: "off", spellcheck: "false" }),
      el("button", { class: "btn primary", type: "submit", ...textOf("races.open") }),
    );
    this.current = el("button", { class: "btn", type: "button", id: "race-current", hidden: true });
    const join = el(
      "form",
      { id: "race-join-form", onsubmit: (ev) => this.onLinkForm(ev, "race") },
      el("label", { for: "race-link", ...textOf("races.link") }),
      el("input", { id: "race-link", name: "link", placeholder: "…/#race=r_…", autocomplete: "off" }),
      el("button", { class: "btn", type: "submit", ...textOf("races.go") }),
    );
    const watch = el(
      "form",
      { id: "watch-form", onsubmit: (ev) => this.onLinkForm(ev, "game") },
      el("label", { for: "watch-link", ...textOf("races.game_link") }),
      el("input", { id: "watch-link", name: "link", placeholder: "…/#game=g_…", autocomplete: "off" }),
      el("button", { class: "btn", type: "submit", ...textOf("races.watch") }),
    );
    this.lobby = el(
      "div",
      { id: "race-lobby" },
      el("h2", { id: "races-title", ...textOf("races.title") }),
      el("p", { class: "muted", ...textOf("races.intro") }),
      open,
      el("div", { class: "row" }, this.current),
      el("h3", { ...textOf("races.join_title") }),
      join,
      el("h3", { ...textOf("races.watch_title") }),
      el("p", { class: "muted", ...textOf("races.watch_intro") }),
      watch,
      el("h3", { ...textOf("races.live_title") }),
      this.liveList,
    );
    this.section.append(this.lobby);
  }

  showLobby() {
    this.lobby.hidden = false;
    this.detail.hidden = true;
    this.loadLiveGames();
    const state = this.app.session.state;
    this.current.hidden = !state || !state.code; // a daily's code is sealed: no race on it
    if (state && state.code) {
      this.current.textContent = t("races.current", { code: state.code });
      this.current.onclick = () => this.openRace({ code: state.code });
    }
  }

  /** The games being played now (GET /api/games), each a link to watch it live. */
  async loadLiveGames() {
    let games = [];
    try {
      games = (await api("GET", "/api/games?limit=20")).games;
    } catch {
      return; // the list is a convenience: the link form still works
    }
    const rows = games.map((g) =>
      el(
        "li",
        {},
        el("a", { href: linkTo("game", g.id), class: "live-game" }, `${g.owner.name} · ${gameName(g)}`),
        el("span", { class: "muted" }, ` ${t("races.live_game", { moves: g.moves, progress: g.progress, count: g.moves })}${g.race_id ? t("races.racing") : ""}`),
      ),
    );
    this.liveList.replaceChildren(...(rows.length ? rows : [el("li", { class: "muted" }, t("races.nobody"))]));
  }

  async onOpenForm(ev) {
    ev.preventDefault();
    const typed = ev.target.elements.code.value;
    const code = typedCode(typed);
    if (typed.trim() && !code) {
      toast(t("races.bad_code"), { kind: "error" });
      return;
    }
    const [game, variant] = ev.target.elements.game.value.split(":");
    await this.openRace(code ? { code } : { game, variant });
  }

  onLinkForm(ev, key) {
    ev.preventDefault();
    const text = ev.target.elements.link.value.trim();
    const match = text.match(new RegExp(`${key}=([\\w-]+)`)) || text.match(/^([rg]_[\w-]+)$/);
    if (!match) {
      toast(key === "race" ? t("races.bad_race_link") : t("races.bad_game_link"), { kind: "error" });
      return;
    }
    location.hash = `${key}=${match[1]}`;
  }

  async openRace(fields) {
    try {
      await this.app.net.whenReady();
      const reply = await this.app.net.request("race_open", fields);
      this.adopt(reply);
      location.hash = `race=${reply.race.id}`;
    } catch (error) {
      toast(errorText(error, "races.open_failed"), { kind: "error" });
    }
  }

  // -- one race ----------------------------------------------------------------------------

  async showRace(raceId) {
    this.lobby.hidden = true;
    this.detail.hidden = false;
    if (this.race && this.race.id === raceId) {
      this.render();
      return;
    }
    this.detail.replaceChildren(el("p", { class: "muted" }, t("races.loading")));
    try {
      await this.follow(raceId);
    } catch (error) {
      this.detail.replaceChildren(el("p", { class: "error" }, error.code === "not_found" ? t("races.no_such") : errorText(error, "races.no_such")));
    }
  }

  /** Watch the race; a racer (back after a reload or reconnect) joins again to get their game. */
  async follow(raceId) {
    await this.app.net.whenReady();
    let reply = await this.app.net.request("race_watch", { race_id: raceId });
    const me = this.app.player.id;
    if (reply.race.racers.some((r) => r.player.id === me)) {
      reply = await this.app.net.request("race_join", { race_id: raceId });
    }
    this.adopt(reply);
  }

  adopt(reply) {
    if (this.race && this.race.id !== reply.race.id && this.role === "spectator") this.stopWatching();
    this.race = reply.race;
    this.role = reply.role;
    this.myGameId = reply.game_id || this.myGameId;
    this.render();
    this.renderStrip();
  }

  async join() {
    try {
      const reply = await this.app.net.request("race_join", { race_id: this.race.id });
      this.adopt(reply);
    } catch (error) {
      toast(errorText(error, "races.join_failed"), { kind: "error" });
    }
  }

  async start() {
    const countdown = Number(this.detail.querySelector("#race-countdown").value);
    try {
      const reply = await this.app.net.request("race_start", { race_id: this.race.id, countdown_s: countdown });
      this.adopt(reply);
    } catch (error) {
      toast(errorText(error, "races.start_failed"), { kind: "error" });
    }
  }

  async leave() {
    const race = this.race;
    try {
      await this.app.net.request("race_leave", { race_id: race.id });
    } catch {
      /* gone already */
    }
    this.race = null;
    this.role = null;
    this.myGameId = null;
    this.renderStrip();
    location.hash = "races";
  }

  async giveUp() {
    const gameId = this.myGameId;
    if (!gameId) return;
    try {
      if (this.app.session.gameId === gameId) await this.app.session.resign();
      else await this.app.net.request("resign", { game_id: gameId });
    } catch (error) {
      toast(errorText(error, "races.give_up_failed"), { kind: "error" });
    }
  }

  stopWatching() {
    const race = this.race;
    this.race = null;
    this.role = null;
    clearInterval(this.countdownTimer);
    this.app.net.request("race_leave", { race_id: race.id }).catch(() => {});
    this.renderStrip();
  }

  async refollow() {
    if (!this.race) return;
    try {
      await this.follow(this.race.id);
      const mine = this.myGameId;
      if (mine && this.race.status === "running" && this.app.session.gameId !== mine && this.isRacer()) {
        await this.app.session.open(mine);
      }
    } catch {
      /* the next reconnect tries again */
    }
  }

  isRacer() {
    return this.role === "owner" || this.role === "racer";
  }

  /** A race game opened by its link (or after a reload): follow its race too. */
  onGameState(info) {
    if (info.race_id && (!this.race || this.race.id !== info.race_id) && this.loading !== info.race_id) {
      this.loading = info.race_id;
      this.follow(info.race_id)
        .catch(() => {})
        .finally(() => {
          this.loading = null;
        });
    }
    this.renderStrip();
  }

  // -- pushes ------------------------------------------------------------------------------

  onPush(message) {
    if (!this.race) return;
    const raceId = message.race_id || (message.race && message.race.id);
    if (raceId !== this.race.id) return;
    if (message.type === "race_update") this.onUpdate(message);
    else if (message.type === "race_progress") this.onProgress(message.racer);
    else if (message.type === "race_started") this.onStarted(message);
  }

  onUpdate({ event, race }) {
    const wasFinished = this.race.status === "finished";
    this.race = race;
    this.render();
    this.renderStrip();
    if (event === "finished" && !wasFinished && this.isRacer()) this.showResults();
    if (event === "cancelled") toast(t("races.cancelled"));
  }

  onProgress(racer) {
    const racers = this.race.racers.map((r) => (r.player.id === racer.player.id ? racer : r));
    this.race = { ...this.race, racers };
    this.render();
    this.renderStrip();
  }

  onStarted({ game, state }) {
    this.myGameId = game.id;
    this.app.session.adopt({ game, state, role: "owner" });
    replaceHash("game", game.id);
    this.app.showView("play");
    document.getElementById("board").focus({ preventScroll: true });
    // race_started does not subscribe us to the game's own pushes (an expiry, another tab): open it.
    this.app.session.open(game.id).catch(() => {});
  }

  // -- drawing -------------------------------------------------------------------------------

  render() {
    if (!this.race || this.detail.hidden) return;
    const race = this.race;
    const me = this.app.player.id;
    const inIt = race.racers.some((r) => r.player.id === me);
    const link = linkTo("race", race.id);
    this.section.dataset.raceStatus = race.status;
    const parts = [
      el("h2", { id: "race-title" }, t("races.race_on", { code: race.code })),
      el("p", { class: "race-status", id: "race-status", role: "status" }, this.statusText()),
      el(
        "div",
        { class: "row" },
        el("label", { class: "sr-only", for: "race-share" }, t("races.race_link")),
        el("input", { id: "race-share", readonly: true, value: link }),
        el("button", { class: "btn", type: "button", onclick: () => this.copyLink(link) }, t("races.copy_link")),
      ),
      this.controls(inIt),
      racersTable(race, me, true),
    ];
    this.detail.replaceChildren(...parts);
    this.tickCountdown();
  }

  controls(inIt) {
    const race = this.race;
    const row = el("div", { class: "row" });
    if (!inIt && (race.status === "open" || race.status === "countdown")) {
      row.append(el("button", { class: "btn primary", type: "button", id: "race-join", onclick: () => this.join() }, t("races.join")));
    }
    if (this.role === "owner" && race.status === "open") {
      row.append(
        el("label", { for: "race-countdown" }, t("races.countdown")),
        el("select", { id: "race-countdown" }, ...countdownChoices().map((s) => el("option", { value: String(s), selected: s === COUNTDOWN_S.default }, t("races.seconds", { n: s })))),
        el("button", { class: "btn primary", type: "button", id: "race-start", onclick: () => this.start() }, t("races.start")),
      );
    }
    if (inIt && (race.status === "open" || race.status === "countdown")) {
      row.append(el("button", { class: "btn", type: "button", onclick: () => this.leave() }, this.role === "owner" ? t("races.cancel") : t("races.leave")));
    }
    if (inIt && race.status === "running" && this.myGameId) {
      row.append(el("a", { class: "btn primary", href: `#game=${this.myGameId}` }, t("races.back")));
    }
    if (race.status === "finished" || race.status === "cancelled") {
      row.append(el("a", { class: "btn", href: `#board=${race.code}` }, t("races.leaderboard")));
      row.append(el("button", { class: "btn", type: "button", onclick: () => this.openRematch() }, t("races.rematch")));
    }
    return row;
  }

  openRematch() {
    this.openRace({ code: this.race.code });
  }

  statusText() {
    const race = this.race;
    if (race.status === "countdown") return t("races.starting", { n: this.secondsLeft() });
    if (race.status === "open") return t("races.waiting", { count: race.racers.length });
    return STATUS_TEXT[race.status] ? t(STATUS_TEXT[race.status]) : race.status;
  }

  secondsLeft() {
    const left = (this.race.starts_at || 0) - this.dailies.serverNow();
    return Math.max(0, Math.ceil(left / 1000));
  }

  tickCountdown() {
    clearInterval(this.countdownTimer);
    if (!this.race || this.race.status !== "countdown") return;
    const paint = () => {
      const text = this.statusText();
      for (const node of document.querySelectorAll("#race-status, #race-strip .race-status")) node.textContent = text;
    };
    paint();
    this.countdownTimer = setInterval(paint, 200);
  }

  async copyLink(link) {
    const ok = await copyText(link);
    toast(ok ? t("races.copied") : t("races.copy_failed"));
  }

  /** The compact progress strip above the board while playing a race game. */
  renderStrip() {
    const info = this.app.session.info;
    const racing = this.race && info && info.race_id === this.race.id;
    this.strip.hidden = !racing;
    if (!racing) return;
    const me = this.app.player.id;
    const items = this.race.racers.map((r) => racerChip(r, me));
    const canGiveUp = this.isRacer() && this.race.status === "running" && info.id === this.myGameId && this.stillPlaying();
    this.strip.replaceChildren(
      el("a", { href: `#race=${this.race.id}`, class: "race-status" }, this.statusText()),
      ...items,
      ...(canGiveUp ? [el("button", { class: "btn", type: "button", id: "race-give-up", onclick: () => this.giveUp() }, t("play.give_up"))] : []),
    );
    this.tickCountdown();
  }

  stillPlaying() {
    const state = this.app.session.state;
    return Boolean(state) && !["won", "resigned", "expired"].includes(state.status);
  }

  showResults() {
    const results = document.getElementById("race-results");
    results.replaceChildren(racersTable(this.race, this.app.player.id, false));
    const endDialog = document.getElementById("dlg-end");
    if (endDialog.open) endDialog.close("dismiss");
    if (!this.resultsDialog.open) this.resultsDialog.showModal();
  }
}

function racersTable(race, me, withWatch) {
  const head = COLUMNS.filter((key) => withWatch || key !== "races.col.watch").map((key) => t(key));
  const rows = race.racers.map((r) =>
    el(
      "tr",
      { class: r.player.id === me ? "me" : null, dataset: { player: r.player.id, status: r.status, progress: String(r.progress) } },
      cell("races.col.place", r.place ? ordinal(r.place) : "–"),
      cell("races.col.racer", r.player.name, r.player.id === me ? t("common.you_suffix") : ""),
      cell("races.col.status", RACER_STATUS[r.status] ? t(RACER_STATUS[r.status]) : r.status),
      cell("races.col.progress", progressBar(r)),
      cell("races.col.moves", formatNumber(r.moves)),
      cell("races.col.time", formatTime(r.elapsed_ms)),
      withWatch ? cell("races.col.watch", r.game_id && r.player.id !== me ? el("a", { href: `#game=${r.game_id}` }, t("races.watch_link")) : "") : null,
    ),
  );
  return el(
    "table",
    { class: "racers folding", ...labelOf("races.racers") },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows),
  );
}

function progressBar(racer) {
  const total = racer.progress_total || 1;
  const pct = Math.round((100 * racer.progress) / total);
  return el(
    "div",
    { class: "progress-cell" },
    el("div", { class: "bar", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": String(total), "aria-valuenow": String(racer.progress), "aria-label": t("races.progress_of", { name: racer.player.name, done: racer.progress, total }) }, el("span", { style: { width: `${pct}%` } })),
    el("span", {}, `${racer.progress}/${total}`),
  );
}

function racerChip(racer, me) {
  return el(
    "div",
    { class: `racer${racer.player.id === me ? " me" : ""}`, dataset: { player: racer.player.id, progress: String(racer.progress) } },
    el("span", { class: "name" }, racer.place ? `${ordinal(racer.place)} ` : "", racer.player.name),
    progressBar(racer),
  );
}

/** A place in the race: 1st, 2nd (English ordinals through Intl.PluralRules); "1." in Hungarian. */
function ordinal(n) {
  if (currentLang() !== "en") return t("races.place", { n });
  const suffix = { one: "st", two: "nd", few: "rd" }[new Intl.PluralRules("en", { type: "ordinal" }).select(n)] || "th";
  return `${n}${suffix}`;
}
