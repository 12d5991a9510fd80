/**
 * The output buffer of src/core/canonical/from-bytes.ts: it grows, and hands
 * finished bytes to a sink whenever no object is open (an object's members
 * may still be reordered until it closes).
 */

const CHUNK = 1 << 20;
/** Finished bytes are handed over once this many are buffered. */
export const FLUSH_AT = 1 << 16;
/** An object outside every other that needs more room than this is written member by member instead. */
export const HOLD_LIMIT = 1 << 20;
/** Thrown when an object outgrows HOLD_LIMIT; caught where that object began. */
export const TOO_LONG: unique symbol = Symbol("held too long");

/** A growing byte buffer that hands finished bytes to a sink. */
export class ByteOut {
  buf = new Uint8Array(1 << 12);
  len = 0;
  /** Open objects: while any is open, written bytes may still be reordered. */
  openObjects = 0;
  /** Where the outermost open object's region began, when it must stay within HOLD_LIMIT; -1 otherwise. */
  holdFrom = -1;

  constructor(private readonly sink: (bytes: Uint8Array) => void) {}

  room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    if (this.holdFrom >= 0 && this.openObjects > 0 && this.len + n - this.holdFrom > HOLD_LIMIT) throw TOO_LONG;
    if (this.openObjects === 0 && this.len > 0) {
      this.flush();
      if (n <= this.buf.length) return;
    }
    let cap = Math.max(this.buf.length * 2, CHUNK);
    while (cap < this.len + n) cap *= 2;
    // Room for a held object ends where it would outgrow its limit: the next call past that is the one that throws.
    if (this.holdFrom >= 0 && this.openObjects > 0)
      cap = Math.max(this.len + n, Math.min(cap, this.holdFrom + HOLD_LIMIT));
    const b = new Uint8Array(cap);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }

  /** Hands the finished bytes over; the chunk is only valid during the call. */
  flush(): void {
    if (this.len > 0) this.sink(this.buf.subarray(0, this.len));
    this.len = 0;
  }

  byte(c: number): void {
    if (this.len === this.buf.length) this.room(1);
    this.buf[this.len++] = c;
  }

  ascii(s: string): void {
    this.room(s.length);
    const buf = this.buf;
    let o = this.len;
    for (let i = 0; i < s.length; i++) buf[o++] = s.charCodeAt(i);
    this.len = o;
  }

  copy(src: Uint8Array, a: number, b: number): void {
    if (b - a > CHUNK && this.openObjects === 0) {
      // Outside every object nothing is reordered: a long run goes on in pieces, not held whole.
      for (; a < b; a += CHUNK) this.copy(src, a, Math.min(b, a + CHUNK));
      return;
    }
    this.room(b - a);
    if (b - a > 512) {
      this.buf.set(src.subarray(a, b), this.len);
      this.len += b - a;
    } else {
      const buf = this.buf;
      let o = this.len;
      for (let i = a; i < b; i++) buf[o++] = src[i]!;
      this.len = o;
    }
  }
}
