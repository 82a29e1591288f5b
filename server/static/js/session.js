// The game on screen: its state, the actions waiting to be sent, and resuming after a reconnect.
//
// Actions are sent one at a time, each carrying the state's `seq`. An action in flight when the
// connection drops is sent again with the same `seq` after reconnecting: the server answers a
// duplicate with the same result and never applies it twice (docs/protocol.md, Acting).
//
// Events: "state" {state, info, role, cause}, "outcome" {action, outcome}, "refused" {error, action}.
// onState(cb) listens to "state" and tells a listener that comes later the game on screen now
// (as cause "open": the game as it is when it opens).

import { RequestError } from "./net.js";

export class GameSession extends EventTarget {
  constructor(net) {
    super();
    this.net = net;
    this.info = null;
    this.state = null;
    this.role = null;
    this.queue = [];
    this.inflight = null;
    net.addEventListener("ready", () => this.resume());
    net.addEventListener("push", (ev) => this.onPush(ev.detail));
  }

  get gameId() {
    return this.info ? this.info.id : null;
  }

  /** `callback(detail)` on every "state" from now on, and at once for the game on screen. */
  onState(callback) {
    this.addEventListener("state", (ev) => callback(ev.detail));
    if (this.state) callback({ state: this.state, info: this.info, role: this.role, cause: "open" });
  }

  get isOwner() {
    return this.role === "owner";
  }

  /** Start a game: {code}, {game, variant} or {daily}. Resolves with the `game` reply. */
  async start(fields) {
    await this.net.whenReady();
    const reply = await this.net.request("new_game", fields);
    this.reset();
    this.adoptGame(reply, "new");
    return reply;
  }

  /** Open a game by id: the owner gets control, anyone else the spectator view. */
  async open(gameId) {
    await this.net.whenReady();
    const previous = this.gameId;
    const reply = await this.net.request("open_game", { game_id: gameId });
    if (previous && previous !== gameId) this.unwatch(previous);
    if (previous !== gameId) this.reset();
    else if (this.state && reply.state.seq < this.state.seq) return reply; // ours is newer
    this.adoptGame(reply, previous === gameId ? "reopen" : "open");
    return reply;
  }

  /** Take over a game this connection was handed (a race start): same as opening it. */
  adopt(reply) {
    if (this.gameId && this.gameId !== reply.game.id) this.unwatch(this.gameId);
    this.reset();
    this.adoptGame(reply, "new");
  }

  /** Give the game up (counted on the leaderboard as resigned). */
  async resign(gameId = this.gameId) {
    if (!this.isOwner || gameId !== this.gameId) return null; // only the game on screen, as asked
    this.dropQueue();
    const reply = await this.net.request("resign", { game_id: gameId });
    if (this.gameId === gameId) {
      this.info = reply.game;
      this.setState(reply.state, "update");
    }
    return reply;
  }

  close() {
    if (this.gameId) this.unwatch(this.gameId);
    this.reset();
    this.info = null;
    this.state = null;
    this.role = null;
  }

  unwatch(gameId) {
    this.net.request("unwatch", { game_id: gameId }).catch(() => {});
  }

  reset() {
    this.queue = [];
    this.inflight = null;
  }

  adoptGame(reply, cause) {
    this.info = reply.game;
    this.role = reply.role;
    this.setState(reply.state, cause);
  }

  setState(state, cause) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: { state, info: this.info, role: this.role, cause } }));
  }

  /** Queue one action; resolves with the result, or null when refused or dropped. */
  act(action) {
    if (!this.isOwner || !this.state) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.queue.push({ action, resolve });
      this.pump();
    });
  }

  get busy() {
    return this.inflight !== null || this.queue.length > 0;
  }

  pump() {
    if (this.inflight || !this.queue.length || !this.net.ready) return;
    const item = this.queue.shift();
    this.inflight = { ...item, seq: this.state.seq, gameId: this.gameId };
    this.send();
  }

  async send() {
    const flight = this.inflight;
    try {
      const reply = await this.net.request("act", { game_id: flight.gameId, seq: flight.seq, action: flight.action });
      this.finish(flight, reply);
    } catch (error) {
      this.fail(flight, error);
    }
  }

  finish(flight, reply) {
    if (flight !== this.inflight) return;
    this.inflight = null;
    if (this.state && reply.state.seq >= this.state.seq) this.setState(reply.state, "result");
    this.dispatchEvent(new CustomEvent("outcome", { detail: { action: flight.action, outcome: reply.outcome } }));
    flight.resolve(reply);
    this.pump();
  }

  fail(flight, error) {
    if (flight !== this.inflight) return;
    if (error instanceof RequestError && error.code === "disconnected") return; // resent on resume
    if (error instanceof RequestError && error.code === "rate_limited") {
      setTimeout(() => flight === this.inflight && this.net.ready && this.send(), 250); // dropped unread: again
      return;
    }
    this.inflight = null;
    const reply = error.reply || { code: "internal", message: String(error) };
    if (reply.code === "stale" && reply.state) {
      this.dropQueue();
      this.setState(reply.state, "stale");
    } else {
      this.dispatchEvent(new CustomEvent("refused", { detail: { error: reply, action: flight.action } }));
    }
    flight.resolve(null);
    this.pump();
  }

  dropQueue() {
    for (const item of this.queue) item.resolve(null);
    this.queue = [];
  }

  /** After a reconnect: fetch the game's state again, then resend what was in flight. */
  async resume() {
    const gameId = this.gameId;
    if (!gameId) return;
    try {
      const reply = await this.net.request("open_game", { game_id: gameId });
      if (this.gameId !== gameId) return;
      this.adoptGame(reply, "resume");
    } catch (error) {
      if (error.code === "not_found" && this.gameId === gameId) {
        this.close(); // the server no longer has it (a new database)
        this.dispatchEvent(new CustomEvent("lost", { detail: { gameId } }));
      }
      return; // otherwise the connection dropped again; the next "ready" retries
    }
    if (this.inflight) this.send();
    else this.pump();
  }

  onPush(message) {
    if (!this.info) return;
    if (message.type === "update" && message.game_id === this.gameId) {
      // Our own result is coming, or this position is shown already (an update sent again).
      if (this.inflight || message.state.seq <= this.state.seq) return;
      this.setState(message.state, "update");
      this.dispatchEvent(new CustomEvent("outcome", { detail: { action: message.action, outcome: message.outcome, pushed: true } }));
    } else if ((message.type === "game" || message.type === "finished") && message.game?.id === this.gameId) {
      this.info = message.game;
      this.setState(message.state, "update");
    } else if (message.type === "status" && message.game?.id === this.gameId) {
      // A new verdict on the same position (a proven dead end, `lost`): the position it was
      // computed for must still be the one on screen, else the next result says more.
      if (this.inflight || !this.state || message.state.seq !== this.state.seq) return;
      this.info = message.game;
      this.setState(message.state, "status");
    }
  }
}
