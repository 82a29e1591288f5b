// The "verified" mark: a past daily's result checked in the browser itself against the server's
// signed results log (docs/results-log.md), with nothing but the published head of its day, the
// log's public key and SHA-256 (WebCrypto): the leaf names this game, its audit path leads to the
// head's root (RFC 9162 section 2.1.3.2), and the head's Ed25519 signature holds.

import { api } from "./identity.js";

const HEAD_FIELDS = ["day", "root_hash", "timestamp_ms", "tree_size"]; // sorted: the signed bytes' order
const encoder = new TextEncoder();
let publicKey = null; // the log's key, imported once
const heads = new Map(); // day -> its signed head (a head never changes)

function fromHex(text) {
  if (typeof text !== "string" || !/^([0-9a-f]{2})*$/.test(text)) throw new Error("not hex");
  return Uint8Array.from(text.match(/../g) || [], (pair) => parseInt(pair, 16));
}

function same(a, b) {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

async function sha256(...parts) {
  const data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    data.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
}

const leafHash = (bytes) => sha256(Uint8Array.of(0), bytes);
const nodeHash = (left, right) => sha256(Uint8Array.of(1), left, right);

/** The root an audit path leads to from a leaf's hash (RFC 9162 2.1.3.2), or null if it cannot fit. */
export async function rootOf(index, size, hash, path) {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = hash;
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** The bytes a head's signature covers: its four fields, keys sorted, no spaces. */
function headBytes(head) {
  return encoder.encode(`{${HEAD_FIELDS.map((k) => `${JSON.stringify(k)}:${JSON.stringify(head[k])}`).join(",")}}`);
}

async function key() {
  if (!publicKey) {
    const body = await api("GET", "/api/log/key");
    publicKey = await crypto.subtle.importKey("raw", fromHex(body.public_key), { name: "Ed25519" }, false, ["verify"]);
  }
  return publicKey;
}

async function signedHead(day) {
  if (!heads.has(day)) {
    const head = await api("GET", `/api/log/heads/${encodeURIComponent(day)}`);
    const ok = await crypto.subtle.verify({ name: "Ed25519" }, await key(), fromHex(head.signature), headBytes(head));
    if (!ok || head.day !== day) throw new Error("the head's signature does not hold");
    heads.set(day, head);
  }
  return heads.get(day);
}

/** Whether a past daily's game is in the signed log of its day as recorded (false on any doubt). */
export async function verifyGame(gameId, day) {
  try {
    const [proof, head] = await Promise.all([api("GET", `/api/games/${encodeURIComponent(gameId)}/inclusion`), signedHead(day)]);
    const leaf = JSON.parse(proof.leaf);
    if (leaf.game_id !== gameId || leaf.day !== day) return false;
    if (proof.tree_size !== head.tree_size || proof.root_hash !== head.root_hash) return false;
    const root = await rootOf(proof.leaf_index, head.tree_size, await leafHash(encoder.encode(proof.leaf)), proof.audit_path.map(fromHex));
    return root !== null && same(root, fromHex(head.root_hash));
  } catch {
    return false;
  }
}
