/**
 * How fast `seam verify` checks a big ledger, as a ratio against the floor:
 * merely reading the same file and SHA-256-ing it, on the same runtime.
 *
 *   bun bench/verify.ts [--rows 1000000] [--keep] [--smoke] [--json FILE]
 *
 * Generates a ledger of `--rows` rows shaped as `seam wrap` writes them
 * (UUID sessions of a few hundred tool calls each, json-c14n digests, ms
 * timings) into a temp dir, then times, each as its own process under
 * /usr/bin/time (wall time and peak RSS):
 *   floor      read in 1 MiB chunks + SHA-256, under Bun and under Node
 *   verify     `seam verify --quiet` from source under Bun, the Node bundle
 *              (dist/seam.mjs) and the compiled executable (dist/seam)
 * Build dist/ first: bun scripts/build.ts --exe
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Flags, generateLedger, type Row, writeResult } from "./lib.ts";

const root = new URL("..", import.meta.url).pathname;
const argv = process.argv.slice(2);
const flags = new Flags(argv);
const rowsWanted = flags.number("--rows", 1_000_000, 2_000);
const smokeRuns = flags.has("--smoke") ? 1 : undefined;
const keep = argv.includes("--keep");

if (!existsSync("/usr/bin/time")) {
  console.error("bench/verify.ts needs /usr/bin/time (GNU time) for peak RSS");
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), "seam-bench-verify-"));
const ledger = join(dir, "ledger.jsonl");

/** The floor: read in 1 MiB chunks and SHA-256 everything (the same JS under both runtimes). */
const FLOOR_JS = `
const fs = require("node:fs"), { createHash } = require("node:crypto");
const fd = fs.openSync(process.argv[process.argv.length - 1], "r"); const h = createHash("sha256");
for (;;) { const b = Buffer.allocUnsafe(1 << 20); const n = fs.readSync(fd, b, 0, b.length, null); if (n === 0) break; h.update(b.subarray(0, n)); }
process.stdout.write(h.digest("hex") + "\\n");`;

interface Timed {
  seconds: number;
  /** user + sys: what one core spent, whatever else the machine was doing. */
  cpu: number;
  rssMB: number;
  code: number | null;
}

/** Runs argv under GNU time: wall seconds and peak RSS of the process. */
function timed(cmd: string[]): Timed {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M %U %S", ...cmd], {
    stdio: ["ignore", "ignore", "pipe"],
    maxBuffer: 1 << 26,
  });
  const last = r.stderr.toString().trim().split("\n").pop()!;
  const [secs, kb, user, sys] = last.split(" ").map(Number);
  return { seconds: secs!, cpu: user! + sys!, rssMB: kb! / 1024, code: r.status };
}

function best(cmd: string[], runs = smokeRuns ?? 3): Timed {
  let out: Timed | undefined;
  for (let i = 0; i < runs; i++) {
    const t = timed(cmd);
    if (out === undefined || t.seconds < out.seconds) out = { ...t, rssMB: Math.max(t.rssMB, out?.rssMB ?? 0) };
  }
  return out!;
}

const gen = generateLedger(ledger, rowsWanted);
// bench/read.ts times seam log and stats on this same ledger.
if (flags.has("--generate-only")) {
  console.log(`kept ${ledger}`);
  process.exit(0);
}
const bytes = statSync(ledger).size;
const bun = process.execPath;
console.log(
  `ledger: ${gen.rows.toLocaleString("en-US")} rows, ${(bytes / 1e6).toFixed(1)} MB (${Math.round(bytes / gen.rows)} bytes/row), generated in ${gen.seconds.toFixed(1)} s`,
);

const floor = {
  bun: best([bun, "-e", FLOOR_JS, ledger]),
  node: best(["node", "-e", FLOOR_JS, ledger]),
};
const runs: [string, string[], "bun" | "node"][] = [
  ["bun (source)", [bun, `${root}commands/seam.ts`, "verify", "--quiet", ledger], "bun"],
  ["node (dist/seam.mjs)", ["node", `${root}dist/seam.mjs`, "verify", "--quiet", ledger], "node"],
  ["exe (dist/seam)", [`${root}dist/seam`, "verify", "--quiet", ledger], "bun"],
];

const row = (name: string, t: Timed, base?: Timed) =>
  [
    name.padEnd(28),
    `${t.seconds.toFixed(2).padStart(6)} s`,
    `${Math.round(gen.rows / t.seconds)
      .toLocaleString("en-US")
      .padStart(10)} rows/s`,
    `${(bytes / 1e6 / t.seconds).toFixed(0).padStart(5)} MB/s`,
    `cpu ${t.cpu.toFixed(2).padStart(6)} s`,
    base ? `${(t.seconds / base.seconds).toFixed(1).padStart(5)}x floor` : "".padStart(11),
    `${t.rssMB.toFixed(0).padStart(5)} MB peak RSS`,
    t.code !== 0 && t.code !== null ? `(exit ${t.code})` : "",
  ]
    .join("  ")
    .trimEnd();

console.log(row("floor bun (read+sha256)", floor.bun));
console.log(row("floor node (read+sha256)", floor.node));
const summary: Row[] = [];
const details: Record<string, unknown>[] = [];
for (const [name, cmd, rt] of runs) {
  if (!existsSync(cmd[0] === "node" ? cmd[1]! : cmd[0]!)) {
    console.log(`${name.padEnd(28)} skipped: not built (bun scripts/build.ts --exe)`);
    continue;
  }
  const t = best(cmd, smokeRuns ?? 2);
  if (t.code !== 0) console.log(`${name}: verify exited ${t.code}, expected 0`);
  console.log(row(`verify ${name}`, t, floor[rt]));
  const rate = gen.rows / t.seconds;
  const goal = name.startsWith("bun");
  summary.push({
    section: `verify (${gen.rows.toLocaleString("en-US")} rows, ${(bytes / 1e6).toFixed(0)} MB)`,
    name: `seam verify ${name}`,
    value: `${Math.round(rate).toLocaleString("en-US")} rows/s, peak RSS ${t.rssMB.toFixed(0)} MB`,
    ratio: `${(t.seconds / floor[rt].seconds).toFixed(1)}x the time of read+sha256`,
    goal: goal ? "≥ 100,000 rows/s" : undefined,
    met: goal ? rate >= 100_000 && t.code === 0 : undefined,
  });
  details.push({
    name,
    seconds: t.seconds,
    rows_per_s: rate,
    rss_mb: t.rssMB,
    exit: t.code,
    floor_seconds: floor[rt].seconds,
  });
}
writeResult(flags, { script: "verify", rows: summary, details: { rows: gen.rows, bytes, floor, runs: details } });

if (keep) console.log(`kept ${ledger}`);
else rmSync(dir, { recursive: true, force: true });
