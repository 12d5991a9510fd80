/**
 * The scalars of UTF-8 JSON written in canonical form, for
 * src/core/canonical/from-bytes.ts (which adds the containers): the cursor and
 * its refusals (as parseJson words them), numbers, and strings, a key's
 * decoded bytes also kept for sorting. What has no canonical form (NaN,
 * ±Infinity, a lone surrogate) is counted, not refused.
 */

import { JsonParseError } from "../json-error.ts";
import { MAX_INT_DIGITS } from "../json-scanner.ts";
import { writeUtf8 } from "../utf8.ts";
import type { ByteOut } from "./byte-out.ts";
import { pyFloatRepr } from "./pyfloat.ts";
import { writeShortFloat } from "./short-float.ts";

const HEX = Uint8Array.from("0123456789abcdef", (ch) => ch.charCodeAt(0));
/** The byte after the backslash for the controls that have a short escape. */
const SHORT_ESCAPE: Record<number, number> = { 8: 98, 9: 116, 10: 110, 12: 102, 13: 114, 34: 34, 92: 92 };
/** What a short escape in the input stands for. */
const UNESCAPE: Record<number, number> = { 34: 34, 92: 92, 47: 47, 98: 8, 102: 12, 110: 10, 114: 13, 116: 9 };

function hexDigit(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 32;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

/** The four hex digits of the \\u escape at i (a backslash) as a number; -1 when they are not four hex digits. */
function hex4(b: Uint8Array, i: number): number {
  const v0 = hexDigit(b[i + 2]);
  const v1 = hexDigit(b[i + 3]);
  const v2 = hexDigit(b[i + 4]);
  const v3 = hexDigit(b[i + 5]);
  if (v0 < 0 || v1 < 0 || v2 < 0 || v3 < 0) return -1;
  return (v0 << 12) | (v1 << 8) | (v2 << 4) | v3;
}

/**
 * The escape at b[i] (a backslash), decoded: its code point times 16 plus
 * the bytes it takes in the input (2, 6, or 12 for a surrogate pair's two
 * escapes, read as one character); -1 when it is not a valid escape. A lone
 * surrogate is its own code point.
 */
export function decodeEscape(b: Uint8Array, i: number): number {
  const e = b[i + 1];
  if (e !== 117) {
    const u = e === undefined ? undefined : UNESCAPE[e];
    return u === undefined ? -1 : u * 16 + 2;
  }
  const cp = hex4(b, i);
  if (cp < 0) return -1;
  if (cp >= 0xd800 && cp <= 0xdbff && b[i + 6] === 92 && b[i + 7] === 117) {
    const lo = hex4(b, i + 6);
    if (lo < 0) return -1;
    if (lo >= 0xdc00 && lo <= 0xdfff) return (0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)) * 16 + 12;
  }
  return cp * 16 + 6;
}

const latin1 = new TextDecoder("latin1");

export class ByteScalars {
  i = 0;
  depth = 0;
  readonly n: number;
  /** NaN/±Infinity met, and lone surrogates written: counts, so a dropped repeated key can take its own back. */
  valueErrors = 0;
  lone = 0;
  /** Decoded key bytes of the members on the stack. */
  protected keys = new Uint8Array(1 << 10);
  protected keysLen = 0;
  /**
   * The chain form (Python's json.dumps with sort_keys, default separators,
   * allow_nan): ", " and ": " between items, and NaN, Infinity and
   * -Infinity written as such; else json-c14n or jcs, which have no form for them.
   */
  chainForm = false;

  constructor(
    readonly b: Uint8Array,
    readonly maxDepth: number,
    readonly out: ByteOut,
    readonly jcs: boolean,
  ) {
    this.n = b.length;
  }

  fail(reason: string, at = this.i): never {
    throw new JsonParseError(reason, at, this.b);
  }

  ws(): number {
    const b = this.b;
    let i = this.i;
    let c = b[i];
    while (c === 32 || c === 10 || c === 13 || c === 9) c = b[++i];
    this.i = i;
    return c ?? -1;
  }

  literal(word: string): void {
    const b = this.b;
    for (let k = 0; k < word.length; k++) if (b[this.i + k] !== word.charCodeAt(k)) this.fail("expecting value");
    this.i += word.length;
  }

