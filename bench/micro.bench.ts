/**
 * In-process micro-benchmarks (mitata's `measure`); in each group seam's own
 * code is compared with the engine's way of doing the same job, in the same run:
 *   digest / serialize / parse, row and 1 MB   the cases of bench/digest.bench.ts
 *   sha256, one row                            SHA-256 of a row's chain form (about 400
 *       bytes) as seam hashes it (src/core/sha256.ts: the runtime's one-shot, Bun's
 *       under Bun) vs node:crypto's one-shot hash
 *   chain append, per row                      a wrap-shaped tool_call row through
 *       LedgerWriter.append into an in-memory file, 1000 rows a burst (what the
 *       relay does under load); chainOf + lineForm alone; vs JSON.stringify + SHA-256
 *   verify, per row                            LedgerVerifier over 1000 such rows
 *       (parse, chain, sessions) vs JSON.parse + JSON.stringify + SHA-256 of each line
 *   record, per call                           what a recording thread does for one
 *       tools/call (src/wrap/recording.ts: both frames split and observed, digests,
 *       the row made, chained and written to an in-memory file), 1000 calls a
 *       burst, warm; vs JSON.parse of both frames + the floor of a row
 *   proxy record, per exchange                 what seam proxy records for one tools/call
 *       answered as an SSE stream (bench/proxy-record.bench.ts), 1000 exchanges a
 *       burst, warm; vs JSON.parse of both frames + two rows hashed
 *
 *   bun bench/micro.bench.ts [--smoke] [--json FILE]
 * --smoke runs every case a few times only, to prove the scripts still run.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measure } from "mitata";
import { createLog } from "../src/base/log.ts";
import { chainForm, lineForm } from "../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../src/core/chain.ts";
import type { Json, JsonObject } from "../src/core/json.ts";
import { installedSha256, sha256Hex, useSha256 } from "../src/core/sha256.ts";
import { LedgerWriter } from "../src/ledger/ledger-writer.ts";
import { runtime } from "../src/runtime/index.ts";
import type { AppendFile } from "../src/runtime/types.ts";
import { LedgerVerifier } from "../src/verify/ledger-verifier.ts";
import { Recording } from "../src/wrap/recording.ts";
import { digestCases, digestSizes, type MicroCase } from "./digest.bench.ts";
import { Flags, fmt, type Row, sha256Floor, writeResult } from "./lib.ts";
import { proxyRecordCases } from "./proxy-record.bench.ts";

const flags = new Flags();
const smoke = flags.has("--smoke");
const BURST = 1000;

/** An AppendFile in memory: the writer's own code path, without the disk. */
function memoryFile(): AppendFile & { bytes: () => Uint8Array; reset: () => void } {
  let parts: Uint8Array[] = [];
  let size = 0;
  return {
    async write(b) {
      parts.push(b);
      size += b.length;
    },
    async sync() {},
    async size() {
      return size;
    },
    async readAt(position, length) {
      return Buffer.concat(parts).subarray(position, position + length);
    },
    async truncate(n) {
      const all = Buffer.concat(parts).subarray(0, n);
      parts = [all];
      size = all.length;
    },
    async close() {},
    bytes: () => Buffer.concat(parts),
    reset() {
      parts = [];
      size = 0;
    },
  };
}

const fields = {
  tool: "search_documents",
  rpc_id: 4711,
  args_digest: "sha256:json-c14n:v1:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  result_digest: "sha256:json-c14n:v1:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
  status: "ok",
  ms: 3.25,
};

async function openWriter(file: AppendFile): Promise<LedgerWriter> {
  return LedgerWriter.open({
    path: "memory.jsonl",
    session: "0b7c6a52-8f43-4c1e-9d1a-3f0f4b8e2a61",
    server: "bench",
    fsync: "never",
    openAppend: async () => file,
    lock: async () => async () => {},
  });
}

// One writer for the whole run (its seq keeps counting); the file is emptied per burst.
const appendFile = memoryFile();
const writer = await openWriter(appendFile);
async function appendBurst(): Promise<void> {
  appendFile.reset();
  let last: Promise<boolean> | undefined;
  for (let i = 0; i < BURST; i++) last = writer.append("tool_call", fields);
  await last;
}

