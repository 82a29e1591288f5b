// The client's languages: English, Hungarian (magyar) and Romanian (română).
//
// API (stable; pages and features build on it):
//   await initI18n()            load the catalog of the player's language; call once before drawing
//   t(key, params)              the text for `key` in the current language, `{name}` replaced by
//                               params.name (numbers formatted with Intl.NumberFormat); a plural
//                               entry ({"one": "…", "other": "…"}, Intl.PluralRules categories)
//                               picks its form by params.count
//   has(key)                    whether the catalog has `key` (for codes from the server)
//   currentLang()               "en" | "hu" | "ro"
//   LANGUAGES                   [{code, name}] in each language's own name, for a picker
//   setLanguage(code)           switch (remembered in localStorage), re-translate the page and
//                               fire "change" on `i18nEvents`; resolves when the catalog is in
//   i18nEvents                  EventTarget: "change" after every switch (re-render your texts)
//   translatePage(root)         fill elements marked with data-i18n=KEY (text content),
//                               data-i18n-label / -placeholder / -title (those attributes)
//   formatNumber(n, options)    Intl.NumberFormat in the current language
//   formatDate(date, options)   Intl.DateTimeFormat in the current language
//   formatList(items)           "a, b and c" through Intl.ListFormat
//
// The language is the player's pick when there is one, else the first of the browser's
// languages that the client speaks, else English; <html lang> always follows it. Catalogs live in
// ../i18n/<code>.json, all with the same keys (a test checks it); English fills any gap at run time.

export const LANGUAGES = [
  { code: "en", name: "English" },
  { code: "hu", name: "magyar" },
  { code: "ro", name: "română" },
];
const CODES = LANGUAGES.map((l) => l.code);
const FALLBACK = "en";
const STORE_KEY = "solitaire.lang";

export const i18nEvents = new EventTarget();

let lang = FALLBACK;
let catalog = {};
let fallback = {};
let plurals = new Intl.PluralRules(FALLBACK);
let numbers = new Intl.NumberFormat(FALLBACK);
const loaded = new Map();

/** The language to use: the remembered pick, else the browser's preference, else English. */
export function preferredLang() {
  let picked = null;
  try {
    picked = localStorage.getItem(STORE_KEY);
  } catch {
    picked = null;
  }
  if (picked && CODES.includes(picked)) return picked;
  for (const tag of navigator.languages || [navigator.language || ""]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (CODES.includes(base)) return base;
  }
  return FALLBACK;
}

async function loadCatalog(code) {
  if (loaded.has(code)) return loaded.get(code);
  const url = new URL(`../i18n/${code}.json`, import.meta.url);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`catalog ${code}: HTTP ${response.status}`);
  const body = await response.json();
  loaded.set(code, body);
  return body;
}

async function use(code) {
  const [main, base] = await Promise.all([
    loadCatalog(code),
    code === FALLBACK ? null : loadCatalog(FALLBACK).catch(() => ({})),
  ]);
  lang = code;
  catalog = main;
  fallback = base || main;
  plurals = new Intl.PluralRules(code);
  numbers = new Intl.NumberFormat(code);
  document.documentElement.lang = code;
}

/** Load the player's language (English when its catalog cannot be read). */
export async function initI18n() {
  const code = preferredLang();
  try {
    await use(code);
  } catch {
    await use(FALLBACK);
  }
  translatePage(document);
}

export function currentLang() {
  return lang;
}

/** Switch language and remember the pick; everything marked in the page is translated again. */
export async function setLanguage(code) {
  if (!CODES.includes(code)) throw new Error(`unknown language ${code}`);
  try {
    localStorage.setItem(STORE_KEY, code);
  } catch {
    // private mode: the pick lasts for this page only
  }
  if (code === lang && Object.keys(catalog).length) return;
  await use(code);
  translatePage(document);
  i18nEvents.dispatchEvent(new CustomEvent("change", { detail: { lang: code } }));
}

export function has(key) {
  return Object.hasOwn(catalog, key) || Object.hasOwn(fallback, key);
}

function entry(key) {
  if (Object.hasOwn(catalog, key)) return catalog[key];
  if (Object.hasOwn(fallback, key)) return fallback[key];
  return null;
}

/** The text for `key`; see the module's comment. An unknown key shows itself (never blank). */
export function t(key, params = {}) {
  let text = entry(key);
  if (text === null) return key;
  if (typeof text === "object") {
    const count = Number(params.count ?? 0);
    text = text[plurals.select(count)] ?? text.other ?? "";
  }
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!Object.hasOwn(params, name)) return whole;
    const value = params[name];
    return typeof value === "number" ? numbers.format(value) : String(value);
  });
}

export function formatNumber(n, options) {
  return options ? new Intl.NumberFormat(lang, options).format(n) : numbers.format(n);
}

export function formatDate(date, options = { dateStyle: "medium" }) {
  return new Intl.DateTimeFormat(lang, options).format(date instanceof Date ? date : new Date(date));
}

export function formatList(items, type = "conjunction") {
  return new Intl.ListFormat(lang, { style: "long", type }).format(items.map(String));
}

const ATTRIBUTES = [
  ["i18nLabel", "aria-label"],
  ["i18nPlaceholder", "placeholder"],
  ["i18nTitle", "title"],
];

/** Fill every marked element under `root` with the current language's text. */
export function translatePage(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const [data, attribute] of ATTRIBUTES) {
    const selector = `[data-${data.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}]`;
    for (const node of root.querySelectorAll(selector)) node.setAttribute(attribute, t(node.dataset[data]));
  }
}
