/**
 * Bytes → frames. MCP's stdio transport delimits JSON-RPC messages with "\n"
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#stdio).
 * The splitter only observes: the relay has already forwarded every byte it
 * is handed, so nothing here can alter, hold or drop traffic.
 *
 * A frame is the bytes between two "\n" (a "\r" before the "\n" stays in the
 * frame; JSON treats it as whitespace). A frame whose length exceeds
 * `maxFrame` is never delivered, however the reads split it, and is counted.
 */
export interface FrameSink {
  /** A complete frame, without its "\n". The view is only valid during the call. */
  frame(bytes: Uint8Array, terminated: boolean): void;
  /** A frame longer than maxFrame was skipped; `length` is its full length. */
  oversize(length: number): void;
}

const NL = 0x0a;

export class FrameSplitter {
  private parts: Uint8Array[] = [];
  private partLen = 0;
  /** Length of the current frame so far, counting bytes no longer kept. */
  private curLen = 0;
  private skipping = false;

  constructor(
    private readonly maxFrame: number,
    private readonly sink: FrameSink,
  ) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, start);
      if (nl < 0) {
        this.keep(chunk, start, chunk.length);
        return;
      }
      this.finish(chunk, start, nl, true);
      start = nl + 1;
    }
  }

  /** The stream ended: a final frame without "\n" is still a frame. */
  end(): void {
    if (this.curLen > 0) this.finish(new Uint8Array(0), 0, 0, false);
  }

  private keep(chunk: Uint8Array, from: number, to: number): void {
    const n = to - from;
    if (n === 0) return;
    this.curLen += n;
    if (this.skipping) return;
    if (this.curLen > this.maxFrame) {
      this.skipping = true;
      this.parts = [];
      this.partLen = 0;
      return;
    }
    // Copy: the relay may hand the chunk to a writer that owns it after this call.
    this.parts.push(chunk.slice(from, to));
    this.partLen += n;
  }

  private finish(chunk: Uint8Array, from: number, to: number, terminated: boolean): void {
    const len = this.curLen + (to - from);
    if (this.skipping || len > this.maxFrame) {
      this.sink.oversize(len);
    } else if (this.partLen === 0) {
      this.sink.frame(chunk.subarray(from, to), terminated);
    } else {
      const whole = new Uint8Array(len);
      let at = 0;
      for (const p of this.parts) {
        whole.set(p, at);
        at += p.length;
      }
      whole.set(chunk.subarray(from, to), at);
      this.sink.frame(whole, terminated);
    }
    this.parts = [];
    this.partLen = 0;
    this.curLen = 0;
    this.skipping = false;
  }
}
