// Today's daily challenges (GET /api/daily) and the server's clock, for race countdowns.

import { formatDate } from "./i18n.js";
import { api } from "./identity.js";

export const FAMILIES = [
  { key: "HH1-N", label: "Heart to Heart" },
  { key: "SH1-C4", label: "Seahaven Easy" },
  { key: "SH1-C2", label: "Seahaven Medium" },
  { key: "SH1-C1", label: "Seahaven Hard" },
];

/** Today's daily codes, and the server's clock (for race countdowns). */
export class Dailies extends EventTarget {
  constructor() {
    super();
    this.codes = {};
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
    this.codes = body.codes || {};
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
    // A day's codes may be kept from the client until the day ends: then every family is there.
    const sealed = !Object.keys(this.codes).length && FAMILIES.some((f) => f.key === family);
    const code = this.codes[family] || null;
    if ((!code && !sealed) || !this.day) return null;
    return { code, label: formatDate(`${this.day}T12:00:00Z`, { dateStyle: "long", timeZone: "UTC" }) };
  }

  familyOf(code) {
    return Object.keys(this.codes).find((family) => this.codes[family] === code) || null;
  }
}
