/**
 * Rows per second one LedgerWriter appends under each fsync policy, over
 * both file sinks, in two patterns:
 *   burst   the relay's pattern under load: rows appended without awaiting,
 *           1000 per event-loop turn, then `end()` (which waits for all);
 *   serial  each row awaited before the next (what --write-ahead costs a call:
 *           every row is its own flush, lock and, under always, fsync).
 * Ratios are against `never` for the same sink and pattern.
 * Usage: bun bench/ledger.ts [burstRows] [serialRows] [--smoke] [--json FILE]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FsyncPolicy } from "../src/ledger/file-sync.ts";
import { LedgerWriter } from "../src/ledger/ledger-writer.ts";
import { openAppend } from "../src/runtime/file.ts";
import type { AppendFile } from "../src/runtime/types.ts";
import { Flags, type Row, TOOL_CALL_FIELDS, writeResult } from "./lib.ts";

const flags = new Flags();
const sizes = process.argv.slice(2).filter((a) => /^\d+$/.test(a));
const burstRows = Number(sizes[0] ?? (flags.has("--smoke") ? 2_000 : 100_000));
const serialRows = Number(sizes[1] ?? (flags.has("--smoke") ? 50 : 2_000));
const summary: Row[] = [];
const dir = mkdtempSync(join(tmpdir(), "seam-bench-ledger-"));
const fields = TOOL_CALL_FIELDS;

async function run(
  sink: (p: string) => Promise<AppendFile>,
  fsync: FsyncPolicy,
  pattern: "burst" | "serial",
): Promise<number> {
  const path = join(dir, `${fsync}-${pattern}-${Math.random()}.jsonl`);
  const w = await LedgerWriter.open({ path, session: "bench", server: "bench", fsync, openAppend: sink });
  const n = pattern === "burst" ? burstRows : serialRows;
  const t0 = performance.now();
  if (pattern === "burst") {
    for (let i = 0; i < n; i++) {
      void w.append("tool_call", fields);
      if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
  } else {
    for (let i = 0; i < n; i++) await w.append("tool_call", fields);
  }
  await w.end({ reason: "bench", calls: n });
  const secs = (performance.now() - t0) / 1000;
  if (w.rowsWritten !== n + 1) throw new Error(`wrote ${w.rowsWritten} of ${n + 1}`);
  rmSync(path);
  return (n + 1) / secs;
}

console.log(
  `ledger append rows/s (${process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`}; ${dir})`,
);
console.log("sink       pattern  policy   rows/s      ratio vs never");
for (const [name, sink] of [["file", openAppend]] as const) {
  for (const pattern of ["burst", "serial"] as const) {
    const rates: Partial<Record<FsyncPolicy, number>> = {};
    for (const policy of ["never", "batch", "always"] as const) {
      await run(sink, policy, pattern); // warm-up
      rates[policy] = await run(sink, policy, pattern);
      const r = rates[policy]!;
      console.log(
        `${name.padEnd(10)} ${pattern.padEnd(8)} ${policy.padEnd(8)} ${Math.round(r).toLocaleString("en-US").padStart(10)}  ${(r / rates.never!).toFixed(3)}`,
      );
      if (name === "file") {
        summary.push({
          section: "ledger append (LedgerWriter to a file, Bun)",
          name: `${pattern}, --fsync ${policy}`,
          value: `${Math.round(r).toLocaleString("en-US")} rows/s`,
          ratio: policy === "never" ? undefined : `${(r / rates.never!).toFixed(2)}x never`,
        });
      }
    }
  }
}
rmSync(dir, { recursive: true, force: true });
writeResult(flags, { script: "ledger", rows: summary, details: { burstRows, serialRows, rows: summary } });
