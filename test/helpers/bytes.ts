/** Frames and lines written as text with raw bytes where text cannot say them (invalid UTF-8, stray bytes). */

import { concatBytes } from "../../src/core/bytes.ts";

const enc = new TextEncoder();

/** A piece of bytes: text (as UTF-8) or byte values. */
export type Part = string | number[];

/** The parts' bytes, one after another. */
export function cat(...parts: Part[]): Uint8Array {
  return concatBytes(parts.map((p) => (typeof p === "string" ? enc.encode(p) : Uint8Array.from(p))));
}
