/**
 * Peak memory where a ledger or a frame is large, per build (Bun from
 * source, the Node bundle, the compiled executable):
 *
 *   bun bench/memory.ts [--line-mib 120] [--parsed-mib 48] [--sessions 200000] [--frame-mib 32] [--smoke] [--json FILE]
 *
 *   long line     `seam verify` of one row of --line-mib MiB (over the 64 MiB
 *                 --max-line default: a finding, never held whole)
 *   parsed line   `seam verify` of one row of --parsed-mib MiB (under the
 *                 limit, so parsed): peak RSS as a multiple of the line
 *   line shapes   the same for rows of --parsed-mib MiB not in chain form
 *                 whose parsed value costs the most: many small containers,
 *                 many keys, arrays nested 900 deep
 *   sessions      `seam verify` of --sessions complete two-row sessions: the
 *                 peak above a one-session file, per session
 *   numeric frames `seam wrap` relaying two answers of --frame-mib MiB, each
 *                 one array of numbers (bench/numeric-server.mjs)
 *
 * Peak RSS is VmHWM from /proc/<pid>/status of seam's own process, polled.
 * Build dist/ first: bun scripts/build.ts --exe
 */
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lineForm } from "../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../src/core/chain.ts";
import type { Json } from "../src/core/json.ts";
import { chainFromJsonLine } from "../src/format/line.ts";
import { Flags, ROOT, type Row, writeResult } from "./lib.ts";

const flags = new Flags();
const smoke = flags.has("--smoke");
const lineMiB = flags.number("--line-mib", 120, 2);
const parsedMiB = flags.number("--parsed-mib", 48, 1);
const sessions = flags.number("--sessions", 200_000, 2_000);
// Under --smoke the long line is over a 1 MiB --max-line, not over the 64 MiB default: the path is the same, the sizes tiny.
const maxLine = smoke ? ["--max-line", String(1024 * 1024)] : [];
const limitMiB = smoke ? 1 : 64;
const frameMiB = flags.number("--frame-mib", 32, 1);
const dir = mkdtempSync(join(tmpdir(), "seam-bench-memory-"));

const BUILDS: [string, string[]][] = [
  ["bun", [process.execPath, "--no-env-file", `${ROOT}commands/seam.ts`]],
  ["node", ["node", `${ROOT}dist/seam.mjs`]],
  ["exe", [`${ROOT}dist/seam`]],
];
const available = BUILDS.filter(([, argv]) => argv[0] !== "node" || existsSync(argv[1]!)).filter(
  ([, argv]) => argv.length > 1 || existsSync(argv[0]!),
);
// --smoke only proves the script runs: one build is enough.
const builds = smoke ? available.slice(-1) : available;

