// The player's home: the account (sign up, log in, log out), the profile page with statistics
// and history, the replay viewer and ghost races. Installed by main.js like the competition
// pages (after the first screen, or when a fragment asks for one of them): each page is an
// extension that answers its own fragments (#profile, #replay=…).

import { Account } from "./account.js";
import { ProfilePage } from "./profile.js";
import { GhostRaces, ReplayPage } from "./replay.js";

export function install(app) {
  const account = new Account(app);
  const ghosts = new GhostRaces(app);
  const profile = new ProfilePage(app, account);
  const replay = new ReplayPage(app, ghosts);
  app.extensions.push(account, profile, replay);
  app.account = account;
  app.ghosts = ghosts;
  return app;
}
