// The first thing the page does: know the player and open a connection for it, before the
// rest of the client is even evaluated (index.html loads this module async, on its own). The
// handshake's round trips then overlap the client's own start. main.js takes both from here:
// a module runs once, so both ask the same promise.

import { ensurePlayer } from "./identity.js";
import { Net, socketUrl } from "./net.js";

export const early = ensurePlayer().then((player) => {
  const net = new Net({ url: socketUrl(), token: player.token });
  net.preconnect();
  return { player, net };
});
