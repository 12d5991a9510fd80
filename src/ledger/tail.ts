/**
 * What the end of a ledger file holds, read backwards from its size, for the
 * writer (src/ledger/ledger-writer.ts) to append after: the chain the next row
 * continues from, and whether the last line is unterminated. Each line is
 * judged as `seam verify` judges it (src/format/line.ts).
 *
 * An unterminated last line (torn by a crash mid-write, or bytes someone
 * appended to be taken in as a row) is cut off under the lock before the next
 * rows, and recorded in its place by a ledger_repair row (its first bytes in
 * torn_text), with no seq (it is in no session's sequence), chained from the
 * last row before it. Without the lock another writer may be mid-line, so
 * nothing is cut: "\n" is written so the tail stands on its own line, a torn
 * one gets a ledger_repair row that names it, one that parses is continued
 * from.
 */

import { LF } from "../core/ascii.ts";
import { GENESIS } from "../core/chain.ts";
import { StreamDigest } from "../core/digest.ts";
import { CHAIN_TAIL_BYTES, chainClaim, chainFromTail, classifyLine, MAX_LINE_BYTES } from "../format/line.ts";
import { TORN_TEXT_BYTES, type TornLine } from "../format/row.ts";
import type { AppendFile } from "../runtime/types.ts";

const READ_CHUNK = 64 * 1024;

/** How the writer appends after the tail: from `start`, continuing `prev`, after a "\n" (`terminate`) and a ledger_repair row (`repair`). */
export interface SettledTail {
  start: number;
  prev: string;
  repair: TornLine | null;
  terminate: boolean;
}

/**
 * Settles the end of a file of `size` bytes for the next append. With the
 * lock (`locked`) an unterminated last line is cut off (`cut` is told where)
 * and kept only as a record; without it, nothing is cut.
 */
export async function settleTail(
  file: AppendFile,
  size: number,
  locked: boolean,
  cut: (at: number) => void,
): Promise<SettledTail> {
  let start = size;
  let repair: TornLine | null = null;
  let terminate = false;
  const tail = await inspectTail(file, start);
  let prev = tail.prev;
  if (tail.terminate && locked) {
    // Under the lock, an unterminated tail (torn by a crash, or bytes someone
    // appended to be taken in as a row) is cut off and kept only as a record.
    const torn = tail.torn ?? (await describeTorn(file, tail.lineStart, start));
    const text = await file.readAt(tail.lineStart, Math.min(torn.bytes, TORN_TEXT_BYTES));
    await file.truncate(tail.lineStart);
    cut(tail.lineStart);
    start = tail.lineStart;
    repair = { ...torn, cut: text };
  } else if (tail.terminate) {
    // Without the lock another writer may be mid-line: nothing is cut, the tail gets its own line.
    terminate = true;
    if (tail.keptChain) prev = tail.keptChain;
    if (tail.torn) repair = tail.torn;
  }
  return { start, prev, repair, terminate };
}

interface Tail {
  /** The chain the next row continues from. */
  prev: string;
  /** The last line has no "\n". */
  terminate: boolean;
  /** Where that last line starts. */
  lineStart: number;
  /** That last line is torn (unparseable): described. */
  torn?: TornLine;
  /** It parses: the chain it passes on (null: none), continued from when it cannot be cut. */
  keptChain?: string | null;
}

/** Reads a file backwards from `end`, a chunk at a time, to find line starts. */
class BackReader {
  private buf: Uint8Array = new Uint8Array(0);
  private bufStart = 0;
  constructor(private readonly file: AppendFile) {}

  private async load(pos: number): Promise<void> {
    const from = Math.max(0, pos + 1 - READ_CHUNK);
    this.buf = await this.file.readAt(from, pos + 1 - from);
    this.bufStart = from;
    if (this.buf.length !== pos + 1 - from) throw new Error("ledger shrank while being read");
  }

