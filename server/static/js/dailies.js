// Today's daily challenges (GET /api/daily) and the server's clock, for race countdowns.

import { CODE_FAMILY, DAY } from "./facts.js";
import { formatDate, t } from "./i18n.js";
import { api } from "./identity.js";

const inner = (pattern) => pattern.replace(/^\^/, "").replace(/\$$/, "");
// DAY/FAMILY, from the schema's two patterns; a family in any case, as a player may type it.
const DAILY_KEY = new RegExp(`^(${inner(DAY)})/(${inner(CODE_FAMILY)})$`, "i");

/** A daily challenge's board key: DAY/FAMILY (its code is sealed until the day ends). */
export function dailyKey(day, family) {
  return `${day}/${family}`;
}

/** DAY/FAMILY back into its parts, or null for a code. */
export function parseDailyKey(key) {
  const match = DAILY_KEY.exec(key || "");
  return match ? { day: match[1], family: match[2].toUpperCase() } : null;
}

/** A game as people name it: its code, or for a daily's game (sealed) its family and day. */
export function gameName(info) {
  if (!info) return "";
  if (info.code) return info.code;
  const family = info.family || `${info.game}1-${info.variant}`; // a state names its family by game and variant
  return t("info.daily_code", { family: t(`family.${family}`) });
}

/** The board a game counts on: its code's, or its daily's (DAY/FAMILY). */
export function boardOf(info) {
  return info.code || dailyKey(info.daily, info.family);
}

/** Today's daily challenges (sealed: commitments, no codes), and the server's clock. */
export class Dailies extends EventTarget {
  constructor() {
    super();
    this.challenges = {};
    this.day = null;
    this.endsAt = null;
    this.offsetMs = 0;
    this.timer = null;
  }

  async load() {
    const sent = Date.now();
    const body = await api("GET", "/api/daily");
    const back = Date.now();
    this.offsetMs = body.now - (sent + back) / 2;
    this.challenges = body.challenges || {};
    this.day = body.day;
    this.endsAt = body.ends_at;
    clearTimeout(this.timer);
    const untilReset = Math.max(1000, body.ends_at - body.now + 1500);
    this.timer = setTimeout(() => this.load().catch(() => {}), Math.min(untilReset, 2 ** 31 - 1));
    this.dispatchEvent(new Event("change"));
    return this;
  }

  serverNow() {
    return Date.now() + this.offsetMs;
  }

  dailyFor(family) {
    if (!this.challenges[family]) return null;
    const label = formatDate(`${this.day}T12:00:00Z`, { dateStyle: "long", timeZone: "UTC" });
    return { key: dailyKey(this.day, family), label };
  }

  /** Today's board key of a family (DAY/FAMILY), or null before the challenges are loaded. */
  keyOf(family) {
    return this.challenges[family] ? dailyKey(this.day, family) : null;
  }
}
