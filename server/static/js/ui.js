// Small shared pieces of the page: the toast, the status line, the connection indicator.

import { t } from "./i18n.js";

let toastTimer = null;
let toastWired = false;

/** A short message (move errors, copy confirmations): it goes away on its own, on its close
 * button, and when the page changes (showView calls hideToast), so it never outlives its page. */
export function toast(message, { kind = "info", ms } = {}) {
  const box = document.getElementById("toast");
  if (!toastWired) {
    document.getElementById("toast-close").addEventListener("click", () => hideToast());
    toastWired = true;
  }
  document.getElementById("toast-text").textContent = message;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => hideToast(), ms || (kind === "error" ? 6000 : 3500));
}

/** Take the toast away; with `kind`, only a toast of that kind (a game's refusal, say). */
export function hideToast(kind = null) {
  const box = document.getElementById("toast");
  if (kind && box.dataset.kind !== kind) return;
  clearTimeout(toastTimer);
  box.hidden = true;
}

/** A polite announcement for screen readers (and a visible hint line). */
export function say(message) {
  const el = document.getElementById("status-line");
  el.textContent = message ? message[0].toLocaleUpperCase() + message.slice(1) : message; // a sentence
}

const CONN_TEXT = {
  connecting: "conn.connecting",
  online: "conn.online",
  offline: "conn.offline",
  reconnecting: "conn.reconnecting",
  failed: "conn.failed",
};

export function showConnection(state) {
  const node = document.getElementById("conn");
  node.dataset.state = state;
  node.dataset.i18n = CONN_TEXT[state] || "conn.failed";
  node.textContent = t(node.dataset.i18n);
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "style") Object.assign(node.style, value); // CSSOM: a style attribute breaks the CSP
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A table that may scroll sideways on a narrow screen: a region named by its heading, which
 * the keyboard can reach and scroll (a scrollable box nothing in it can focus is unreachable). */
export function scrollingTable(table, labelledBy) {
  return el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-labelledby": labelledBy }, table);
}

/** Attributes of an element whose text is the catalog's `key` (translated again on a switch). */
export function textOf(key) {
  return { "data-i18n": key, text: t(key) };
}

/** Attributes of an element whose aria-label is the catalog's `key`. */
export function labelOf(key) {
  return { "data-i18n-label": key, "aria-label": t(key) };
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = el("textarea", { class: "offscreen" });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}
