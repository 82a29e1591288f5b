// Boot: identity, connection, the game session and the views, driven by the address's fragment.

import { early } from "./connect.js";
import { boardOf, Dailies, gameName } from "./dailies.js";
import { confirmGiveUp, EndDialog, NewGameDialog, SettingsDialog, ShareDialog } from "./dialogs.js";
import { i18nEvents, initI18n, t } from "./i18n.js";
import { createPlayer, rememberName, rename } from "./identity.js";
import { typingIn } from "./keys.js";
import { errorText } from "./messages.js";
import { Net, socketUrl } from "./net.js";
import { PlayView } from "./play.js";
import { linkTo, parseHash, replaceHash } from "./router.js";
import { GameSession } from "./session.js";
import { Settings } from "./settings.js";
import { sounds } from "./sound.js";
import { hideToast, showConnection, toast } from "./ui.js";
import { installAppearance } from "./appearance.js";

const LAST_GAME = "solitaire.lastGame";
// The pages that are not the first screen's, each a module whose install(app) adds its
// extensions: loaded once the first screen is ready (when the page is idle), or at once when
// the address asks for one of their views. The page's #later-modules (server/edge/static.py)
// names the modules each one loads, so they are fetched side by side, not one import after another.
const COMPETITION = { url: new URL("./competition.js", import.meta.url).href, load: () => import("./competition.js"), views: ["leaderboards", "board", "races", "race"] };
const HOME = { url: new URL("./home.js", import.meta.url).href, load: () => import("./home.js"), views: ["profile", "replay"] };
const PAGES = [COMPETITION, HOME];
const IDLE_WITHIN_MS = 2000; // the first screen ready: its pages load when the page is idle, or after this
const READY_WITHIN_MS = 8000; // a connection not ready by then (offline): the pages load all the same
// The dialogs about the game on screen (closed when another game is shown).
const GAME_DIALOGS = ["dlg-end", "dlg-confirm", "dlg-share", "dlg-solution", "dlg-new"];

/** Close the open dialogs (those of `ids`, or all): each as dismissed, never as a choice. */
function closeDialogs(ids = null) {
  for (const dialog of document.querySelectorAll("dialog[open]")) {
    if (!ids || ids.includes(dialog.id)) dialog.close("dismiss");
  }
}

class App {
  constructor(player, net = null) {
    this.player = player;
    this.settings = new Settings();
    this.net = net || new Net({ url: socketUrl(), token: player.token });
    this.session = new GameSession(this.net);
    this.extensions = []; // the competition and home pages register here (see PAGES)
    this.pages = new Map(); // PAGES entry -> the promise of its installed module
    this.dailies = new Dailies(); // today's dailies: the new game dialog offers them
    this.endDialog = new EndDialog({ onChoice: (choice, gameId) => this.onEndChoice(choice, gameId) });
    this.dialogsGame = null; // the game the open dialogs belong to
    this.solution = null; // the "Show a solution" dialog, loaded when first asked for (solution.js)
    this.play = new PlayView({
      session: this.session,
      settings: this.settings,
      endDialog: this.endDialog,
      rankFor: (info) => this.loadPage(COMPETITION).then((competition) => competition.rankText(this, info)),
      onSolution: (info) => this.showSolution(info),
      onGiveUp: () => this.giveUp(),
      onNewGame: () => this.newGame.show({ game: this.play.kind }),
    });
    this.newGame = new NewGameDialog({
      onStart: (fields) => this.start(fields),
      dailies: (key) => this.dailyFor(key),
      settings: this.settings,
    });
    sounds.setEnabled(this.settings.get("sound"));
    this.settings.addEventListener("change", (ev) => {
      if (ev.detail.name === "sound") sounds.setEnabled(ev.detail.value);
    });
    this.share = new ShareDialog();
    installAppearance(this.settings);
    this.settingsDialog = new SettingsDialog({
      settings: this.settings,
      getName: () => this.player.name,
      onRename: (name) => this.rename(name),
    });
    this.wire();
    this.dailies.addEventListener("change", () => this.newGame.sync());
    this.dailies.load().catch(() => {});
  }

