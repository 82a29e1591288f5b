// The address's fragment says what to show: #code=SH1-C4-AAAAAJ2 deals a code, #game=g_… opens
// (or watches) a game, #daily=SH1-C2 plays today's daily, #board=CODE shows a leaderboard,
// #race=r_… a race, #leaderboards and #races the lists, #profile (or #profile=p_…) a player's
// home, #replay=g_…&move=37 a finished game watched again at a move.

export function parseHash(hash = location.hash) {
  const text = hash.replace(/^#/, "");
  if (!text) return { view: "play" };
  const params = new URLSearchParams(text);
  for (const key of ["code", "game", "daily", "board", "race", "watch", "replay", "profile"]) {
    if (params.has(key)) return { view: key, value: params.get(key).trim() };
  }
  if (["leaderboards", "races", "play", "profile"].includes(text)) return { view: text };
  return { view: "play" };
}

export function linkTo(key, value) {
  const url = new URL(location.href);
  url.hash = value === undefined ? key : `${key}=${encodeURIComponent(value).replace(/%2D/gi, "-")}`;
  return url.toString();
}

/** Change the fragment without treating it as a navigation (no hashchange handling). */
export function replaceHash(key, value) {
  const hash = value === undefined ? `#${key}` : `#${key}=${value}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}
