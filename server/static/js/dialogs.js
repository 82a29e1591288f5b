// The dialogs: new game, settings (with the display name), share, end of game, help.

import { typedCode } from "./codes.js";
import { PLAYER_NAME } from "./facts.js";
import { currentLang, formatNumber, LANGUAGES, setLanguage, t } from "./i18n.js";
import { formatTime } from "./infobar.js";
import { errorText, fieldText } from "./messages.js";

const NAME_MAX = 24; // a display name's most characters (graphemes), as the server counts them
import { linkTo } from "./router.js";
import { copyText, el } from "./ui.js";

function open(dialog) {
  if (!dialog.open) dialog.showModal();
}

/** New game: resolves the chosen start fields through `onStart(fields)`. */
export class NewGameDialog {
  constructor({ onStart, dailies, settings }) {
    this.dialog = document.getElementById("dlg-new");
    this.form = document.getElementById("form-new");
    this.error = document.getElementById("new-error");
    this.code = document.getElementById("new-code");
    this.daily = document.getElementById("new-daily");
    this.onStart = onStart;
    this.dailies = dailies;
    this.settings = settings;
    this.winnable = document.getElementById("new-winnable");
    this.winnable.addEventListener("change", () => settings && settings.set("winnable", this.winnable.checked));
    this.form.addEventListener("change", () => this.sync());
    this.form.addEventListener("submit", (ev) => this.submit(ev));
    this.code.addEventListener("input", () => {
      this.error.textContent = "";
    });
    // Enter in the code field plays the code typed (the form's default button is the random deal).
    this.code.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" || ev.isComposing) return;
      ev.preventDefault();
      this.form.requestSubmit(document.getElementById("new-play-code"));
    });
  }

  show({ game } = {}) {
    if (game) this.form.elements.game.value = game;
    this.error.textContent = "";
    if (this.settings) this.winnable.checked = Boolean(this.settings.get("winnable"));
    this.sync();
    open(this.dialog);
  }

  choice() {
    const game = this.form.elements.game.value;
    const variant = game === "SH" ? this.form.elements.variant.value : "N";
    return { game, variant };
  }

  sync() {
    const { game, variant } = this.choice();
    document.getElementById("new-level").disabled = game !== "SH";
    const key = `${game}1-${variant}`;
    const daily = this.dailies ? this.dailies(key) : null;
    this.daily.hidden = !daily;
    this.daily.textContent = daily && daily.label ? t("new.daily_of", { day: daily.label }) : t("new.daily");
  }

  async submit(ev) {
    const how = ev.submitter ? ev.submitter.value : "random";
    if (how === "cancel") return;
    ev.preventDefault();
    const { game, variant } = this.choice();
    let fields = this.winnable.checked ? { game, variant, winnable: true } : { game, variant };
    if (how === "code") {
      const code = typedCode(this.code.value);
      if (!code) {
        this.error.textContent = t("new.code_invalid");
        this.code.focus();
        return;
      }
      fields = { code };
    } else if (how === "daily") {
      fields = { daily: `${game}1-${variant}` };
    }
    if (fields.winnable) this.error.textContent = t("new.searching");
    try {
      await this.onStart(fields);
      this.dialog.close();
    } catch (error) {
      this.error.textContent = errorText(error);
    }
  }
}

export class SettingsDialog {
  constructor({ settings, getName, onRename }) {
    this.dialog = document.getElementById("dlg-settings");
    this.form = document.getElementById("form-settings");
    this.settings = settings;
    this.getName = getName;
    this.name = document.getElementById("player-name");
    // The server's limit is NAME_MAX characters as a reader counts them (graphemes); the schema's
    // PLAYER_NAME.max bounds the code units sent. The field takes no more than either allows.
    this.name.maxLength = Math.min(PLAYER_NAME.max, NAME_MAX);
    this.status = document.getElementById("name-status");
    for (const box of this.form.querySelectorAll("input[type=checkbox]")) {
      box.addEventListener("change", () => settings.set(box.name, box.checked));
    }
    this.lang = document.getElementById("lang-select");
    // Each language by its own name, marked with its lang so it is read out in that language.
    this.lang.replaceChildren(...LANGUAGES.map(({ code, name }) => el("option", { value: code, lang: code, text: name })));
    this.lang.addEventListener("change", () => setLanguage(this.lang.value));
    const save = async () => {
      const name = this.name.value.trim();
      if (!name) {
        this.status.textContent = t("settings.name_empty");
        return;
      }
      this.status.textContent = t("settings.saving");
      try {
        const player = await onRename(name);
        // the name as the server stored it: normalized, its spaces collapsed
        this.status.textContent = t("settings.saved", { name: player ? player.name : name });
      } catch (error) {
        const reason = fieldText(error, { name }, { name: { min: PLAYER_NAME.min, max: NAME_MAX } });
        this.status.textContent = t("settings.not_saved", { reason: reason || errorText(error) });
      }
    };
    document.getElementById("btn-rename").addEventListener("click", save);
    this.name.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        ev.preventDefault();
        save();
      }
    });
  }

  show() {
    for (const box of this.form.querySelectorAll("input[type=checkbox]")) box.checked = Boolean(this.settings.get(box.name));
    this.name.value = this.getName() || "";
    this.lang.value = currentLang();
    this.status.textContent = "";
    open(this.dialog);
  }
}

