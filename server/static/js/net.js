// One WebSocket speaking protocol 1 (docs/protocol.md), reconnecting on its own.
//
// Events (EventTarget):
//   "status"  detail {state: "connecting" | "online" | "offline", attempt}
//   "ready"   detail {player, hello, again}   after every successful auth
//             (onReady(cb) also tells a listener that comes later that the connection is
//             ready now: readyInfo is that detail while it is, null otherwise)
//   "push"    detail message                  anything without an id we asked for
//   "fatal"   detail {code, message}          a close we must not retry (FATAL_CLOSES)
//
// The protocol version and the close codes are the server's own (facts.js).

import { CLOSE, PROTOCOL } from "./facts.js";

const BACKOFF_MS = [200, 400, 800, 1500, 2500, 4000];
const PING_EVERY_MS = 12000;
const PONG_WITHIN_MS = 6000;
const FATAL_CLOSES = new Set([CLOSE.BAD_VERSION, CLOSE.AUTH, CLOSE.ORIGIN]);

export class RequestError extends Error {
  constructor(message) {
    super(message.message || message.code);
    this.code = message.code;
    this.reply = message;
  }
}

export class Net extends EventTarget {
  constructor({ url, token }) {
    super();
    this.url = url;
    this.token = token;
    this.ws = null;
    this.ready = false;
    this.readyInfo = null; // the last "ready" event's detail, while the connection is ready and told so
    this.state = "connecting";
    this.attempt = 0;
    this.nextId = 1;
    this.pending = new Map();
    this.hello = null;
    this.player = null;
    this.everReady = false;
    this.stopped = false;
    this.retryTimer = null;
    this.pingTimer = null;
    this.authError = null;
    this.holding = false; // preconnect(): events are kept until start()
    this.held = [];
    window.addEventListener("online", () => this.onOnline());
    window.addEventListener("offline", () => this.setState("offline"));
  }

  /** Back online: check that the socket survived (a ping), or connect again at once. */
  onOnline() {
    if (this.ready) {
      this.setState("online");
      this.checkAlive();
    } else {
      this.attempt = 0;
      this.reconnectSoon(0);
    }
  }

  /** Connect and authenticate now, before the page listens: the handshake's round trips
   * overlap the boot's own work. What happens meanwhile is told at start(), in order. */
  preconnect() {
    this.holding = true;
    this.stopped = false;
    this.open();
  }

  start() {
    if (this.holding) {
      this.holding = false;
      for (const event of this.held.splice(0)) this.dispatchEvent(event);
      return;
    }
    this.stopped = false;
    this.open();
  }

  emit(type, detail) {
    const event = new CustomEvent(type, { detail });
    if (this.holding) this.held.push(event);
    else this.dispatchEvent(event);
  }

  dispatchEvent(event) {
    if (event.type === "ready") this.readyInfo = this.ready ? event.detail : null; // told now: a late listener catches up
    return super.dispatchEvent(event);
  }

  /** `callback(detail)` on every "ready" from now on, and at once when the connection is ready
   * already (a module loaded after the handshake behaves as one loaded before it). */
  onReady(callback) {
    this.addEventListener("ready", (ev) => callback(ev.detail));
    if (this.readyInfo) callback(this.readyInfo);
  }

  /** Close and reconnect at once (for example after a rename or a new token). */
  restart(token = this.token) {
    this.token = token;
    this.drop(1000, "restart");
    this.reconnectSoon(0);
  }