  /** The page's module, loaded and installed once (asked again after a failure: offline). */
  loadPage(page, priority = "auto") {
    let loading = this.pages.get(page);
    if (!loading) {
      preloadModules(page.url, priority);
      loading = page.load().then((module) => {
        module.install(this);
        return module;
      });
      loading.catch(() => this.pages.delete(page));
      this.pages.set(page, loading);
    }
    return loading;
  }

  /** Every page, after the first screen: when the page is idle, at a low priority. */
  loadPagesLater() {
    const load = () => {
      for (const page of PAGES) this.loadPage(page, "low").catch(() => {});
    };
    if ("requestIdleCallback" in window) requestIdleCallback(load, { timeout: IDLE_WITHIN_MS });
    else setTimeout(load, 0);
  }

  wire() {
    document.getElementById("btn-restart").addEventListener("click", () => this.restart());
    this.net.addEventListener("status", (ev) => this.onConnection(ev.detail.state));
    this.net.addEventListener("ready", (ev) => this.onReady(ev.detail));
    this.net.addEventListener("fatal", (ev) => this.onFatal(ev.detail));
    this.session.addEventListener("state", (ev) => this.onGameState(ev.detail));
    this.session.addEventListener("lost", () => this.onGameLost());
    window.addEventListener("hashchange", () => this.route());
    i18nEvents.addEventListener("change", () => this.relabel());
    document.addEventListener("keydown", (ev) => this.onKey(ev));
    document.getElementById("btn-new").addEventListener("click", () => this.newGame.show({ game: this.play.kind }));
    document.getElementById("btn-settings").addEventListener("click", () => this.settingsDialog.show());
    document.getElementById("btn-help").addEventListener("click", () => this.showHelp());
    document.getElementById("dlg-help").addEventListener("click", (ev) => {
      const tab = ev.target.closest("[data-help]");
      if (tab) this.showHelpPage(tab.dataset.help);
    });
    document.getElementById("btn-share").addEventListener("click", () => this.openShare());
  }

  run() {
    this.net.start();
    const shown = this.route();
    // The first screen is ready once it is shown and connected: only then do the other pages load.
    const connected = Promise.race([this.net.whenReady(), new Promise((resolve) => setTimeout(resolve, READY_WITHIN_MS))]);
    Promise.all([shown, connected]).then(() => this.loadPagesLater());
  }

  onConnection(state) {
    if (state === "online") showConnection("online");
    else if (state === "connecting") showConnection(this.net.everReady ? "reconnecting" : "connecting");
    else showConnection(state);
    document.body.dataset.conn = state;
  }

  onReady({ player }) {
    if (player && player.name !== this.player.name) this.player = rememberName(this.player, player.name);
    document.body.dataset.player = player ? player.id : "";
  }

  async onFatal(detail) {
    // An ended session is the account's to answer (home.js): it may not be loaded yet.
    if (detail.code !== "bad_token") await this.loadPage(HOME).catch(() => null);
    if (this.extensions.some((ext) => ext.fatal && ext.fatal(detail))) return; // an ended session
    if (detail.code === "bad_token") {
      // The server does not know this token (a new database?): become a new guest.
      this.player = await createPlayer();
      this.net.restart(this.player.token);
      return;
    }
    showConnection("failed");
    toast(t("error.connection_refused"), { kind: "error", ms: 10000 });
  }

  async route() {
    hideToast(); // a message belongs to the page it was shown on
    closeDialogs(); // and so does a dialog: none outlives the page it was opened on
    const hash = location.hash;
    const { view, value } = parseHash();
    const page = PAGES.find((p) => p.views.includes(view));
    if (page) {
      await this.loadPage(page).catch(() => null); // offline without its files: the game instead
      if (location.hash !== hash) return; // another address meanwhile: its own route() shows it
    }
    for (const ext of this.extensions) {
      const shown = ext.route ? ext.route(view, value) : null;
      if (shown) {
        this.showView(shown);
        return;
      }
    }
    this.showView("play");
    try {
      if (view === "code") await this.startAndLink({ code: value });
      else if (view === "daily") await this.startAndLink({ daily: value });
      else if (view === "game" || view === "watch") await this.openGame(value);
      else if (!this.session.gameId || !this.session.isOwner) await this.resumeLast();
      else replaceHash("game", this.session.gameId);
    } catch (error) {
      toast(errorText(error, "error.open_failed"), { kind: "error" });
      if (!this.session.gameId) this.newGame.show();
    }
  }

