/**
 * A float literal of UTF-8 JSON straight to Python's repr of its double, for
 * src/core/canonical/from-bytes.ts: most floats in traffic are short decimals, and
 * this writes them with no string and no double.
 */
import type { ByteOut } from "./byte-out.ts";

/**
 * Writes the float literal in b[a, z) as Python's repr writes its double,
 * straight from its digits, when that is certain without the double: it has
 * at most 15 significant digits (so no other decimal that short reads as the
 * same double, and these digits are the shortest repr's) and its first
 * significant digit is at 10^-4 .. 10^15 (repr's fixed layout). False, with
 * nothing written, for any other (Number and pyFloatRepr then write it).
 * The common float costs no string this way.
 */
export function writeShortFloat(b: Uint8Array, a: number, z: number, out: ByteOut): boolean {
  const negative = b[a] === 45;
  let i = negative ? a + 1 : a;
  // Counting the digits before the exponent (the point not counted): where the point is, and the first and last significant digits.
  let point = -1;
  let first = -1;
  let last = -1;
  let firstAt = -1; // the first significant digit's index in b
  let count = 0;
  for (; i < z; i++) {
    const c = b[i]!;
    if (c === 46) {
      point = count;
      continue;
    }
    if (c < 48 || c > 57) break;
    if (c !== 48) {
      if (first < 0) {
        first = count;
        firstAt = i;
      }
      last = count;
    }
    count++;
  }
  if (point < 0) point = count;
  let exp = 0;
  if (i < z) {
    // e or E, a sign, digits: a longer exponent is left to the slow path
    let j = i + 1;
    const minus = b[j] === 45;
    if (minus || b[j] === 43) j++;
    if (z - j > 4) return false;
    for (; j < z; j++) exp = exp * 10 + b[j]! - 48;
    if (minus) exp = -exp;
  }
  if (first < 0) {
    out.ascii(negative ? "-0.0" : "0.0");
    return true;
  }
  const n = last - first + 1;
  if (n > 15) return false;
  const e = point - 1 - first + exp; // the decimal exponent of the first significant digit
  if (e < -4 || e > 15) return false;
  out.room(n + 24);
  const buf = out.buf;
  let o = out.len;
  if (negative) buf[o++] = 45;
  if (e < 0) {
    buf[o++] = 48;
    buf[o++] = 46;
    for (let k = -1; k > e; k--) buf[o++] = 48;
  }
  // The significant digits in order (the point in the literal skipped), and repr's point after the one at 10^0.
  let at = firstAt;
  for (let k = 0; k < n; k++) {
    if (b[at] === 46) at++;
    buf[o++] = b[at++]!;
    if (k === e) buf[o++] = 46;
  }
  if (e >= n - 1) {
    for (let k = n; k <= e; k++) buf[o++] = 48;
    if (e >= n) buf[o++] = 46;
    buf[o++] = 48; // an integral float ends in .0
  }
  out.len = o;
  return true;
}
