// Card text ("TH" = ten of hearts) to names, symbols and DOM elements.

import { t } from "./i18n.js";

const RANK_SHORT = { T: "10" };
const LETTERED = new Set(["A", "J", "Q", "K"]);
export const SUITS = {
  S: { name: "spades", symbol: "♠", color: "black" },
  H: { name: "hearts", symbol: "♥", color: "red" },
  D: { name: "diamonds", symbol: "♦", color: "red" },
  C: { name: "clubs", symbol: "♣", color: "black" },
};
export const RANK_ORDER = "A23456789TJQK";

export function rankOf(card) {
  return card[0];
}

export function suitOf(card) {
  return card[1];
}

export function rankValue(card) {
  return RANK_ORDER.indexOf(card[0]) + 1;
}

/** The card in words, in the page's language ("king of diamonds", "káró király", "regele de romb").
 * `onto` gives the form a sentence needs after "onto" where the language inflects it. */
export function cardName(card, { onto = false } = {}) {
  const rank = t(onto ? `rank_onto.${card[0]}` : `rank.${card[0]}`);
  return t("card.name", { rank, suit: suitName(card[1]) });
}

/** A suit's name in the page's language ("clubs", "treff", "treflă"). */
export function suitName(suit) {
  return t(`suit.${suit}`);
}

/** A sentence's first letter in capitals (a card name may open it in some languages). */
export function sentence(text) {
  return text ? text[0].toLocaleUpperCase() + text.slice(1) : text;
}

// Whether the court cards and the ace keep the letters J Q K A in every language (a setting,
// read when a face is drawn: appearance.js gives the source).
let classicLetters = () => false;

export function useClassicLetters(source) {
  classicLetters = source;
}

/** The rank as a card's corner shows it: 2 to 10, and the ace and the court cards by the
 * letters of the page's language (Á B D K in Hungarian, A V D R in Romanian), or A J Q K. */
export function rankText(card) {
  const rank = card[0];
  if (LETTERED.has(rank) && !classicLetters()) return t(`face.${rank}`);
  return RANK_SHORT[rank] || rank;
}

/** The card's face as it shows in its corner ("K♥", "10♦"): a card's accessible name opens with
 * it, so that a speech user can say what they see (WCAG 2.5.3, label in name). */
export function faceText(card) {
  return `${rankText(card)}${SUITS[card[1]].symbol}`;
}

/** A card's accessible name: its face, then its name in words and what else is said of it. */
export function cardLabel(card, ...rest) {
  return [faceText(card), cardName(card), ...rest].filter(Boolean).join(", ");
}

/** A card button. `key` keeps focus on the same place across re-renders. */
export function makeCard(loc, key) {
  const el = document.createElement("button");
  el.type = "button";
  el.className = "card";
  el.dataset.loc = loc;
  el.dataset.focusKey = key || loc;
  el.innerHTML = '<span class="corner" aria-hidden="true"></span><span class="pip" aria-hidden="true"></span>' +
    '<span class="corner low" aria-hidden="true"></span>';
  return el;
}

/** Show a face (or nothing: `card` null) on a card element. */
export function setFace(el, card) {
  if (el.dataset.card === (card || "") && (!card || el.dataset.face === faceText(card))) return; // the language or the letters may change
  el.dataset.card = card || "";
  el.classList.toggle("empty", !card);
  if (!card) {
    el.children[0].textContent = "";
    delete el.dataset.face;
    delete el.dataset.suit;
    delete el.dataset.color;
    return;
  }
  const suit = SUITS[card[1]];
  el.dataset.suit = card[1];
  el.dataset.color = suit.color;
  // The corner is the card's one text; the pip and the lower corner repeat it from CSS (the
  // card's data-face and data-symbol), so the text an assistive tool sees is that of the corner.
  el.children[0].textContent = faceText(card);
  el.dataset.face = faceText(card);
  el.dataset.symbol = suit.symbol;
}

export function setBack(el, on) {
  el.classList.toggle("back", on);
}
