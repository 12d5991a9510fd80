/**
 * The lines of one ledger write, gathered into a buffer that is kept from
 * write to write. A row's line comes from the line writer as a view of its
 * own reused buffer (src/format/line.ts), so it is copied once, here, rather
 * than copied out per row and then again to join the rows of a write
 * (Buffer.concat of many small parts costs a native call per part under Node).
 * A write is handed its own bytes (take), never a view of the kept buffer:
 * an AppendFile may hold on to what it is given.
 */
import { concatBytes } from "../core/bytes.ts";

/** Most bytes gathered in the kept buffer before they are moved out to a part of their own. */
const KEEP_MAX = 4 << 20;

export class LineBatch {
  private buf = new Uint8Array(1 << 16);
  /** Bytes in buf not yet moved to parts. */
  private run = 0;
  private parts: Uint8Array[] = [];
  /** Bytes added since the last take. */
  total = 0;

  /** Adds a line (copied: `line` may be a view its maker reuses). */
  add(line: Uint8Array): void {
    this.total += line.length;
    if (this.run + line.length > KEEP_MAX) this.spill();
    if (line.length > KEEP_MAX) {
      this.parts.push(line.slice());
      return;
    }
    if (this.run + line.length > this.buf.length) {
      const next = new Uint8Array(Math.min(KEEP_MAX, Math.max(2 * this.buf.length, this.run + line.length)));
      next.set(this.buf.subarray(0, this.run));
      this.buf = next;
    }
    this.buf.set(line, this.run);
    this.run += line.length;
  }

  /** Forgets what was added since the last take. */
  clear(): void {
    this.parts = [];
    this.run = 0;
    this.total = 0;
  }

  /** Everything added since the last take, as bytes of its own; the batch is empty after. */
  take(): Uint8Array {
    this.spill();
    const out = concatBytes(this.parts, this.total);
    this.parts = [];
    this.total = 0;
    return out;
  }

  private spill(): void {
    if (this.run === 0) return;
    this.parts.push(this.buf.slice(0, this.run));
    this.run = 0;
  }
}
