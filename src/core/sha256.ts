/**
 * SHA-256 of one whole input, as hex: node:crypto's one-shot `hash` (Node
 * 20.12 and later, Bun), which makes no Hash object per call, else a Hash
 * object; or the one-shot a runtime offers (useSha256). A string is hashed as
 * its UTF-8 (callers pass well-formed text: a lone surrogate has no UTF-8).
 */
import * as crypto from "node:crypto";
import { createHash } from "node:crypto";

const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string }).hash;

/** Writes SHA-256 of `data` (a string as its UTF-8) into the first 32 bytes of `out`. */
export type Sha256Into = (data: string | Uint8Array, out: Uint8Array) => void;

let into: Sha256Into | null = null;
const digestOut = Buffer.alloc(32);

/**
 * Hashes with `f` from now on (null: node:crypto again). src/runtime/index.ts
 * gives Bun's SHA256.hash, which writes into a buffer: hex included, it
 * beats node:crypto's one-shot there, most for short inputs such as the
 * canonical form of a call's arguments (bench/micro.bench.ts, "sha256, one
 * row", compares the two).
 */
export function useSha256(f: Sha256Into | null): void {
  into = f;
}

/** The one-shot given to useSha256, or null: node:crypto's hashes. */
export function installedSha256(): Sha256Into | null {
  return into;
}

/** Hex digits by byte value, two a byte, as ASCII. */
const HEX_PAIRS = new Uint8Array(512);
for (let b = 0; b < 256; b++) {
  HEX_PAIRS[2 * b] = "0123456789abcdef".charCodeAt(b >> 4);
  HEX_PAIRS[2 * b + 1] = "0123456789abcdef".charCodeAt(b & 15);
}
/** Where sha256Prefixed writes its text: a prefix of up to 64 ASCII characters and 64 hex digits. */
const prefixedOut = Buffer.alloc(128);

/**
 * `prefix` (ASCII, at most 64 characters) followed by the hex of SHA-256(data),
 * as one string: a digest as rows carry it. Made from bytes in one step, it
 * is one flat string; a template of prefix and hex is a rope in
 * JavaScriptCore, which the line writer flattens again, and the two cost
 * about a tenth of a recorded call there (bench/micro.bench.ts, "record, per call").
 */
export function sha256Prefixed(prefix: string, data: string | Uint8Array): string {
  if (into === null || prefix.length > 64) return prefix + sha256Hex(data);
  into(data, digestOut);
  const out = prefixedOut;
  let o = 0;
  for (let i = 0; i < prefix.length; i++) out[o++] = prefix.charCodeAt(i);
  for (let i = 0; i < 32; i++) {
    const b = digestOut[i]!;
    out[o++] = HEX_PAIRS[2 * b]!;
    out[o++] = HEX_PAIRS[2 * b + 1]!;
  }
  return out.toString("latin1", 0, o);
}

/** The hex of SHA-256(data); `bytes`: only the digest's first bytes (a chain is 16 of them). */
export function sha256Hex(data: string | Uint8Array, bytes = 32): string {
  if (into !== null) {
    into(data, digestOut);
    return digestOut.toString("hex", 0, bytes);
  }
  const hex = oneShot !== undefined ? oneShot("sha256", data, "hex") : createHash("sha256").update(data).digest("hex");
  return bytes === 32 ? hex : hex.slice(0, 2 * bytes);
}
