// A game code as a player types it, checked with the schema's own pattern (facts.js): both seed
// lengths, the short codes players share and the long ones of daily challenges.

import { GAME_CODE } from "./facts.js";

const PATTERN = new RegExp(GAME_CODE);

/** The code in its canonical form (trimmed, upper case), or null when the text is no game code. */
export function typedCode(text) {
  const code = String(text ?? "").trim().toUpperCase();
  return PATTERN.test(code) ? code : null;
}
