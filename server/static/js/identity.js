// The player's identity: created once over HTTP, kept in localStorage.

const KEY = "solitaire.player";

export function storedPlayer() {
  try {
    const player = JSON.parse(localStorage.getItem(KEY) || "null");
    return player && typeof player.token === "string" ? player : null;
  } catch {
    return null;
  }
}

function store(player) {
  localStorage.setItem(KEY, JSON.stringify(player));
}

export async function api(method, path, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error((data && data.error && data.error.message) || `HTTP ${response.status}`);
    error.status = response.status;
    error.code = data && data.error && data.error.code;
    error.reply = (data && data.error) || null;
    throw error;
  }
  return data;
}

/** The stored player, or a new guest player created on the server (first visit). */
export async function ensurePlayer() {
  const known = storedPlayer();
  if (known) return known;
  return createPlayer();
}

export async function createPlayer() {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const created = await api("POST", "/api/players", {});
      const player = { id: created.id, name: created.name, token: created.token };
      store(player);
      return player;
    } catch (error) {
      if (attempt >= 30) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 300 * (attempt + 1))));
    }
  }
}

/** Keep a player this browser now is (a log-in's new token for the account's player). */
export function keepPlayer(player) {
  const kept = { id: player.id, name: player.name, token: player.token };
  store(kept);
  return kept;
}

export function forgetPlayer() {
  localStorage.removeItem(KEY);
}

export async function rename(player, name) {
  const renamed = await api("PATCH", "/api/players/me", { name }, player.token);
  const updated = { ...player, name: renamed.name };
  store(updated);
  return updated;
}

export function rememberName(player, name) {
  if (player.name === name) return player;
  const updated = { ...player, name };
  store(updated);
  return updated;
}
