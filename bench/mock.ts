/**
 * `seam mock` serving a recording, per build (Bun from source, the Node
 * bundle, the compiled executable):
 *
 *   bun bench/mock.ts [--calls 100000] [--smoke] [--json FILE]
 *
 * A ledger of --calls tools/call is recorded once, through `seam wrap
 * --payloads` in front of bench/echo-server.mjs (every call's arguments
 * differ, so every answer is its own). Then each build's `seam mock` is
 * started on it: its start-up (spawn to the answer to initialize: it reads
 * and verifies the ledger once, and loads the payloads it serves), and the
 * same calls written at once, timed until the last answer, as calls/s. Every
 * answer must be the recorded one (each call's text names its id).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seamArgv, type Via } from "../test/helpers/cli.ts";
import { built, Flags, fmt, ROOT, type Row, writeResult } from "./lib.ts";

const flags = new Flags();
const calls = flags.number("--calls", 100_000, 2_000);
const dir = mkdtempSync(join(tmpdir(), "seam-bench-mock-"));
const ledger = join(dir, "l.jsonl");
const store = join(dir, "payloads");
const SERVER = ["node", `${ROOT}bench/echo-server.mjs`];

const INITIALIZE = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n`;
const call = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}","n":${id}}}}\n`;
const CALLS = Array.from({ length: calls }, (_, i) => call(i + 1)).join("");

/** Runs argv with `input` written at once; resolves with how many answer lines came, and when the first and the last did. */
async function drive(
  argv: string[],
  first: string,
  rest: string,
): Promise<{ lines: number; firstMs: number; restMs: number; out: string[] }> {
  const p = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const t0 = performance.now();
  p.stdin.write(first);
  await p.stdin.flush();
  const reader = p.stdout.getReader();
  const decoder = new TextDecoder();
  const out: string[] = [];
  let buf = "";
  let firstMs = -1;
  let t1 = 0;
  const want = 1 + (rest === "" ? 0 : rest.split("\n").length - 1);
  for (;;) {
    if (out.length === 1 && firstMs < 0) {
      firstMs = performance.now() - t0;
      t1 = performance.now();
      // Not awaited: the answers are read while the calls are still being written (a full pipe each way).
      p.stdin.write(rest);
      void p.stdin.flush();
    }
    if (out.length >= want) break;
    const r = await reader.read();
    if (r.done) break;
    buf += decoder.decode(r.value, { stream: true });
    let nl = buf.indexOf("\n");
    while (nl >= 0) {
      out.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      nl = buf.indexOf("\n");
    }
  }
  const restMs = performance.now() - t1;
  p.stdin.end();
  await p.exited;
  return { lines: out.length, firstMs, restMs, out };
}

// The recording: seam wrap --payloads, the server answering every call.
const recorded = await drive(
  [...seamArgv("bun"), "wrap", "--ledger", ledger, "--payloads", store, "--", ...SERVER],
  INITIALIZE,
  CALLS,
);
if (recorded.lines !== calls + 1) throw new Error(`the recording got ${recorded.lines} answers of ${calls + 1}`);

const rows: Row[] = [];
const details: Record<string, unknown> = { calls, recording_seconds: (recorded.firstMs + recorded.restMs) / 1000 };
const have = built();
const vias: Via[] = ["bun", ...(have.node ? (["node"] as const) : []), ...(have.exe ? (["exe"] as const) : [])];
for (const via of vias) {
  const r = await drive([...seamArgv(via), "mock", ledger, "--payloads", store], INITIALIZE, CALLS);
  // Each answer is the recorded one: the echo server's text names the call's id.
  const right = r.out.slice(1).every((line, i) => line.includes(`"id":${i + 1},`) && line.includes(`hello ${i + 1}`));
  const rate = calls / (r.restMs / 1000);
  details[via] = { startup_ms: r.firstMs, calls_per_s: rate, answers: r.lines, all_recorded: right };
  rows.push(
    {
      section: "mock",
      name: `seam mock (${via}), start-up on ${fmt.int(calls)} calls`,
      value: `${fmt.int(r.firstMs)} ms to the answer to initialize`,
    },
    {
      section: "mock",
      name: `seam mock (${via}), ${fmt.int(calls)} calls at once`,
      value: `${fmt.int(rate)} calls/s, ${r.lines - 1} answers${right ? ", each the recorded one" : ", NOT the recorded ones"}`,
      goal: "≥ 10,000 calls/s, each answer the recorded one",
      met: rate >= 10_000 && right && r.lines === calls + 1,
    },
  );
}

console.log("mock");
for (const r of rows) console.log(`  ${r.name.padEnd(48)} ${r.value}`);
writeResult(flags, { script: "mock", rows, details });
rmSync(dir, { recursive: true, force: true });