// A 1000-row ledger of one session, written by the real writer.
const ledgerFile = memoryFile();
const ledgerWriter = await openWriter(ledgerFile);
void ledgerWriter.append("session_begin", { command: ["bench"], runtime: "bench", raw_payloads: false });
for (let i = 0; i < BURST - 2; i++) void ledgerWriter.append("tool_call", { ...fields, rpc_id: i });
await ledgerWriter.end({ reason: "client_eof", exit_code: 0, calls: BURST - 2 });
const ledger = ledgerFile.bytes();
const ledgerLines = new TextDecoder().decode(ledger).split("\n").filter(Boolean);
if (ledgerLines.length !== BURST) throw new Error(`expected ${BURST} ledger rows, got ${ledgerLines.length}`);
{
  const v = new LedgerVerifier();
  v.push(ledger);
  const r = v.end();
  if (r.verdict !== "ok") throw new Error(`the generated ledger does not verify: ${r.verdict}`);
}

// A recording of one session over an in-memory ledger, fed request and answer frames as chunks.
const recordFile = memoryFile();
const recordDir = mkdtempSync(join(tmpdir(), "seam-micro-"));
const opened = await Recording.open(
  { ...runtime, openAppend: async () => recordFile },
  {
    ledger: join(recordDir, "l.jsonl"),
    session: "0b7c6a52-8f43-4c1e-9d1a-3f0f4b8e2a61",
    server: "bench",
    begin: {},
    raw: false,
    maxFrame: 64 << 20,
    fsync: "never",
    writeAhead: false,
    failClosed: false,
  },
  {},
  createLog(() => {}),
);
if (typeof opened === "string") throw new Error(opened);
const recording: Recording = opened;
recording.chunk(
  "c2s",
  new TextEncoder().encode(
    `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n`,
  ),
);
recording.chunk(
  "s2c",
  new TextEncoder().encode(
    `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}\n`,
  ),
);
const callFrames = Array.from({ length: BURST }, (_, i) =>
  new TextEncoder().encode(
    `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"quarterly report ${i}","limit":10}}}\n`,
  ),
);
const answerFrames = Array.from({ length: BURST }, (_, i) =>
  new TextEncoder().encode(
    `{"jsonrpc":"2.0","id":${i + 1},"result":{"content":[{"type":"text","text":"3 documents match quarterly report ${i}"}]}}\n`,
  ),
);
const callTexts = callFrames.map((b) => new TextDecoder().decode(b));
const answerTexts = answerFrames.map((b) => new TextDecoder().decode(b));
async function recordBurst(): Promise<void> {
  recordFile.reset();
  for (let i = 0; i < BURST; i++) {
    recording.chunk("c2s", callFrames[i]!);
    recording.chunk("s2c", answerFrames[i]!);
  }
  await recording.ledger.caughtUp();
}

const rowModel: JsonObject = new Map<string, Json>([
  ["evt", "tool_call"],
  ["seam", "mcp-stdio"],
  ["seam_impl", "seam/0.1.0"],
  ["session", "0b7c6a52-8f43-4c1e-9d1a-3f0f4b8e2a61"],
  ["seq", 7],
  ["server", "bench"],
  ...Object.entries(fields),
  ["ts", "2026-11-30T03:24:07.123Z"],
]);
const rowPlain = Object.fromEntries(rowModel);
const enc = new TextEncoder();

interface Case extends MicroCase {
  /** Operations one call of fn performs (results are per operation). */
  per?: number;
  fn: () => unknown;
}

const proxyRecord = await proxyRecordCases(BURST, memoryFile());

const rowForm = enc.encode(`genesis${chainForm(rowModel)}`);
const runtimeSha256 = installedSha256();
/** sha256Hex of one row's chain form with `backend` installed (null: node:crypto's one-shot). */
function hashRow(backend: typeof runtimeSha256): string {
  useSha256(backend);
  const hex = sha256Hex(rowForm, 16);
  useSha256(runtimeSha256);
  return hex;
}