  open() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.setState("connecting");
    const early = takeEarlySocket(this.url, this.token);
    if (early) {
      this.adopt(early);
      return;
    }
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    // auth goes at once, not after hello: the server reads it once it has said hello, and a
    // busy page (its own start) would otherwise hold it back a while longer.
    ws.onopen = () => this.sendRaw({ type: "auth", id: "auth", protocol: PROTOCOL, ...(this.token ? { token: this.token } : {}) });
    ws.onmessage = (ev) => this.onFrame(ws, ev.data);
    ws.onclose = (ev) => this.onClose(ws, ev);
    ws.onerror = () => {};
  }

  /** The socket the page's head opened (inline/early.js), its auth sent or to be sent on
   * open: from now on this connection's, what it received meanwhile read first. */
  adopt(early) {
    const ws = early.ws;
    this.ws = ws;
    ws.onmessage = (ev) => this.onFrame(ws, ev.data);
    ws.onclose = (ev) => this.onClose(ws, ev);
    ws.onerror = () => {};
    for (const data of early.frames.splice(0)) this.onFrame(ws, data);
  }

  onFrame(ws, data) {
    if (ws !== this.ws) return;
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (message.type === "hello") {
      this.hello = message;
      return;
    }
    if (message.id === "auth") {
      this.onAuth(message);
      return;
    }
    if (message.id !== undefined && this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.type === "error") reject(new RequestError(message));
      else resolve(message);
      return;
    }
    if (message.type === "pong") return;
    this.emit("push", message);
  }

  onAuth(message) {
    if (message.type !== "welcome") {
      this.authError = message; // the server closes the socket next; onClose reports it
      return;
    }
    this.player = message.player;
    this.ready = true;
    this.attempt = 0;
    this.setState("online");
    this.startPings();
    const again = this.everReady;
    this.everReady = true;
    this.emit("ready", { player: this.player, hello: this.hello, again });
  }

  onClose(ws, ev) {
    if (ws !== this.ws) return;
    this.ws = null;
    this.ready = false;
    this.readyInfo = null;
    this.stopPings();
    this.failPending();
    if (FATAL_CLOSES.has(ev.code)) {
      const error = this.authError || { code: ev.code, message: ev.reason };
      this.authError = null;
      this.setState("offline");
      this.emit("fatal", { code: error.code, message: error.message });
      return;
    }
    this.scheduleRetry();
  }

  failPending() {
    for (const { reject } of this.pending.values()) {
      reject(new RequestError({ code: "disconnected", message: "The connection was lost" }));
    }
    this.pending.clear();
  }

  scheduleRetry() {
    if (this.stopped) return;
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.setState(navigator.onLine === false ? "offline" : "connecting");
    this.reconnectSoon(base + Math.random() * base * 0.3);
  }

  reconnectSoon(delayMs) {
    if (this.stopped || this.ws) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), delayMs);
  }

  drop(code = 1000, reason = "") {
    const ws = this.ws;
    if (!ws) return;
    this.ws = null;
    this.ready = false;
    this.readyInfo = null;
    this.stopPings();
    this.failPending();
    try {
      ws.close(code, reason);
    } catch {
      /* already closed */
    }
  }

  startPings() {
    this.stopPings();
    this.pingTimer = setInterval(() => this.checkAlive(), PING_EVERY_MS);
  }

  stopPings() {
    clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  /** A connection that does not answer a ping in time is dead: drop it and reconnect. */
  async checkAlive() {
    if (!this.ready) return;
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), PONG_WITHIN_MS));
    try {
      await Promise.race([this.request("ping"), timeout]);
    } catch {
      this.drop(4000, "no pong");
      this.scheduleRetry();
    }
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.emit("status", { state, attempt: this.attempt });
  }

  sendRaw(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  /** Send a request; resolves with the reply, rejects with a RequestError (code "disconnected" offline). */
  request(type, fields = {}) {
    if (!this.ready) {
      return Promise.reject(new RequestError({ code: "disconnected", message: "Not connected" }));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.sendRaw({ type, id, ...fields });
    });
  }

  /** Resolves once the connection is (again) authenticated. */
  whenReady() {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve) => this.addEventListener("ready", () => resolve(), { once: true }));
  }
}

/** The socket inline/early.js opened, once, when it is this url's and token's and still open
 * (or opening); any other is closed, and the caller opens its own. */
function takeEarlySocket(url, token) {
  const early = window.solitaireEarlySocket;
  window.solitaireEarlySocket = undefined;
  if (!early) return null;
  const same = early.ws.url === new URL(url).href && early.token === token;
  if (same && !early.closed && early.ws.readyState <= WebSocket.OPEN) return early;
  early.ws.close(1000, "not used");
  return null;
}

export function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}