  showView(name) {
    if (document.body.dataset.view && document.body.dataset.view !== name) hideToast(); // its page is gone
    for (const section of document.querySelectorAll("main > .view")) {
      section.hidden = section.id !== `view-${name}`;
    }
    document.body.dataset.view = name;
    for (const link of document.querySelectorAll(".nav a")) {
      const current = link.getAttribute("href") === `#${name === "boards" ? "leaderboards" : name}`;
      if (current) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    for (const ext of this.extensions) if (ext.shown) ext.shown(name);
  }

  async startAndLink(fields) {
    const reply = await this.session.start(fields);
    replaceHash("game", reply.game.id);
    return reply;
  }

  async start(fields) {
    this.showView("play");
    this.endDialog.close();
    await this.startAndLink(fields);
    this.play.focusBoard();
  }

  /** The same deal again from its start: a new game of the current one's code. */
  async restart() {
    const code = this.session.state && this.session.state.code;
    if (code) await this.start({ code }).catch((error) => toast(errorText(error), { kind: "error" }));
  }

  async openGame(gameId) {
    if (this.session.gameId === gameId) return;
    await this.session.open(gameId);
  }

  /** Back to the player's own last game (from a watched one, or on a fresh visit). */
  async resumeLast() {
    const last = localStorage.getItem(LAST_GAME);
    if (!last) {
      if (!this.session.gameId) this.newGame.show();
      return;
    }
    try {
      await this.session.open(last);
      replaceHash("game", last);
    } catch {
      localStorage.removeItem(LAST_GAME);
      this.newGame.show();
    }
  }

  onGameState({ info, role }) {
    if (role === "owner") localStorage.setItem(LAST_GAME, info.id);
    if (info.id !== this.dialogsGame) {
      // Another game on screen: the dialogs opened for the last one (its dead end, its give-up
      // question, its share links, a new game asked for over it) are not about this one.
      if (this.dialogsGame !== null) closeDialogs(GAME_DIALOGS);
      if (this.dialogsGame !== null) hideToast("error"); // and neither is its last refusal
      this.dialogsGame = info.id;
    }
    this.relabel();
  }

  /** Texts that are not marked in the page: the title, the connection line. */
  relabel() {
    const info = this.session.info;
    document.title = info ? `${gameName(info)} · ${t("app.name")}` : t("app.title");
    showConnection(document.getElementById("conn").dataset.state || "connecting");
    this.newGame.sync();
  }

  /** Give up the game on screen, after asking (it counts on the leaderboard as given up). */
  async giveUp(gameId = this.session.gameId) {
    if (!this.session.isOwner || !this.play.canPlay || this.session.gameId !== gameId) return;
    if (!(await confirmGiveUp(this.resignName()))) return;
    try {
      await this.session.resign(gameId); // the game named in the question, or none

    } catch (error) {
      toast(errorText(error), { kind: "error" });
    }
  }

  /** The game a give-up question names: its code or daily, and for a daily whether it is ranked. */
  resignName() {
    const info = this.session.info;
    const name = gameName(info);
    if (!info || !info.daily) return name;
    return t("play.give_up_daily", { game: name, kind: info.ranked ? t("daily.ranked") : t("daily.practice") });
  }

  onGameLost() {
    localStorage.removeItem(LAST_GAME);
    this.play.clear();
    toast(t("error.game_gone"), { kind: "error", ms: 6000 });
    this.newGame.show();
  }

  onEndChoice(choice, gameId) {
    if (gameId !== this.session.gameId) return; // its game is gone from the screen: nothing to do
    if (choice === "undo") this.play.undo();
    else if (choice === "resign") this.giveUp(gameId);
    else if (choice === "new") this.newGame.show({ game: this.play.kind });
    else if (choice === "board") location.hash = `board=${boardOf(this.session.info)}`;
    else if (choice === "solution") this.showSolution(this.session.info);
  }

  /** The help: the rules of the game on screen first, the other game and the keys a tab away. */
  showHelp() {
    this.showHelpPage(this.play.kind || "HH");
    const dialog = document.getElementById("dlg-help");
    if (!dialog.open) dialog.showModal();
  }

  showHelpPage(name) {
    for (const page of document.querySelectorAll("[data-help-page]")) page.hidden = page.dataset.helpPage !== name;
    for (const tab of document.querySelectorAll("[data-help]")) tab.setAttribute("aria-pressed", String(tab.dataset.help === name));
  }

  async showSolution(info) {
    if (!info) return;
    if (!this.solution) {
      try {
        const { SolutionDialog } = await import("./solution.js");
        this.solution ||= new SolutionDialog();
      } catch (error) {
        toast(errorText(error), { kind: "error" }); // offline, and its file not kept
        return;
      }
    }
    this.solution.show(info);
  }

  openShare() {
    const state = this.session.state;
    if (!state) return;
    const info = this.session.info;
    if (!state.code && info) {
      // A daily's code is sealed: share the day's challenge of the family instead.
      this.share.show(gameName(info), this.session.gameId, linkTo("daily", info.family));
      return;
    }
    this.share.show(state.code, this.session.gameId);
  }

  async rename(name) {
    this.player = await rename(this.player, name);
    // The server keeps the name a connection authenticated with: reconnect to use the new one.
    this.net.restart(this.player.token);
    return this.player;
  }

  /** Become another player in this browser (signed in, logged out): a new connection, no game. */
  usePlayer(player) {
    this.player = player;
    localStorage.removeItem(LAST_GAME);
    this.session.close();
    this.play.clear();
    this.net.restart(player.token);
  }

  dailyFor(key) {
    const today = this.dailies.dailyFor(key);
    if (today) return today;
    for (const ext of this.extensions) {
      const daily = ext.dailyFor && ext.dailyFor(key);
      if (daily) return daily;
    }
    return null;
  }

  onKey(ev) {
    if (ev.defaultPrevented || typingIn(ev)) return;
    const key = ev.key;
    if (document.body.dataset.view === "play" && this.play.shortcut(ev)) {
      ev.preventDefault();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (key === "n" || key === "N") {
      ev.preventDefault();
      this.newGame.show({ game: this.play.kind });
    } else if (key === "?") {
      ev.preventDefault();
      this.showHelp();
    }
  }
}

/** Preload the modules a page's module loads besides the first screen's (the page's
 * #later-modules map, by the module's URL): fetched side by side, evaluated on import. */
function preloadModules(url, priority) {
  const data = document.getElementById("later-modules");
  if (!data) return;
  const map = JSON.parse(data.textContent);
  const key = Object.keys(map).find((name) => new URL(name, document.baseURI).href === url);
  for (const name of key ? map[key] : []) {
    const href = new URL(name, document.baseURI).href;
    if ([...document.querySelectorAll('link[rel="modulepreload"]')].some((link) => link.href === href)) continue;
    const link = document.createElement("link");
    link.rel = "modulepreload";
    link.href = href;
    link.fetchPriority = priority;
    document.head.append(link);
  }
}

async function boot() {
  // The catalog and the player (a first visit asks the server for one) are fetched side by
  // side: each is a round trip on a slow network. The player and its connection come from
  // connect.js, which the page ran first: what the connection says meanwhile is told at
  // app.run(). The competition and home pages load after the first screen (App.loadPage).
  await initI18n();
  showConnection("connecting");
  const { player, net } = await early;
  const app = new App(player, net);
  window.solitaire = app; // for the curious (and for debugging); the UI never needs it
  app.run();
  registerServiceWorker();
}

/** The service worker (sw.js) keeps the client's own files for the next visit; play needs the server. */
function registerServiceWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("sw.js").catch(() => {}); // an old browser or private mode: no cache
}

boot();
