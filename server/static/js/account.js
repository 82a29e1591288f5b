// The player's account in this browser (docs/accounts.md): a guest claims its player with a
// username and a password (POST /api/accounts), logs in as an account's player from any device
// (POST /api/sessions), lists and ends sessions, changes the password and logs out
// (DELETE /api/sessions/current). Every switch of player goes through app.usePlayer: a new
// token in localStorage and a new connection; the server closes sockets of an ended session with
// CLOSE.AUTH (4401), which `fatal` below turns into a guest again instead of a dead page.

import { CLOSE, PASSWORD, SESSION_LABEL, USERNAME } from "./facts.js";
import { formatDate, t } from "./i18n.js";
import { api, createPlayer, keepPlayer, storedPlayer } from "./identity.js";
import { errorText, fieldText } from "./messages.js";
import { el, toast } from "./ui.js";

const SESSION_ENDED = CLOSE.AUTH;

/** Refusals worded for the form in the page's language (never the server's English message). */
function refusal(error, values = {}) {
  const limits = { password: PASSWORD, username: USERNAME };
  const reason = fieldText(error, values, limits);
  if (reason) return reason;
  if (error.code === "bad_credentials") return t("account.bad_credentials");
  if (error.code === "rate_limited") return t("account.rate_limited");
  return errorText(error, "account.failed");
}

function field(id, label, attrs) {
  return [el("label", { class: "field", for: id }, label), el("input", { id, ...attrs })];
}

export class Account {
  constructor(app) {
    this.app = app;
    this.me = null; // GET /api/accounts/me for the current token
    this.switching = false; // a switch of player is under way: its SESSION_ENDED is expected
    this.listeners = new Set();
    app.net.onReady(() => this.load()); // at once when loaded after the handshake
  }

  onChange(listener) {
    this.listeners.add(listener);
  }

  changed() {
    for (const listener of this.listeners) listener(this.me);
  }

  get token() {
    return this.app.player.token;
  }

  /** Who the token is: the username (null for a guest) and the session's id. */
  async load() {
    try {
      this.me = await api("GET", "/api/accounts/me", undefined, this.token);
    } catch {
      this.me = null;
    }
    document.body.dataset.account = this.me && this.me.username ? "account" : "guest";
    this.changed();
    return this.me;
  }

  /** Main's fatal hook: an ended session (logged out elsewhere) becomes a new guest here. */
  fatal(detail) {
    if (detail.code !== SESSION_ENDED) return false; // bad_token at auth: main makes a new guest
    if (this.switching) return true;
    this.becomeGuest(t("account.ended")).catch(() => {});
    return true;
  }

  async becomeGuest(message) {
    this.switching = true;
    try {
      // Another tab of this browser may have switched already (its log-out ended this token
      // too): take the player it keeps rather than making a second guest.
      const stored = storedPlayer();
      const guest = stored && stored.token !== this.app.player.token ? stored : await createPlayer();
      this.app.usePlayer(guest);
      this.me = null;
      if (message) toast(message, { ms: 6000 });
    } finally {
      this.switching = false;
    }
  }

  async signUp(username, password) {
    const made = await api("POST", "/api/accounts", { username, password }, this.token);
    await this.load();
    return made;
  }

  async logIn(username, password) {
    const done = await api("POST", "/api/sessions", { username, password, label: deviceLabel() });
    this.switching = true;
    try {
      this.app.usePlayer(keepPlayer(done));
    } finally {
      this.switching = false;
    }
    await this.app.net.whenReady();
    return done;
  }

  async logOut() {
    this.switching = true;
    try {
      await api("DELETE", "/api/sessions/current", undefined, this.token);
      await this.becomeGuest(t("account.logged_out"));
    } finally {
      this.switching = false;
    }
  }

  sessions() {
    return api("GET", "/api/sessions", undefined, this.token).then((body) => body.sessions);
  }

  async endSession(id) {
    await api("DELETE", `/api/sessions/${encodeURIComponent(id)}`, undefined, this.token);
  }

  changePassword(password, newPassword) {
    return api("POST", "/api/accounts/me/password", { password, new_password: newPassword }, this.token);
  }
}

function deviceLabel() {
  const data = navigator.userAgentData;
  const platform = (data && data.platform) || navigator.platform || "";
  return `${t("account.browser")}${platform ? ` · ${platform}` : ""}`.slice(0, SESSION_LABEL.max);
}

/** The account panel of the player's own profile: sign up and log in for a guest; the
 * username, sessions, password and log out for an account. */
export class AccountPanel {
  constructor(account) {
    this.account = account;
    this.root = el("section", { class: "panel account", id: "account", "aria-labelledby": "account-title" });
    account.onChange(() => this.render());
  }

  render() {
    const me = this.account.me;
    const parts = [el("h3", { id: "account-title" }, t("account.title"))];
    if (me && me.username) parts.push(...this.accountParts(me));
    else parts.push(...this.guestParts());
    // A redraw (the connection came back, the account was read again) keeps what is being typed.
    const typed = new Map([...this.root.querySelectorAll("input")].map((input) => [input.id, input.value]));
    const focused = document.activeElement && this.root.contains(document.activeElement) ? document.activeElement.id : null;
    this.root.replaceChildren(...parts);
    for (const input of this.root.querySelectorAll("input")) {
      if (typed.has(input.id)) input.value = typed.get(input.id);
    }
    if (focused) document.getElementById(focused)?.focus();
  }