/** Runs argv (stdin: `input`, then closed), polling its peak RSS; resolves once it has exited. */
async function peak(argv: string[], input = ""): Promise<{ mb: number; code: number; out: string }> {
  const p = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  let kb = 0;
  const sample = () => {
    try {
      const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p.pid}/status`, "utf8"));
      if (m) kb = Math.max(kb, Number(m[1]));
    } catch {}
  };
  const timer = setInterval(sample, 5);
  p.stdin.write(input);
  await p.stdin.end();
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  clearInterval(timer);
  return { mb: kb / 1024, code, out };
}

/** A ledger of one chained row holding a string of `bytes` bytes. */
function oneLongRow(path: string, bytes: number): void {
  const row = new Map<string, Json>([
    ["evt", "tool_call"],
    ["seam", "bench"],
    ["blob", "x".repeat(bytes)],
  ]);
  row.set("chain", chainOf(GENESIS, row));
  const fd = openSync(path, "w");
  writeSync(fd, `${lineForm(row)}\n`);
  closeSync(fd);
}

/** Rows of about `bytes` bytes, compact (no chain form), each one shape of value that costs the most parsed. */
const SHAPES: [string, (bytes: number) => string][] = [
  ["many small containers", (n) => `[${"{},[],".repeat(Math.ceil(n / 6))}{}]`],
  [
    "many keys",
    (n) =>
      `{${Array.from({ length: Math.ceil(n / 14) }, (_, i) => `"k${i.toString(36).padStart(8, "0")}":1`).join(",")}}`,
  ],
  [
    "arrays 900 deep",
    (n) => `[${Array.from({ length: Math.ceil(n / 1801) }, () => "[".repeat(900) + "]".repeat(900)).join(",")}]`,
  ],
];

function shapedRow(path: string, bytes: number, shape: (bytes: number) => string): void {
  const head = `{"evt":"tool_call","seam":"bench","x":${shape(bytes)}}`;
  const chain = chainFromJsonLine(GENESIS, new TextEncoder().encode(head));
  const fd = openSync(path, "w");
  writeSync(fd, `${head.slice(0, -1)},"chain":"${chain}"}\n`);
  closeSync(fd);
}

/** `n` complete two-row seam sessions. */
function manySessions(path: string, n: number): number {
  const fd = openSync(path, "w");
  let prev = GENESIS;
  let buf: string[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    for (const [evt, seq] of [
      ["session_begin", 1],
      ["session_end", 2],
    ] as const) {
      const row = new Map<string, Json>([
        ["evt", evt],
        ["seam", "mcp-stdio"],
        ["session", `s-${i.toString(36).padStart(6, "0")}`],
        ["seq", seq],
      ]);
      if (evt === "session_end") row.set("rows_before_end", 1);
      prev = chainOf(prev, row);
      row.set("chain", prev);
      buf.push(lineForm(row));
    }
    if (buf.length >= 8192 || i === n - 1) {
      const text = `${buf.join("\n")}\n`;
      bytes += Buffer.byteLength(text);
      writeSync(fd, text);
      buf = [];
    }
  }
  closeSync(fd);
  return bytes;
}

const summary: Row[] = [];
const details: Record<string, unknown> = {};
const mib = (n: number) => n * 1024 * 1024;

const longPath = join(dir, "long.jsonl");
oneLongRow(longPath, mib(lineMiB));
const parsedPath = join(dir, "parsed.jsonl");
oneLongRow(parsedPath, mib(parsedMiB));
const manyPath = join(dir, "many.jsonl");
const manyBytes = manySessions(manyPath, sessions);
const onePath = join(dir, "one.jsonl");
manySessions(onePath, 1);
const shapePaths = SHAPES.map(([shape, make], i) => {
  const path = join(dir, `shape-${i}.jsonl`);
  shapedRow(path, mib(parsedMiB), make);
  return [shape, path] as const;
});

for (const [name, seam] of builds) {
  const long = await peak([...seam, "verify", "--quiet", ...maxLine, longPath]);
  const parsed = await peak([...seam, "verify", "--quiet", parsedPath]);
  const many = await peak([...seam, "verify", "--quiet", manyPath]);
  const one = await peak([...seam, "verify", "--quiet", onePath]);
  const shaped: { shape: string; mb: number; code: number }[] = [];
  for (const [shape, path] of shapePaths) shaped.push({ shape, ...(await peak([...seam, "verify", "--quiet", path])) });
  const perSession = (mib(many.mb - one.mb) / sessions) | 0;
  const ledger = join(dir, `wrap-${name}.jsonl`);
  const calls =
    `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n` +
    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get","arguments":{}}}\n` +
    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get","arguments":{}}}\n`;
  const wrap = await peak(
    [...seam, "wrap", "--ledger", ledger, "--", "node", `${ROOT}bench/numeric-server.mjs`, String(frameMiB)],
    calls,
  );
  const answered = wrap.out.split("\n").filter((l) => l.startsWith('{"jsonrpc"')).length;
  // Above what the same build needs for a one-session file: what the line itself costs.
  const lineRatio = (parsed.mb - one.mb) / parsedMiB;
  details[name] = {
    long_line: { mib: lineMiB, peak_mb: long.mb, exit: long.code },
    parsed_line: { mib: parsedMiB, peak_mb: parsed.mb, exit: parsed.code },
    sessions: {
      sessions,
      bytes: manyBytes,
      peak_mb: many.mb,
      one_session_peak_mb: one.mb,
      bytes_per_session: perSession,
    },
    numeric_frames: { frame_mib: frameMiB, frames: 2, peak_mb: wrap.mb, answered, exit: wrap.code },
    line_shapes: shaped.map((s) => ({ shape: s.shape, mib: parsedMiB, peak_mb: s.mb, exit: s.code })),
  };
  for (const s of shaped) {
    const ratio = (s.mb - one.mb) / parsedMiB;
    summary.push({
      section: "memory",
      name: `verify one ${parsedMiB} MiB line of ${s.shape}, ${name}`,
      value: `peak RSS ${s.mb.toFixed(0)} MB`,
      ratio: `${ratio.toFixed(1)}x the line (above a one-session file)`,
      goal: "≤ 3x the largest line",
      met: ratio <= 3 && s.code === 0,
    });
  }
  summary.push(
    {
      section: "memory",
      name: `verify one ${lineMiB} MiB line, ${name}`,
      value: `peak RSS ${long.mb.toFixed(0)} MB (exit ${long.code})`,
      goal: `not held whole: < ${limitMiB} MiB (--max-line) + 200 MB`,
      met: long.mb < limitMiB + 200 && long.code === 3,
    },
    {
      section: "memory",
      name: `verify one ${parsedMiB} MiB line (parsed), ${name}`,
      value: `peak RSS ${parsed.mb.toFixed(0)} MB`,
      ratio: `${lineRatio.toFixed(1)}x the line (above a one-session file)`,
      goal: "≤ 3x the largest line",
      met: lineRatio <= 3 && parsed.code === 0,
    },
    {
      section: "memory",
      name: `verify ${sessions.toLocaleString("en-US")} sessions, ${name}`,
      value: `peak RSS ${many.mb.toFixed(0)} MB, ${perSession} bytes per session`,
      // The cost docs/reading.md states for a session (its row counts, pid and end until the report).
      goal: "≤ 2,000 bytes per session",
      met: perSession <= 2000 && many.code === 0,
    },
    {
      section: "memory",
      name: `wrap two ${frameMiB} MiB numeric frames, ${name}`,
      value: `peak RSS ${wrap.mb.toFixed(0)} MB, ${answered} of 3 answered`,
      goal: "< 300 MB",
      met: wrap.mb < 300 && answered === 3,
    },
  );
}

const w = (s: string, n: number) => s.padEnd(n);
console.log("memory");
for (const r of summary) console.log(`  ${w(r.name, 48)} ${w(r.value, 44)} ${r.ratio ?? ""}`);
writeResult(flags, { script: "memory", rows: summary, details });
rmSync(dir, { recursive: true, force: true });
