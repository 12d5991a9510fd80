/** The last operations of a ledger (`--last N`): its end read back until they are found. */
import { open } from "node:fs/promises";
import { getField, isObject, type Json, parseJson } from "../core/json.ts";
import { LineSplitter } from "../core/lines.ts";
import { type Filters, OpFilter } from "./filters.ts";
import { type Operation, OperationJoiner } from "./read-model.ts";

/**
 * `--last N` without verification: the last `n` operations that pass the
 * filters, read from the end of the file (256 KiB from the end, then four
 * times as much until enough are found or the start is reached), so the time
 * does not grow with the file. Nothing is vouched for: no chain is checked.
 * Line numbers are exact when the start was reached (`exact`); otherwise
 * they count back from the end, -1 being the last line. A last line without
 * its "\n" (still being written) is left out.
 */
export async function readTail(
  path: string,
  n: number,
  filters: Filters = {},
): Promise<{ ops: Operation[]; exact: boolean }> {
  const filter = new OpFilter(filters);
  const fh = await open(path, "r");
  try {
    const size = (await fh.stat()).size;
    let want = 256 * 1024;
    for (;;) {
      const start = Math.max(0, size - want);
      const buf = new Uint8Array(size - start);
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await fh.read(buf, got, buf.length - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const bytes = buf.subarray(0, got);
      const end = bytes.lastIndexOf(0x0a) + 1;
      // From the start of the file, or from the first whole line in the block.
      const from = start === 0 ? 0 : bytes.indexOf(0x0a) + 1;
      // Whole lines only, so nothing is kept across feeds; each line a view of `bytes`, which is not reused.
      const lines: Uint8Array[] = [];
      const split = new LineSplitter(0);
      split.feed(bytes.subarray(from, end));
      for (let part = split.next(); part !== null; part = split.next()) lines.push(part.bytes);
      const exact = start === 0;
      const joiner = new OperationJoiner(path);
      const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
      const found: Operation[] = [];
      const offset = exact ? 1 : -lines.length;
      const take = (ops: Operation[]) => {
        for (const op of ops) if (filter.test(op)) found.push(op);
      };
      for (let i = 0; i < lines.length; i++) {
        let row: Json;
        try {
          row = parseJson(decoder.decode(lines[i]!));
        } catch {
          continue;
        }
        if (isObject(row) && getField(row, "chain") !== undefined) row = withoutChain(row);
        take(joiner.add(row, i + offset));
      }
      take(joiner.flush());
      if (found.length >= n || exact) {
        found.sort((a, b) => a.line - b.line);
        return { ops: found.slice(Math.max(0, found.length - n)), exact };
      }
      want *= 4;
    }
  } finally {
    await fh.close().catch(() => {});
  }
}

function withoutChain(row: Json): Json {
  if (row instanceof Map) {
    row.delete("chain");
    return row;
  }
  const { chain: _, ...rest } = row as { [k: string]: Json };
  return rest;
}
