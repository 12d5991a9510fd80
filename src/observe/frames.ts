/**
 * Bytes → frames. MCP's stdio transport delimits JSON-RPC messages with "\n"
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#stdio).
 * The splitter only observes: the relay has already forwarded every byte it
 * is handed, so nothing here can alter, hold or drop traffic.
 *
 * A frame is the bytes between two "\n" (a "\r" before the "\n" stays in the
 * frame; JSON treats it as whitespace). A frame whose length exceeds
 * `maxFrame` is never delivered, however the reads split it: it is counted,
 * or, for a sink with `longFrame`, described (length, digest, first bytes).
 * The cutting itself is src/core/lines.ts.
 */
import { digestBytes, StreamDigest } from "../core/digest.ts";
import { LineSplitter } from "../core/lines.ts";

/** What is known of a frame too long to read: its length, raw-bytes digest and first bytes (without its "\n"). */
export interface LongFrame {
  length: number;
  digest: string;
  head: Uint8Array;
}

/** Bytes kept of a long frame's start, for its row. */
export const HEAD_BYTES = 64;

/** Builds a LongFrame from the pieces of a line as they pass, holding only its first HEAD_BYTES. */
export class LongFrameDigest {
  private digest = new StreamDigest();
  private head = new Uint8Array(0);

  add(piece: Uint8Array): void {
    this.digest.update(piece);
    if (this.head.length < HEAD_BYTES) {
      const more = piece.subarray(0, HEAD_BYTES - this.head.length);
      const h = new Uint8Array(this.head.length + more.length);
      h.set(this.head);
      h.set(more, this.head.length);
      this.head = h;
    }
  }

  /** The frame ended: what it was; ready for the next one. */
  finish(length: number): LongFrame {
    const out = { length, digest: this.digest.digest(), head: this.head };
    this.digest = new StreamDigest();
    this.head = new Uint8Array(0);
    return out;
  }

  /** A long frame that lies whole in one chunk. */
  static of(bytes: Uint8Array): LongFrame {
    return { length: bytes.length, digest: digestBytes(bytes), head: bytes.slice(0, HEAD_BYTES) };
  }
}

export interface FrameSink {
  /** A complete frame, without its "\n". The view is only valid during the call. */
  frame(bytes: Uint8Array, terminated: boolean): void;
  /** A frame longer than maxFrame was skipped; `length` is its full length. */
  oversize(length: number): void;
  /** The same frame, with its digest and first bytes, for a sink that rows it. */
  longFrame?(f: LongFrame): void;
}

export class FrameSplitter {
  private readonly lines: LineSplitter;

  constructor(
    private readonly maxFrame: number,
    private readonly sink: FrameSink,
  ) {
    this.lines = new LineSplitter(maxFrame);
  }

  push(chunk: Uint8Array): void {
    this.lines.feed(chunk);
    this.drain();
  }

  /** The stream ended: a final frame without "\n" is still a frame. */
  end(): void {
    this.lines.end();
    this.drain();
  }

  private drain(): void {
    for (let p = this.lines.next(); p !== null; p = this.lines.next()) {
      if (p.kind === "over") {
        if (this.sink.longFrame) this.long.add(p.bytes);
      } else if (p.kind === "long") {
        if (this.sink.longFrame) {
          this.long.add(p.bytes);
          this.sink.longFrame(this.long.finish(p.length));
        } else this.sink.oversize(p.length);
      } else if (p.length > this.maxFrame) {
        if (this.sink.longFrame) this.sink.longFrame(LongFrameDigest.of(p.bytes));
        else this.sink.oversize(p.length);
      } else this.sink.frame(p.bytes, p.ends);
    }
  }

  private readonly long = new LongFrameDigest();
}
