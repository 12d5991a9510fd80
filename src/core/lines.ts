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
 * check the length of a `line` part themselves. A source whose every chunk
 * is a buffer of its own that it never reuses (a file read into new buffers)
 * may say so (`freshChunks`): the open line's bytes are then kept as views
 * of its chunks, not copied; once they pass GROW_FROM, they are copied
 * instead into one buffer that grows in place as the line's pieces come,
 * which is the line when it ends (no joined copy made beside the pieces).
 */
import { LF as NL } from "./ascii.ts";

const EMPTY = new Uint8Array(0);

/** An open line of fresh chunks longer than this goes on in a buffer that grows in place. */
export const GROW_FROM = 1 << 20;

/** An ArrayBuffer that grows in place, up to the most it was made for (ES2024 resizable ArrayBuffer). */
type Growable = ArrayBuffer & { resize(n: number): void; readonly maxByteLength: number };

/** A growable buffer of `n` bytes that may grow to `max`; null where the runtime has none that large. */
function growable(n: number, max: number): Growable | null {
  try {
    const ab = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => Growable)(n, {
      maxByteLength: max,
    });
    return typeof ab.resize === "function" && ab.maxByteLength === max ? ab : null;
  } catch {
    return null;
  }
}

export type LinePartKind = "line" | "over" | "long";

/** One part of the stream; reused from call to call (its views are made only when asked for). */
export class LinePart {
  /**
   * `line`: a whole line. `over`: a piece of a line longer than maxKept.
   * `long`: that line's last piece (possibly empty); `length` is its full length.
   */
  kind: LinePartKind = "line";
  /** A "\n" ended the line (`line` and `long`); false for an unterminated last line. */
  ends = true;
  /** The part's length; for `long`, the whole line's (without its "\n"). */
  length = 0;
  private buf: Uint8Array = EMPTY;
  private start = 0;
  private end = 0;

  /** The part's bytes, without a "\n". */
  get bytes(): Uint8Array {
    return this.buf.subarray(this.start, this.end);
  }

  /** The same bytes with the "\n" that ended them, when one did: the stream exactly as it came. */
  get raw(): Uint8Array {
    return this.buf.subarray(this.start, this.ends ? this.end + 1 : this.end);
  }

  /** Points the part at buf[start, end) (and the "\n" at `end` when `ends`). */
  set(kind: LinePartKind, buf: Uint8Array, start: number, end: number, ends: boolean): this {
    this.kind = kind;
    this.buf = buf;
    this.start = start;
    this.end = end;
    this.ends = ends;
    this.length = end - start;
    return this;
  }
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
  /** The open line's bytes so far, once they passed GROW_FROM (fresh chunks only): `kept` is empty then. */
  private grown: Growable | null = null;
  private readonly part = new LinePart();

  constructor(
    private readonly maxKept: number,
    private readonly freshChunks = false,
  ) {}

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
    if (this.queue.length > 0) return this.piece(this.queue.shift()!);
    const chunk = this.chunk;
    while (this.pos < chunk.length) {
      const start = this.pos;
      const nl = chunk.indexOf(NL, start);
      if (nl < 0) {
        const n = chunk.length - start;
        this.pos = chunk.length;
        if (this.overLen >= 0) {
          this.overLen += n;
          return this.part.set("over", chunk, start, chunk.length, false);
        }
        if (this.keptLen + n > this.maxKept) {
          this.overLen = this.keptLen + n;
          this.queue = this.grown !== null ? [new Uint8Array(this.grown, 0, this.keptLen)] : this.kept;
          this.queue.push(chunk.subarray(start));
          this.kept = [];
          this.keptLen = 0;
          this.grown = null;
          return this.piece(this.queue.shift()!);
        }
        this.keep(chunk.subarray(start));
        return null;
      }
      this.pos = nl + 1;
      if (this.overLen >= 0) {
        const p = this.part.set("long", chunk, start, nl, true);
        p.length = this.overLen + (nl - start);
        this.overLen = -1;
        return p;
      }
      if (this.keptLen === 0) return this.part.set("line", chunk, start, nl, true);
      return this.joined(chunk.subarray(start, nl), true);
    }
    if (!this.ending) return null;
    this.ending = false;
    if (this.overLen >= 0) {
      const p = this.part.set("long", EMPTY, 0, 0, false);
      p.length = this.overLen;
      this.overLen = -1;
      return p;
    }
    if (this.keptLen > 0) return this.joined(EMPTY, false);
    return null;
  }

  /** Keeps a piece of the open line (a view into the chunk, which it copies unless the chunks are fresh). */
  private keep(piece: Uint8Array): void {
    const at = this.keptLen;
    this.keptLen += piece.length;
    if (this.grown !== null) {
      this.grown.resize(this.keptLen);
      new Uint8Array(this.grown, at, piece.length).set(piece);
      return;
    }
    this.kept.push(this.freshChunks ? piece : piece.slice());
    if (!this.freshChunks || this.keptLen <= GROW_FROM) return;
    // Room for the whole line and its "\n" reserved, taken as it comes.
    const grown = growable(this.keptLen, this.maxKept + 1);
    if (grown === null) return;
    const into = new Uint8Array(grown);
    let o = 0;
    for (const p of this.kept) {
      into.set(p, o);
      o += p.length;
    }
    this.kept = [];
    this.grown = grown;
  }

  /** The kept pieces and `tail` as one line (with its "\n" in `raw` when it ends). */
  private joined(tail: Uint8Array, ends: boolean): LinePart {
    const len = this.keptLen + tail.length;
    let raw: Uint8Array;
    const grown = this.grown;
    this.grown = null;
    if (grown !== null && len + 1 <= grown.maxByteLength) {
      grown.resize(len + (ends ? 1 : 0));
      raw = new Uint8Array(grown, 0, grown.byteLength);
      raw.set(tail, this.keptLen);
      if (ends) raw[len] = NL;
    } else if (grown !== null) {
      // Its last piece takes the line past what the buffer may grow to: copied whole, as it would be.
      raw = new Uint8Array(len + (ends ? 1 : 0));
      raw.set(new Uint8Array(grown, 0, this.keptLen));
      raw.set(tail, this.keptLen);
      if (ends) raw[len] = NL;
    } else if (!ends && tail.length === 0 && this.kept.length === 1) raw = this.kept[0]!;
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
    return this.part.set("line", raw, 0, len, ends);
  }

  /** A piece of a line over maxKept, not ended. */
  private piece(bytes: Uint8Array): LinePart {
    return this.part.set("over", bytes, 0, bytes.length, false);
  }
}
