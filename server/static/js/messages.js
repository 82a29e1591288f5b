// The server's refusals and errors in the player's language: from their stable codes and
// parameters (docs/protocol.md, Errors; docs/games.md, Refusals), never from the English message.

import { cardName, sentence, suitName } from "./cards.js";
import { has, t } from "./i18n.js";

/** A location (`col:3`, `cell:1`, `found:H`, `heart:7`, `waste`, `stock`) in words. */
export function placeName(loc) {
  const [kind, n] = String(loc).split(":");
  if (kind === "col") return t("place.col", { n: Number(n) });
  if (kind === "cell") return t("place.cell", { n: Number(n) });
  if (kind === "heart") return t("place.heart", { n: Number(n) });
  if (kind === "waste") return t("place.waste");
  if (kind === "stock") return t("place.stock");
  return n ? t("place.found_suit", { suit: suitName(n) }) : t("place.found");
}

// Refusals whose text needs params; without them (an older server) the _plain text is used.
const NEEDS = {
  not_free: ["card"],
  rank_mismatch: ["first", "second"],
  wrong_suit_or_rank: ["card", "target"],
  foundation_order: ["card", "need"],
  no_target: ["card"],
  pointless: ["card"],
  wrong_foundation: ["suit"],
  too_many_cards: ["count"],
};

/** An `illegal_action` refusal (`rule`, `params`) as a sentence for the player. */
export function refusalText(rule, params = {}) {
  const need = NEEDS[rule] || [];
  if (!has(`refusal.${rule}`)) return t("error.illegal_action");
  if (need.some((name) => params[name] === undefined || params[name] === null)) {
    return has(`refusal.${rule}_plain`) ? t(`refusal.${rule}_plain`) : t("error.illegal_action");
  }
  const words = { count: params.count };
  for (const name of ["card", "first", "second", "need", "target"]) {
    if (params[name]) words[name] = cardName(params[name]);
  }
  if (params.target) words.target_onto = cardName(params.target, { onto: true });
  if (params.suit) words.suit = suitName(params.suit);
  if (params.at) words.at = placeName(params.at);
  return sentence(t(`refusal.${rule}`, words));
}

/** Any error reply from the server (or a RequestError) in words; never the server's English. */
export function errorText(error, fallbackKey = "error.generic") {
  if (!error) return t(fallbackKey);
  const code = error.code || (error.reply && error.reply.code);
  const reply = error.reply || error;
  if (code === "illegal_action") return refusalText(reply.rule, reply.params || {});
  if (code && has(`error.${code}`)) return t(`error.${code}`);
  return t(fallbackKey);
}

/** How many characters a reader counts in `text` (grapheme clusters, as the server counts). */
export function graphemeCount(text) {
  if (typeof Intl !== "undefined" && Intl.Segmenter) return [...new Intl.Segmenter().segment(text)].length;
  return [...text].length;
}

/** A `bad_message` refusal naming a form's field (the reply's `field`) in words: which rule the
 * value sent breaks, by the rules the server applies (docs/accounts.md), since the reply's own
 * explanation is English. `values`: the form's values by field; `limits`: {field: {min, max}}.
 * Null for any other error. */
export function fieldText(error, values, limits) {
  const reply = error && (error.reply || error);
  const code = error && (error.code || (reply && reply.code));
  if (code !== "bad_message" || !reply || !reply.field) return null;
  const field = reply.field;
  const value = String(values[field] ?? "");
  if (field === "password" || field === "new_password") {
    const { min, max } = limits.password;
    const length = [...value].length;
    if (length < min || length > max) return t("error.field.password_length", { min, max });
    if (new Set(value).size < 3) return t("error.field.password_variety");
    const user = String(values.username || "").toLocaleLowerCase();
    if (user && value.toLocaleLowerCase().includes(user)) return t("error.field.password_username");
    return t("error.field.password_common");
  }
  if ((field === "username" || field === "name") && limits[field]) {
    const { min, max } = limits[field];
    const count = graphemeCount(value.trim());
    if (count < min || count > max) return t("error.field.name_length", { min, max });
    return t("error.field.name_taken");
  }
  return null;
}
