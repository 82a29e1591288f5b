// The service worker: the browser client's own files (the page, its scripts, styles, catalogs
// and icons) kept in a cache, so a second visit opens at once, even before the network answers.
// The page and its icons are served from the cache and fetched again in the background (stale
// while revalidate): a new version of the client shows on the visit after it was published. Nothing
// else is cached: the API, the WebSocket and every other address always go to the server, so
// play still needs it.

const CACHE = "solitaire-client-v1"; // the server names it after the build it serves
const FILES = [
  "./",
  "index.html",
  "icon.svg",
  "manifest.webmanifest",
  "icons/icon-192.png",
  "icons/icon-512.png",
  "icons/icon-maskable-512.png",
];
// The build's scripts, styles and catalogs, under content-named URLs (a/<build>/…): the server
// lists them here when it serves this file (server/edge/static.py). They never change, so they
// are answered from the cache without asking the server again.
const BUILT = [];
const OWN = new Set([...FILES, ...BUILT].map((file) => new URL(file, self.registration.scope).pathname));
const IMMUTABLE = new Set(BUILT.map((file) => new URL(file, self.registration.scope).pathname));

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll([...FILES, ...BUILT]))
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
      if (cached && IMMUTABLE.has(key)) return cached;
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
