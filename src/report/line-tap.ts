/**
 * The ledger's lines as the reader was handed them, so the report shows a
 * row exactly as the file holds it (its chain value included, numbers as
 * written) without serializing the parsed row again, and shows the very
 * bytes that were verified, not a second read of a file that may have changed.
 *
 * `chunks(path)` yields a file's bytes unchanged and remembers the lines of
 * the last KEEP chunks. The reader hands out an operation once the row after
 * its last row has been checked, so the row that finished it is still
 * remembered then, and so are the rows it joins unless they lie chunks
 * back; `bytes(line)` (or `text(line)`) is null for a line no longer
 * remembered (or held longer, as `--last` does), and the caller falls back
 * to the parsed row.
 */

import { LF as NL } from "../core/ascii.ts";
import { fileChunks } from "../verify/ledger-verifier.ts";

interface Piece {
  /** Line number of the first line that starts in `bytes`. */
  first: number;
  bytes: Uint8Array;
  /** Start offset of each line in `bytes`, and one past the end of the last complete one. */
  starts: number[];
}

/**
 * Pieces remembered (two per chunk: the line that began in the chunk before,
 * and the rest): the chunk being read, the one before (the row after the
 * last may be in the next), the two a reader that verifies ahead has read
 * beyond the one it hands out (src/read/verify-ahead.ts), and a few for the
 * rows an operation joins further back.
 */
const KEEP = 12;

export class LineTap {
  private readonly decoder = new TextDecoder("utf-8");
  private recent: Piece[] = [];
  /** The pieces of a line not yet ended (a line may span many chunks: joined once, when it ends). */
  private carry: Uint8Array[] = [];
  private next = 1;

  async *chunks(path: string): AsyncGenerator<Uint8Array> {
    this.recent = [];
    this.carry = [];
    this.next = 1;
    for await (const chunk of fileChunks(path)) {
      this.index(chunk);
      yield chunk;
    }
    // A last line without "\n" is still a line.
    if (this.carry.length > 0) this.index(new Uint8Array([NL]));
  }

  /** The text of line `n` (without its "\n"), or null when it is no longer remembered. */
  text(n: number): string | null {
    const b = this.bytes(n);
    return b === null ? null : this.decoder.decode(b);
  }

  /** The bytes of line `n` (without its "\n"; a view, not a copy), or null when it is no longer remembered. */
  bytes(n: number): Uint8Array | null {
    for (let k = this.recent.length - 1; k >= 0; k--) {
      const p = this.recent[k]!;
      const i = n - p.first;
      if (i >= 0 && i < p.starts.length - 1) return p.bytes.subarray(p.starts[i]!, p.starts[i + 1]! - 1);
    }
    return null;
  }

  private index(chunk: Uint8Array): void {
    if (chunk.indexOf(NL) < 0) {
      // fileChunks hands out a fresh buffer each time: keeping it is safe.
      this.carry.push(chunk);
      return;
    }
    let from = 0;
    if (this.carry.length > 0) {
      // A line that began in a chunk before: copied whole into a piece of its own, so that every
      // remembered line is in one piece and the rest of the chunk is kept as it is.
      from = chunk.indexOf(NL) + 1;
      const line = Buffer.concat([...this.carry, chunk.subarray(0, from)]);
      this.carry = [];
      this.remember({ first: this.next, bytes: line, starts: [0, line.length] });
    }
    const starts = [from];
    let at = chunk.indexOf(NL, from);
    while (at >= 0) {
      starts.push(at + 1);
      at = chunk.indexOf(NL, at + 1);
    }
    const done = starts[starts.length - 1]!;
    if (done < chunk.length) this.carry.push(chunk.subarray(done));
    if (starts.length > 1) this.remember({ first: this.next, bytes: chunk, starts });
  }

  private remember(p: Piece): void {
    this.recent.push(p);
    if (this.recent.length > KEEP) this.recent.shift();
    this.next += p.starts.length - 1;
  }
}
