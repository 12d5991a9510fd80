/**
 * The one line splitter: every reader of "\n"-delimited bytes (MCP stdio
 * frames, ledger lines, the Merkle tree's leaves) cuts them here, on 0x0A
 * only (U+2028 and friends inside a line never split it).
 *
 * Pull-style, so that async readers (the relay under --write-ahead) can
 * await between parts: `feed(chunk)`, then `next()` until it returns null;
 * `end()` when the stream ends, then `next()` again for an unterminated last
 * line. A part is a view, valid until the next call.
 *
 * A line that lies inside one chunk is delivered whole, a view into it,
 * whatever its length. Bytes of a line that is still open when its chunk
 * ends are copied (the chunk's buffer may be reused or handed on), up to
 * `maxKept` of them; a line that grows beyond that is handed on in pieces as
 * they arrive (`over`: first the copies kept so far, then each later piece)
 * and closed with `long`, so no more than `maxKept` bytes of a line are ever
 * held. Readers that promise a limit on a whole line (frames, the verifier)
 * check the length of a `line` part themselves.
 */

const NL = 0x0a;
const EMPTY = new Uint8Array(0);

export type LinePartKind = "line" | "over" | "long";

/** One part of the stream; reused from call to call. */
export interface LinePart {
  /**
   * `line`: a whole line. `over`: a piece of a line longer than maxKept.
   * `long`: that line's last piece (possibly empty); `length` is its full length.
   */
  kind: LinePartKind;
  /** The part's bytes, without a "\n". */
  bytes: Uint8Array;
  /** The same bytes with the "\n" that ended them, when one did: the stream exactly as it came. */
  raw: Uint8Array;
  /** A "\n" ended the line (`line` and `long`); false for an unterminated last line. */
  ends: boolean;
  /** `long`: the line's full length, without its "\n". */
  length: number;
}

export class LineSplitter {
  private chunk: Uint8Array = EMPTY;
  private pos = 0;
  private kept: Uint8Array[] = [];
  private keptLen = 0;
  /** The length so far of a line over maxKept; -1 when there is none. */
  private overLen = -1;
  /** Pieces to hand on as `over` before anything else (the kept copies, when a line outgrows maxKept). */
  private queue: Uint8Array[] = [];
  private ending = false;
  private readonly part: LinePart = { kind: "line", bytes: EMPTY, raw: EMPTY, ends: true, length: 0 };

  constructor(private readonly maxKept: number) {}

  /** The next chunk; call only once next() has returned null. */
  feed(chunk: Uint8Array): void {
    this.chunk = chunk;
    this.pos = 0;
  }

  /** The stream ended; next() then gives what is left of an unterminated last line. */
  end(): void {
    this.ending = true;
  }

  next(): LinePart | null {
    if (this.queue.length > 0) return this.set("over", this.queue.shift()!, false);
    const chunk = this.chunk;
    while (this.pos < chunk.length) {
      const start = this.pos;
      const nl = chunk.indexOf(NL, start);
      if (nl < 0) {
        const piece = chunk.subarray(start);
        this.pos = chunk.length;
        if (this.overLen >= 0) {
          this.overLen += piece.length;
          return this.set("over", piece, false);
        }
        if (this.keptLen + piece.length > this.maxKept) {
          this.overLen = this.keptLen + piece.length;
          this.queue = this.kept;
          this.queue.push(piece);
          this.kept = [];
          this.keptLen = 0;
          return this.set("over", this.queue.shift()!, false);
        }
        this.kept.push(piece.slice());
        this.keptLen += piece.length;
        return null;
      }
      this.pos = nl + 1;
      if (this.overLen >= 0) {
        const p = this.set("long", chunk.subarray(start, nl), true, chunk.subarray(start, nl + 1));
        p.length = this.overLen + (nl - start);
        this.overLen = -1;
        return p;
      }
      if (this.keptLen === 0) return this.set("line", chunk.subarray(start, nl), true, chunk.subarray(start, nl + 1));
      return this.joined(chunk.subarray(start, nl), true);
    }
    if (!this.ending) return null;
    this.ending = false;
    if (this.overLen >= 0) {
      const p = this.set("long", EMPTY, false);
      p.length = this.overLen;
      this.overLen = -1;
      return p;
    }
    if (this.keptLen > 0) return this.joined(EMPTY, false);
    return null;
  }

  /** The kept copies and `tail` as one line (with its "\n" in `raw` when it ends). */
  private joined(tail: Uint8Array, ends: boolean): LinePart {
    const len = this.keptLen + tail.length;
    let raw: Uint8Array;
    if (!ends && tail.length === 0 && this.kept.length === 1) raw = this.kept[0]!;
    else {
      raw = new Uint8Array(len + (ends ? 1 : 0));
      let at = 0;
      for (const p of this.kept) {
        raw.set(p, at);
        at += p.length;
      }
      raw.set(tail, at);
      if (ends) raw[len] = NL;
    }
    this.kept = [];
    this.keptLen = 0;
    return this.set("line", ends ? raw.subarray(0, len) : raw, ends, raw);
  }

  private set(kind: LinePartKind, bytes: Uint8Array, ends: boolean, raw: Uint8Array = bytes): LinePart {
    const p = this.part;
    p.kind = kind;
    p.bytes = bytes;
    p.raw = raw;
    p.ends = ends;
    p.length = bytes.length;
    return p;
  }
}
