/**
 * The complete lines of a ledger file, read from a byte offset on: what a
 * shipper sends. A last line without its "\n" is still being written (or was
 * torn): it is never returned, and the offset stays before it.
 */
import { open } from "node:fs/promises";
import { LineSplitter } from "../core/lines.ts";

const READ_SIZE = 1 << 20;

export interface LineBatch {
  /** Each complete line, its "\n" included: the file's exact bytes. */
  lines: Uint8Array[];
  /** The byte offset after the last complete line returned. */
  next: number;
}

/**
 * Up to `maxLines` complete lines (and about `maxBytes`, at least one line)
 * starting at byte `from`; none when no complete line follows yet.
 */
export async function readLines(path: string, from: number, maxLines: number, maxBytes: number): Promise<LineBatch> {
  const fh = await open(path, "r");
  try {
    const lines: Uint8Array[] = [];
    // No limit on what is kept of an open line: every line is sent whole. The
    // splitter is never ended, so a last line without its "\n" never comes out.
    // Each read gets a buffer of its own, so lines can stay views into it.
    const splitter = new LineSplitter(Number.POSITIVE_INFINITY, true);
    let pos = from;
    let readAt = from;
    let bytes = 0;
    for (;;) {
      const buf = new Uint8Array(READ_SIZE);
      const { bytesRead } = await fh.read(buf, 0, buf.length, readAt);
      if (bytesRead === 0) return { lines, next: pos };
      readAt += bytesRead;
      splitter.feed(buf.subarray(0, bytesRead));
      for (let part = splitter.next(); part !== null; part = splitter.next()) {
        const line = part.raw;
        lines.push(line);
        pos += line.length;
        bytes += line.length;
        if (lines.length >= maxLines || bytes >= maxBytes) return { lines, next: pos };
      }
    }
  } finally {
    await fh.close();
  }
}

/** The byte offset after line `n` (0: the start), or null when the file has fewer complete lines. */
export async function offsetAfterLine(
  path: string,
  n: number,
): Promise<{ offset: number; line: Uint8Array | null } | null> {
  let offset = 0;
  let last: Uint8Array | null = null;
  let count = 0;
  while (count < n) {
    const b = await readLines(path, offset, Math.min(n - count, 4096), 8 << 20);
    if (b.lines.length === 0) return null;
    count += b.lines.length;
    last = b.lines[b.lines.length - 1]!;
    offset = b.next;
  }
  return { offset, line: last };
}

/** Lines read at a time by a LineIndex (and about as many bytes as a shipper's batch). */
const INDEX_LINES = 4096;
const INDEX_BYTES = 8 << 20;

/**
 * A ledger's complete lines by number, for comparing what a stream holds
 * with the file: lines asked for in order are read a batch at a time, and
 * the byte offset where each batch ended is kept (a few numbers per batch
 * read), so a line asked for out of order is read from the nearest one.
 */
export class LineIndex {
  /** Known line starts, by line number: [line, offset], ascending. */
  private readonly marks: [number, number][] = [[1, 0]];
  private cached: { first: number; lines: Uint8Array[] } | null = null;

  constructor(readonly path: string) {}

  /** Line n (1-based) with its "\n", or null when the file has no complete line n. */
  async line(n: number): Promise<Uint8Array | null> {
    if (!(n >= 1)) return null;
    for (;;) {
      const c = this.cached;
      if (c !== null && n >= c.first && n < c.first + c.lines.length) return c.lines[n - c.first]!;
      const [first, offset] = this.markAtOrBefore(n);
      const b = await readLines(this.path, offset, INDEX_LINES, INDEX_BYTES);
      if (b.lines.length === 0) return null;
      this.cached = { first, lines: b.lines };
      this.mark(first + b.lines.length, b.next);
      if (n < first + b.lines.length) return b.lines[n - first]!;
    }
  }

  private markAtOrBefore(n: number): [number, number] {
    let lo = 0;
    let hi = this.marks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.marks[mid]![0] <= n) lo = mid;
      else hi = mid - 1;
    }
    return this.marks[lo]!;
  }

  private mark(line: number, offset: number): void {
    const at = this.markAtOrBefore(line);
    if (at[0] === line) return;
    this.marks.splice(this.marks.indexOf(at) + 1, 0, [line, offset]);
  }
}
