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
