/**
 * The members of the objects open while canonicalizing bytes
 * (src/core/byte-canonicalizer.ts), on one stack for the whole document: where
 * each member's bytes lie in the output, its key's decoded bytes, and the
 * refusals met inside it; and, when an object closes, its members put in key
 * order in place.
 */
import type { ByteOut } from "./byte-out.ts";

/** What ordering needs of the document being read: its position, its refusal counts, and how it fails. */
export interface OpenDocument {
  i: number;
  valueErrors: number;
  lone: number;
  fail(reason: string, at?: number): never;
}

export class ObjectMembers {
  // One stack of object members for the whole document; [base, top) belong to the innermost open object.
  top = 0;
  readonly keyStart: number[] = [];
  readonly keyEnd: number[] = [];
  readonly start: number[] = [];
  readonly end: number[] = [];
  readonly memberValueErrors: number[] = [];
  readonly memberLone: number[] = [];
  private readonly idx: number[] = [];
  /** Decoded key bytes of the members on the stack. */
  keys = new Uint8Array(1 << 10);
  keysLen = 0;

  constructor(private readonly jcs: boolean) {}

  keyRoom(n: number): void {
    if (this.keysLen + n <= this.keys.length) return;
    const k = new Uint8Array(Math.max(this.keys.length * 2, this.keysLen + n));
    k.set(this.keys.subarray(0, this.keysLen));
    this.keys = k;
  }

  /** Compares the keys of members x and y: by code point, or for jcs by UTF-16 code unit. */
  private cmp(x: number, y: number): number {
    const k = this.keys;
    let i = this.keyStart[x]!;
    let j = this.keyStart[y]!;
    const ie = this.keyEnd[x]!;
    const je = this.keyEnd[y]!;
    while (i < ie && j < je) {
      const p = k[i]!;
      const q = k[j]!;
      if (p !== q) {
        // UTF-8 bytes order as code points do. UTF-16 differs only where a
        // 4-byte character (a surrogate pair, units D800..DBFF) meets one
        // from U+E000..U+FFFF (lead byte EE or EF): the pair sorts first.
        if (this.jcs && ((p >= 0xf0 && q >= 0xee && q <= 0xef) || (q >= 0xf0 && p >= 0xee && p <= 0xef))) return q - p;
        return p - q;
      }
      i++;
      j++;
    }
    return ie - i - (je - j);
  }

  private sameKey(x: number, y: number): boolean {
    return this.cmp(x, y) === 0;
  }

  /** Puts the members [base, top) in key order, keeping the last of each repeated key. */
  order(base: number, regionStart: number, out: ByteOut, doc: OpenDocument): void {
    const n = this.top - base;
    let sorted = true;
    for (let j = base + 1; j < this.top; j++) {
      if (this.cmp(j - 1, j) >= 0) {
        sorted = false;
        break;
      }
    }
    if (sorted) return;
    const idx = this.idx;
    for (let j = 0; j < n; j++) idx[j] = base + j;
    idx.length = n;
    if (n <= 16) {
      // Insertion sort: stable, and cheaper than Array#sort on the few members most objects have.
      for (let j = 1; j < n; j++) {
        const m = idx[j]!;
        let k = j;
        while (k > 0 && this.cmp(idx[k - 1]!, m) > 0) {
          idx[k] = idx[k - 1]!;
          k--;
        }
        idx[k] = m;
      }
    } else {
      idx.sort((x, y) => this.cmp(x, y) || x - y);
    }
    // Park the region after the written bytes, then copy the members back in order.
    out.room(out.len - regionStart);
    const buf = out.buf;
    const park = out.len - regionStart;
    buf.copyWithin(out.len, regionStart, out.len);
    let o = regionStart;
    for (let j = 0; j < n; j++) {
      const m = idx[j]!;
      if (j + 1 < n && this.sameKey(idx[j + 1]!, m)) {
        if (this.jcs) doc.fail("duplicate key", doc.i - 1);
        // A later value of the same key wins; this one's refusals go with it.
        doc.valueErrors -= this.memberValueErrors[m]!;
        doc.lone -= this.memberLone[m]!;
        continue;
      }
      if (o !== regionStart) buf[o++] = 44;
      const from = this.start[m]! + park;
      const to = this.end[m]! + park;
      if (to - from < 64) for (let k = from; k < to; k++) buf[o++] = buf[k]!;
      else {
        buf.copyWithin(o, from, to);
        o += to - from;
      }
    }
    out.len = o;
  }
}
