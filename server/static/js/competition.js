// Competing: leaderboards, races and daily challenges (filled in as the server's API lands).

export function install(app) {
  return app;
}