  enter(): void {
    if (++this.depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`);
  }

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, as parseJson reads it. */
  number(): void {
    const b = this.b;
    const a = this.i;
    let i = a;
    let c = b[i];
    if (c === 45) c = b[++i];
    const digits = i;
    if (c === 48) c = b[++i];
    else if (c !== undefined && c >= 49 && c <= 57) {
      do c = b[++i];
      while (c !== undefined && c >= 48 && c <= 57);
    } else this.fail("expecting value", a);
    const intDigits = i - digits;
    let isFloat = false;
    if (c === 46) {
      c = b[++i];
      if (c === undefined || c < 48 || c > 57) this.fail("expecting a digit after the decimal point", i);
      do c = b[++i];
      while (c !== undefined && c >= 48 && c <= 57);
      isFloat = true;
    }
    if (c === 101 || c === 69) {
      c = b[++i];
      if (c === 43 || c === 45) c = b[++i];
      if (c === undefined || c < 48 || c > 57) this.fail("expecting a digit in the exponent", i);
      do c = b[++i];
      while (c !== undefined && c >= 48 && c <= 57);
      isFloat = true;
    }
    if (!isFloat && intDigits > MAX_INT_DIGITS)
      this.fail(`integer literal longer than ${MAX_INT_DIGITS} digits (Python refuses it)`, a);
    this.i = i;
    if (isFloat && !this.jcs && writeShortFloat(b, a, i, this.out)) return;
    if (isFloat || this.jcs) {
      const x = Number(
        i - a <= 32
          ? String.fromCharCode.apply(null, b.subarray(a, i) as unknown as number[])
          : latin1.decode(b.subarray(a, i)),
      );
      if (Number.isFinite(x)) this.out.ascii(this.jcs ? String(x) : pyFloatRepr(x));
      else if (this.chainForm) this.out.ascii(x > 0 ? "Infinity" : "-Infinity");
      else this.valueErrors++;
    } else if (i - a === 2 && b[a] === 45 && b[a + 1] === 48) {
      this.out.byte(48); // the int -0 is 0
    } else {
      this.out.copy(b, a, i); // an int literal is already its exact decimal
    }
  }

  /**
   * The string at the cursor, written in canonical form; for a key, its
   * decoded bytes also go on the key stack. Unescaped text is valid UTF-8
   * with nothing to escape, so it is copied as it is.
   */
  string(key: boolean): void {
    const b = this.b;
    const n = this.n;
    const out = this.out;
    let i = this.i + 1;
    let chunk = i;
    out.byte(34);
    for (;;) {
      if (i >= n) this.fail("unterminated string", this.i);
      const c = b[i]!;
      if (c === 34) break;
      if (c === 92) {
        if (i > chunk) this.raw(chunk, i, key);
        i = this.escape(i, key);
        chunk = i;
        continue;
      }
      if (c < 32) this.fail("invalid control character in string", i);
      i++;
    }
    if (i > chunk) this.raw(chunk, i, key);
    out.byte(34);
    this.i = i + 1;
  }

  private raw(a: number, z: number, key: boolean): void {
    this.out.copy(this.b, a, z);
    if (key) {
      this.keyRoom(z - a);
      const b = this.b;
      const keys = this.keys;
      let o = this.keysLen;
      for (let i = a; i < z; i++) keys[o++] = b[i]!;
      this.keysLen = o;
    }
  }

  /** Decodes the escape at i (a backslash) and writes it; returns the index after it. */
  private escape(i: number, key: boolean): number {
    const r = decodeEscape(this.b, i);
    if (r < 0) this.escapeError(i);
    this.codePoint(r >> 4, key);
    return i + (r & 15);
  }

  /** Refuses the escape at i, which decodeEscape could not read, as parseJson words it. */
  private escapeError(i: number): never {
    const e = this.b[i + 1];
    if (e === undefined) this.fail("unterminated string", this.i);
    if (e !== 117) this.fail("invalid escape", i);
    // A \u escape, or the second of a pair after a high surrogate.
    this.fail("invalid \\uXXXX escape", hex4(this.b, i) < 0 ? i : i + 6);
  }

  /** Writes one decoded character in canonical form (and, for a key, its UTF-8). */
  private codePoint(cp: number, key: boolean): void {
    const out = this.out;
    out.room(6);
    const buf = out.buf;
    if (cp < 32 || cp === 34 || cp === 92) {
      buf[out.len++] = 92;
      const short = SHORT_ESCAPE[cp];
      if (short !== undefined) buf[out.len++] = short;
      else {
        buf[out.len++] = 117;
        buf[out.len++] = 48;
        buf[out.len++] = 48;
        buf[out.len++] = cp < 16 ? 48 : 49;
        buf[out.len++] = HEX[cp & 15]!;
      }
    } else {
      if (cp >= 0xd800 && cp <= 0xdfff) this.lone++; // no UTF-8 form: the outcome is UnicodeEncodeError
      out.len = writeUtf8(buf, out.len, cp);
    }
    if (key) {
      this.keyRoom(4);
      this.keysLen = writeUtf8(this.keys, this.keysLen, cp);
    }
  }

  /** Room for `n` more bytes of decoded keys (a key's escapes only shorten it: its raw length is enough). */
  protected keyRoom(n: number): void {
    if (this.keysLen + n <= this.keys.length) return;
    const k = new Uint8Array(Math.max(this.keys.length * 2, this.keysLen + n));
    k.set(this.keys.subarray(0, this.keysLen));
    this.keys = k;
  }
}