  guestParts() {
    const signUp = el(
      "form",
      { id: "form-sign-up", class: "stack", novalidate: true, onsubmit: (ev) => this.onSignUp(ev) },
      el("h4", {}, t("account.sign_up")),
      el("p", { class: "muted" }, t("account.sign_up_help")),
      ...field("signup-username", t("account.username"), { name: "username", autocomplete: "username", required: true, minlength: String(USERNAME.min), maxlength: String(USERNAME.max), spellcheck: "false" }),
      ...field("signup-password", t("account.password"), { name: "password", type: "password", autocomplete: "new-password", required: true, minlength: String(PASSWORD.min), maxlength: String(PASSWORD.max), "aria-describedby": "signup-password-help" }),
      el("p", { class: "muted small", id: "signup-password-help" }, t("account.password_help")),
      el("p", { class: "error", role: "alert", id: "signup-error" }),
      el("button", { class: "btn primary", type: "submit" }, t("account.sign_up_button")),
    );
    const logIn = el(
      "form",
      { id: "form-log-in", class: "stack", novalidate: true, onsubmit: (ev) => this.onLogIn(ev) },
      el("h4", {}, t("account.log_in")),
      el("p", { class: "muted" }, t("account.log_in_help")),
      ...field("login-username", t("account.username"), { name: "username", autocomplete: "username", required: true, spellcheck: "false" }),
      ...field("login-password", t("account.password"), { name: "password", type: "password", autocomplete: "current-password", required: true }),
      el("p", { class: "error", role: "alert", id: "login-error" }),
      el("button", { class: "btn primary", type: "submit" }, t("account.log_in_button")),
    );
    return [el("p", { id: "account-state" }, t("account.guest")), el("div", { class: "account-forms" }, signUp, logIn)];
  }

  accountParts(me) {
    this.sessionList = el("ul", { class: "sessions", id: "sessions", "aria-label": t("account.sessions") });
    const password = el(
      "form",
      { id: "form-password", class: "stack", novalidate: true, onsubmit: (ev) => this.onPassword(ev) },
      el("h4", {}, t("account.change_password")),
      ...field("password-old", t("account.current_password"), { name: "password", type: "password", autocomplete: "current-password", required: true }),
      ...field("password-new", t("account.new_password"), { name: "new_password", type: "password", autocomplete: "new-password", required: true, minlength: String(PASSWORD.min), maxlength: String(PASSWORD.max) }),
      el("p", { class: "error", role: "alert", id: "password-error" }),
      el("button", { class: "btn", type: "submit" }, t("account.change_password")),
    );
    this.loadSessions();
    return [
      el("p", { id: "account-state" }, t("account.signed_in", { username: me.username })),
      el("div", { class: "row" }, el("button", { class: "btn", type: "button", id: "btn-log-out", onclick: () => this.onLogOut() }, t("account.log_out"))),
      el("h4", {}, t("account.sessions")),
      this.sessionList,
      password,
    ];
  }

  async loadSessions() {
    const list = this.sessionList;
    let sessions = [];
    try {
      sessions = await this.account.sessions();
    } catch {
      return;
    }
    list.replaceChildren(
      ...sessions.map((s) =>
        el(
          "li",
          { dataset: { session: s.id, current: String(s.current) } },
          el("span", {}, s.label || t("account.unnamed_device")),
          el("span", { class: "muted" }, ` · ${formatDate(s.created_at, { dateStyle: "medium", timeStyle: "short" })}`),
          s.current
            ? el("strong", {}, ` · ${t("account.this_device")}`)
            : el("button", { class: "btn small", type: "button", onclick: () => this.onEnd(s.id), "aria-label": t("account.end_named", { label: s.label || "" }) }, t("account.end")),
        ),
      ),
    );
  }

  async onSignUp(ev) {
    ev.preventDefault();
    const form = ev.target;
    const error = form.querySelector(".error");
    error.textContent = "";
    try {
      await this.account.signUp(form.elements.username.value, form.elements.password.value);
      toast(t("account.signed_up"));
    } catch (e) {
      error.textContent = refusal(e, { username: form.elements.username.value, password: form.elements.password.value });
    }
  }

  async onLogIn(ev) {
    ev.preventDefault();
    const form = ev.target;
    const error = form.querySelector(".error");
    error.textContent = "";
    try {
      const done = await this.account.logIn(form.elements.username.value, form.elements.password.value);
      toast(t("account.logged_in", { name: done.name }));
    } catch (e) {
      error.textContent = refusal(e);
    }
  }

  async onLogOut() {
    try {
      await this.account.logOut();
    } catch (e) {
      toast(refusal(e), { kind: "error" });
    }
  }

  async onEnd(id) {
    try {
      await this.account.endSession(id);
      this.loadSessions();
    } catch (e) {
      toast(refusal(e), { kind: "error" });
    }
  }

  async onPassword(ev) {
    ev.preventDefault();
    const form = ev.target;
    const error = form.querySelector(".error");
    error.textContent = "";
    try {
      const done = await this.account.changePassword(form.elements.password.value, form.elements.new_password.value);
      form.reset();
      toast(t("account.password_changed", { count: done.ended_sessions }));
      this.loadSessions();
    } catch (e) {
      error.textContent = refusal(e, { username: (this.account.me || {}).username, new_password: form.elements.new_password.value });
    }
  }
}
