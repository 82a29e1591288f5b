// Competing: the leaderboards, races, a daily's line above the board and the rank on the win
// screen. Everything here speaks the public API: GET /api/leaderboards/…, and the WebSocket's
// subscribe_leaderboard and race_* requests. Today's dailies (GET /api/daily) are main.js's
// (app.dailies): the new game dialog offers them on the first screen.
//
// main.js loads this module after the first screen (or when a fragment asks for one of its
// pages): what it installs catches up with a connection and a game that are there already.

import { DailyContext } from "./dailycontext.js";
import { t } from "./i18n.js";
import { api } from "./identity.js";
import { heldForReview, LeaderboardPage } from "./leaderboard.js";
import { RacePages } from "./races.js";

/** The win screen's line: this result's rank on the code's leaderboard. */
export async function rankText(app, info) {
  const me = app.player.id;
  // A daily's board is reached by day and family: its code is sealed until the day ends.
  const path = info.code
    ? `/api/leaderboards/${encodeURIComponent(info.code)}`
    : `/api/daily/${info.daily}/${encodeURIComponent(info.family)}/leaderboard`;
  let body;
  try {
    body = await api("GET", `${path}/players/${me}?radius=0`);
  } catch (error) {
    if (await heldForReview(path, me)) return t("rank.held"); // a flagged result: not ranked yet
    throw error;
  }
  const where = info.daily ? t("rank.daily") : t("rank.board", { code: info.code });
  if (!info.ranked) return t("rank.practice", { rank: body.rank, where });
  if (body.entry.game_id !== info.id) return t("rank.stays", { rank: body.rank, where });
  return t("rank.is", { rank: body.rank, where });
}

export function install(app) {
  const dailies = app.dailies;
  const boards = new LeaderboardPage(app, dailies);
  const races = new RacePages(app, dailies);
  app.extensions.push(boards, races);
  app.races = races;
  app.dailyContext = new DailyContext(app, dailies);
  return app;
}
