// The page's first act, before any module: open the connection for the stored player and say
// who it is once it opens. The server writes this into the page's head (server/edge/static.py),
// so it runs as soon as the head is read, while the modules are still loading; net.js takes
// the socket over (takeEarlySocket). A first visit has no player yet: connect.js makes one.
(() => {
  const protocol = Number(document.currentScript && document.currentScript.dataset.protocol);
  let player = null;
  try {
    player = JSON.parse(localStorage.getItem("solitaire.player") || "null"); // identity.js's KEY
  } catch {
    return;
  }
  if (!player || typeof player.token !== "string" || !Number.isInteger(protocol)) return;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  let ws;
  try {
    ws = new WebSocket(`${scheme}//${location.host}/ws`);
  } catch {
    return;
  }
  const early = { ws, token: player.token, frames: [], closed: false };
  ws.onopen = () => ws.send(JSON.stringify({ type: "auth", id: "auth", protocol, token: player.token }));
  ws.onmessage = (ev) => early.frames.push(ev.data);
  ws.onclose = () => {
    early.closed = true;
  };
  window.solitaireEarlySocket = early;
})();
