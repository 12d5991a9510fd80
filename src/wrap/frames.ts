/**
 * Bytes → frames. MCP's stdio transport delimits JSON-RPC messages with "\n"
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#stdio).
 * The splitter only observes: the relay has already forwarded every byte it
 * is handed, so nothing here can alter, hold or drop traffic.
 *
 * A frame is the bytes between two "\n" (a "\r" before the "\n" stays in the
 * frame; JSON treats it as whitespace). A frame whose length exceeds
 * `maxFrame` is never delivered, however the reads split it, and is counted.
 * The cutting itself is src/core/lines.ts.
 */
import { LineSplitter } from "../core/lines.ts";

export interface FrameSink {
  /** A complete frame, without its "\n". The view is only valid during the call. */
  frame(bytes: Uint8Array, terminated: boolean): void;
  /** A frame longer than maxFrame was skipped; `length` is its full length. */
  oversize(length: number): void;
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
      if (p.kind === "long") this.sink.oversize(p.length);
      else if (p.kind === "line") {
        if (p.length > this.maxFrame) this.sink.oversize(p.length);
        else this.sink.frame(p.bytes, p.ends);
      }
    }
  }
}