const cases: Case[] = [
  ...digestCases,
  { group: "sha256, one row", name: "node:crypto one-shot (floor)", fn: () => hashRow(null) },
  { group: "sha256, one row", name: "sha256Hex (as seam hashes)", fn: () => hashRow(runtimeSha256) },
  {
    group: "chain append, per row",
    name: "JSON.stringify + sha256 (floor)",
    fn: () => sha256Floor(JSON.stringify(rowPlain)),
  },
  {
    group: "chain append, per row",
    name: "chainOf + lineForm",
    fn: () => {
      rowModel.delete("chain");
      rowModel.set("chain", chainOf(GENESIS, rowModel));
      return enc.encode(`${lineForm(rowModel)}\n`);
    },
  },
  { group: "chain append, per row", name: `LedgerWriter.append (burst of ${BURST})`, per: BURST, fn: appendBurst },
  {
    group: "record, per call",
    name: "JSON.parse of both frames + a row (floor)",
    per: BURST,
    fn: () => {
      for (let i = 0; i < BURST; i++) {
        JSON.parse(callTexts[i]!);
        JSON.parse(answerTexts[i]!);
        sha256Floor(JSON.stringify(rowPlain));
      }
    },
  },
  { group: "record, per call", name: `Recording (burst of ${BURST})`, per: BURST, fn: recordBurst },
  ...proxyRecord.cases,
  {
    group: "verify, per row",
    name: "JSON.parse + stringify + sha256 (floor)",
    per: BURST,
    fn: () => {
      for (const l of ledgerLines) sha256Floor(JSON.stringify(JSON.parse(l)));
    },
  },
  {
    group: "verify, per row",
    name: `LedgerVerifier (${BURST}-row ledger)`,
    per: BURST,
    fn: () => {
      const v = new LedgerVerifier();
      v.push(ledger);
      return v.end();
    },
  },
];

const tune = smoke
  ? { min_cpu_time: 1e6, min_samples: 2, max_samples: 3, warmup_samples: 0, batch_samples: 2, batch_threshold: 0 }
  : {};

interface Result {
  group: string;
  name: string;
  /** Nanoseconds per operation. */
  avg: number;
  p75: number;
  p99: number;
  samples: number;
}

const results: Result[] = [];
const time = (ns: number) =>
  ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
console.log(
  `micro: row ${digestSizes.rowChars} chars, big ${(digestSizes.bigChars / 1e6).toFixed(2)} MB${smoke ? " (smoke: not timings)" : ""}`,
);
let lastGroup = "";
for (const c of cases) {
  const s = await measure(c.fn, tune);
  const per = c.per ?? 1;
  const r: Result = {
    group: c.group,
    name: c.name,
    avg: s.avg / per,
    p75: s.p75 / per,
    p99: s.p99 / per,
    samples: s.samples.length,
  };
  results.push(r);
  const base = results.find((x) => x.group === c.group)!;
  if (c.group !== lastGroup) console.log(`• ${(lastGroup = c.group)}`);
  console.log(
    `  ${c.name.padEnd(40)} ${time(r.avg).padStart(10)}/op ${fmt.int(1e9 / r.avg).padStart(12)} op/s ${base === r ? "" : `${fmt.x(r.avg / base.avg)} the time of ${base.name}`}`,
  );
}

/** The engine's own way of doing a group's job, which seam's ways are compared with in the table. */
const isBaseline = (name: string) => name.startsWith("JSON.") || name.startsWith("sha256(") || name.includes("(floor)");

/** The table of `npm run bench`: seam's own paths, each against its group's baseline. */
const rows: Row[] = [];
for (const group of new Set(results.map((r) => r.group))) {
  const members = results.filter((r) => r.group === group);
  const base = members.find((r) => isBaseline(r.name))!;
  for (const r of members) {
    if (r === base) continue;
    rows.push({
      section: "micro",
      name: `${group}: ${r.name}`,
      value: `${time(r.avg)} (${fmt.int(1e9 / r.avg)}/s)`,
      ratio: `${fmt.x(r.avg / base.avg)} the time of ${base.name}`,
    });
  }
}
writeResult(flags, {
  script: "micro",
  rows,
  details: {
    runtime: process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`,
    smoke,
    results,
  },
});
rmSync(recordDir, { recursive: true, force: true });
proxyRecord.close();
