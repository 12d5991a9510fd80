/**
 * SHA-256 of one whole input, as hex: node:crypto's one-shot `hash` (Node
 * 20.12 and later, Bun), which makes no Hash object per call, else a Hash
 * object. A string is hashed as its UTF-8 (callers pass well-formed text:
 * a lone surrogate has no UTF-8).
 */
import * as crypto from "node:crypto";
import { createHash } from "node:crypto";

const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string }).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShot !== undefined ? oneShot("sha256", data, "hex") : createHash("sha256").update(data).digest("hex");
}
