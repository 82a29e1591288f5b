// Competing: today's dailies, the leaderboards, races, and the rank on the win screen.
// Everything here speaks the public API: GET /api/daily, /api/leaderboards/…, and the
// WebSocket's subscribe_leaderboard and race_* requests.

import { DailyContext } from "./dailycontext.js";
import { Dailies } from "./dailies.js";
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
  const dailies = new Dailies();
  const boards = new LeaderboardPage(app, dailies);
  const races = new RacePages(app, dailies);
  app.extensions.push(boards, races);
  app.play.rankFor = (info) => rankText(app, info);
  dailies.addEventListener("change", () => app.newGame.sync());
  dailies.load().catch(() => {});
  app.races = races;
  app.dailyContext = new DailyContext(app, dailies);
  return app;
}
