/**
 * Object keys compared where they lie in UTF-8 JSON input, with no decoded
 * copy of them: how src/core/canonical/from-bytes.ts sorts the members of an
 * object too long to hold, whose keys copied would cost about what they take
 * in the input again.
 *
 * The order is that of the keys' decoded UTF-8 bytes, which is code point
 * order (Python's sort_keys), or for jcs that of their UTF-16 code units
 * (RFC 8785, section 3.2.3). Text with no escape is its own decoded UTF-8,
 * so two keys are compared byte by byte until either meets an escape or its
 * closing quote; from there both are decoded a character at a time. That
 * place is a character boundary in both: their bytes so far are equal and
 * UTF-8 is prefix-free, so their characters so far end together.
 *
 * The keys must be JSON strings (read strictly before they are compared).
 */
import { writeUtf8 } from "../utf8.ts";
import { decodeEscape } from "./from-bytes-scalars.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The order of two keys whose decoded UTF-8 bytes first differ at p and q.
 * UTF-8 bytes order as code points do. UTF-16 differs only where a 4-byte
 * character (a surrogate pair, units D800..DBFF) meets one from
 * U+E000..U+FFFF (lead byte EE or EF): for jcs the pair sorts first.
 */
export function byteOrder(p: number, q: number, jcs: boolean): number {
  if (jcs && ((p >= 0xf0 && q >= 0xee && q <= 0xef) || (q >= 0xf0 && p >= 0xee && p <= 0xef))) return q - p;
  return p - q;
}

/** A key's decoded UTF-8 bytes, one at a time, read from the input. */
class KeyBytes {
  private i = 0;
  private readonly pending = new Uint8Array(4);
  private pendingLen = 0;
  private pendingAt = 0;

  constructor(private readonly b: Uint8Array) {}

  /** Starts reading at i, inside a key, at a character boundary. */
  from(i: number): this {
    this.i = i;
    this.pendingLen = 0;
    this.pendingAt = 0;
    return this;
  }

  /** The next decoded byte; -1 at the closing quote. */
  next(): number {
    if (this.pendingAt < this.pendingLen) return this.pending[this.pendingAt++]!;
    const c = this.b[this.i];
    if (c === undefined || c === QUOTE) return -1;
    if (c !== BACKSLASH) {
      this.i++;
      return c;
    }
    const r = decodeEscape(this.b, this.i);
    if (r < 0) return -1; // not a JSON string: never met, the keys are read strictly first
    this.i += r & 15;
    // A lone surrogate is written as its own three bytes, where its code point sorts.
    this.pendingLen = writeUtf8(this.pending, 0, r >> 4);
    this.pendingAt = 1;
    return this.pending[0]!;
  }
}

/** Compares keys of one input by where their opening quotes are. */
export class KeyOrder {
  private readonly x: KeyBytes;
  private readonly y: KeyBytes;

  constructor(
    private readonly b: Uint8Array,
    private readonly jcs: boolean,
  ) {
    this.x = new KeyBytes(b);
    this.y = new KeyBytes(b);
  }

  /** Negative, zero or positive as the key at quote `a` sorts before, with or after the key at quote `c`. */
  cmp(a: number, c: number): number {
    const b = this.b;
    let i = a + 1;
    let j = c + 1;
    for (;;) {
      const p = b[i]!;
      const q = b[j]!;
      if (p === QUOTE || q === QUOTE || p === BACKSLASH || q === BACKSLASH) return this.decoded(i, j);
      if (p !== q) return byteOrder(p, q, this.jcs);
      i++;
      j++;
    }
  }

  /** cmp from i and j on, character boundaries of the two keys, their decoded bytes so far equal. */
  private decoded(i: number, j: number): number {
    const x = this.x.from(i);
    const y = this.y.from(j);
    for (;;) {
      const p = x.next();
      const q = y.next();
      if (p !== q) return p < 0 ? -1 : q < 0 ? 1 : byteOrder(p, q, this.jcs);
      if (p < 0) return 0;
    }
  }

  /** Whether the key at quote `a` decodes to `bytes`. */
  is(a: number, bytes: Uint8Array): boolean {
    const x = this.x.from(a + 1);
    for (let k = 0; k < bytes.length; k++) if (x.next() !== bytes[k]) return false;
    return x.next() < 0;
  }
}