  async byteAt(pos: number): Promise<number> {
    if (pos < this.bufStart || pos >= this.bufStart + this.buf.length) await this.load(pos);
    return this.buf[pos - this.bufStart]!;
  }

  /** The offset where the line holding byte `end - 1` starts (just after the previous "\n", or 0). */
  async lineStart(end: number): Promise<number> {
    let pos = end - 1;
    while (pos >= 0) {
      if (pos < this.bufStart || pos >= this.bufStart + this.buf.length) await this.load(pos);
      const i = this.buf.lastIndexOf(LF, pos - this.bufStart);
      if (i >= 0) return this.bufStart + i + 1;
      pos = this.bufStart - 1;
    }
    return 0;
  }
}

type LineVerdict = { kind: "blank" } | { kind: "unparseable" } | { kind: "row"; chain: string | null };

/** What `seam verify` makes of the line [start, end): blank, unparseable, or a row and the chain it passes on (null: none). */
async function judgeLine(file: AppendFile, start: number, end: number): Promise<LineVerdict> {
  if (end - start > MAX_LINE_BYTES) {
    // Not parsed, not read whole: its chain is read from its end, as `seam verify` does.
    const claimed = chainFromTail(await file.readAt(end - CHAIN_TAIL_BYTES, CHAIN_TAIL_BYTES));
    return claimed === null ? { kind: "unparseable" } : { kind: "row", chain: claimed };
  }
  const line = classifyLine(await file.readAt(start, end - start));
  if (line.kind !== "row") return line;
  // Only a chained row hands on its chain; any other claim leaves the one before.
  const claim = chainClaim(line.row);
  return { kind: "row", chain: claim.kind === "chained" ? claim.chain : null };
}

/** The chain a row appended at `end` (a line boundary) continues from. */
async function chainBefore(file: AppendFile, reader: BackReader, end: number): Promise<string> {
  let pos = end;
  while (pos > 0) {
    const start = await reader.lineStart(pos - 1);
    const v = await judgeLine(file, start, pos - 1);
    if (v.kind === "row" && v.chain !== null) return v.chain;
    pos = start;
  }
  return GENESIS;
}

/**
 * What the end of the file holds. Without the lock a complete last row whose
 * "\n" never came is continued from; with it, any unterminated tail is cut,
 * so `prev` is always the chain before the last line's start for a tail.
 */
async function inspectTail(file: AppendFile, size: number): Promise<Tail> {
  if (size === 0) return { prev: GENESIS, terminate: false, lineStart: 0 };
  const reader = new BackReader(file);
  if ((await reader.byteAt(size - 1)) === LF)
    return { prev: await chainBefore(file, reader, size), terminate: false, lineStart: size };
  const start = await reader.lineStart(size);
  const v = await judgeLine(file, start, size);
  const prev = await chainBefore(file, reader, start);
  if (v.kind === "unparseable")
    return { prev, terminate: true, lineStart: start, torn: await describeTorn(file, start, size) };
  // Parseable: kept (and continued from) only where it cannot be cut.
  return { prev, terminate: true, lineStart: start, keptChain: v.kind === "row" ? v.chain : null };
}

async function describeTorn(file: AppendFile, start: number, end: number): Promise<TornLine> {
  let lines = 1;
  for (let pos = 0; pos < start; pos += READ_CHUNK * 16) {
    const chunk = await file.readAt(pos, Math.min(READ_CHUNK * 16, start - pos));
    for (let i = chunk.indexOf(LF); i >= 0; i = chunk.indexOf(LF, i + 1)) lines++;
    if (chunk.length === 0) break;
  }
  const digest = new StreamDigest();
  for (let pos = start; pos < end; pos += READ_CHUNK * 16) {
    const chunk = await file.readAt(pos, Math.min(READ_CHUNK * 16, end - pos));
    digest.update(chunk);
    if (chunk.length === 0) break;
  }
  return { line: lines, bytes: end - start, digest: digest.digest() };
}