export class ShareDialog {
  constructor() {
    this.dialog = document.getElementById("dlg-share");
    this.status = document.getElementById("share-status");
    this.native = document.getElementById("btn-native-share");
    this.dialog.addEventListener("click", async (ev) => {
      const button = ev.target.closest("[data-copy]");
      if (!button) return;
      const input = document.getElementById(button.dataset.copy);
      const ok = await copyText(input.value);
      this.status.textContent = ok ? t("share.copied") : t("share.copy_failed");
      input.select();
    });
    this.native.addEventListener("click", () => {
      navigator.share({ title: t("app.name"), text: t("share.text", { code: this.code }), url: this.dealLink }).catch(() => {});
    });
  }

  show(code, gameId, dealLink = linkTo("code", code)) {
    this.code = code;
    this.dealLink = dealLink;
    document.getElementById("share-code").value = code;
    document.getElementById("share-deal").value = this.dealLink;
    document.getElementById("share-watch").value = gameId ? linkTo("game", gameId) : "";
    this.native.hidden = !navigator.share;
    this.status.textContent = "";
    open(this.dialog);
  }
}

const DEAD_END_TEXT = {
  stuck: ["end.stuck_title", "end.stuck_text"],
  stalemate: ["end.stuck_title", "end.stalemate_text"],
  lost: ["end.lost_title", "end.lost_text"],
};

/** Asks before giving a game up, naming it (`name`: which game, ranked or practice); resolves
 * true when the player confirms. Closed any other way (a new page, another game), it is a no. */
export function confirmGiveUp(name) {
  const dialog = document.getElementById("dlg-confirm");
  const text = document.getElementById("confirm-text");
  text.removeAttribute("data-i18n"); // worded here, for this game: a language change must not reword it
  text.textContent = t("play.give_up_confirm_named", { game: name });
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
    open(dialog);
    document.getElementById("confirm-yes").focus();
  });
}

/** The end of a game (won) or a dead end (stalemate, stuck, lost). */
export class EndDialog {
  constructor({ onChoice }) {
    this.dialog = document.getElementById("dlg-end");
    this.gameId = null; // the game it was opened for: its choices act on that game only
    this.dialog.addEventListener("close", () => onChoice(this.dialog.returnValue, this.gameId));
  }

  show({ state, kind, rankText, canBoard, gameId }) {
    this.gameId = gameId || null;
    const won = kind === "won";
    const [titleKey, textKey] = won ? ["end.won", "end.won_text"] : DEAD_END_TEXT[kind] || DEAD_END_TEXT.stalemate;
    const title = t(titleKey);
    const text = t(textKey, { count: state.progress_total });
    this.dialog.dataset.kind = kind;
    document.getElementById("dlg-end-title").textContent = title;
    document.getElementById("end-text").textContent = text;
    const stats = document.getElementById("end-stats");
    stats.replaceChildren(
      ...[
        [t("info.score"), formatNumber(state.score)],
        [t("info.moves"), formatNumber(state.moves)],
        [t("info.time"), formatTime(state.elapsed_ms)],
        [t("info.cleared"), t("info.progress", { done: state.progress, total: state.progress_total })],
      ].map(([k, v]) => el("div", {}, el("dt", { text: k }), el("dd", { text: String(v) }))),
    );
    this.setRank(rankText || "");
    document.getElementById("end-undo").hidden = won;
    document.getElementById("end-resign").hidden = won;
    document.getElementById("end-close").hidden = won;
    document.getElementById("end-board").hidden = !canBoard;
    document.getElementById("end-solution").hidden = !won;
    this.dialog.returnValue = "";
    open(this.dialog);
    document.getElementById(won ? "end-new" : "end-undo").focus();
  }

  setRank(text) {
    document.getElementById("end-rank").textContent = text;
  }

  close() {
    if (this.dialog.open) this.dialog.close("dismiss");
  }
}
