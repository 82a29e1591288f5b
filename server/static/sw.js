// The service worker: the browser client's own files (the page, its scripts, styles, catalogs
// and icons) kept in a cache, so a second visit opens at once, even before the network answers.
// Each file is served from the cache and fetched again in the background (stale while
// revalidate): a new version of the client shows on the visit after it was published. Nothing
// else is cached: the API, the WebSocket and every other address always go to the server, so
// play still needs it.

const CACHE = "solitaire-client-v1";
const FILES = [
  "./",
  "index.html",
  "app.css",
  "icon.svg",
  "manifest.webmanifest",
  "icons/icon-192.png",
  "icons/icon-512.png",
  "icons/icon-maskable-512.png",
  "i18n/en.json",
  "i18n/hu.json",
  "i18n/ro.json",
  "js/account.js",
  "js/animate.js",
  "js/cards.js",
  "js/charts.js",
  "js/codes.js",
  "js/competition.js",
  "js/dailies.js",
  "js/dailycontext.js",
  "js/dialogs.js",
  "js/drag.js",
  // written by the server at start (server/edge/facts.py), not a file of this folder
  "js/facts.js",
  "js/hearts.js",
  "js/home.js",
  "js/i18n.js",
  "js/identity.js",
  "js/infobar.js",
  "js/keys.js",
  "js/leaderboard.js",
  "js/main.js",
  "js/messages.js",
  "js/net.js",
  "js/play.js",
  "js/profile.js",
  "js/races.js",
  "js/replay.js",
  "js/router.js",
  "js/seahaven.js",
  "js/session.js",
  "js/settings.js",
  "js/solution.js",
  "js/sound.js",
  "js/ui.js",
];
const OWN = new Set(FILES.map((file) => new URL(file, self.registration.scope).pathname));

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(FILES))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin || !OWN.has(url.pathname)) return;
  event.respondWith(
    caches.open(CACHE).then(async (cache) => {
      const key = url.pathname; // the fragment and query never change the file
      const cached = await cache.match(key);
      const fresh = fetch(request)
        .then((response) => {
          if (response.ok) cache.put(key, response.clone());
          return response;
        })
        .catch(() => cached);
      if (cached) {
        event.waitUntil(fresh.then(() => undefined));
        return cached;
      }
      return fresh;
    }),
  );
});
