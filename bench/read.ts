/**
 * How fast `seam log` and `seam stats` read a big ledger, as ratios against
 * plain `seam verify` of the same file (bench/verify.ts's generator), each
 * its own process under /usr/bin/time (wall, CPU and peak RSS), output to
 * /dev/null:
 *   log            every operation, verified as read
 *   log --json     the same as NDJSON
 *   stats          per tool, verified as read
 *   log --last 50 --no-verify   the end of the file only: time to the first screen
 *   log --last 50  the whole file verified, the last 50 shown
 *
 *   bun bench/read.ts [--rows 1000000] [--smoke] [--json FILE] [--keep]
 */
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { Flags, ROOT, type Row, writeResult } from "./lib.ts";

const flags = new Flags();
const rows = flags.number("--rows", 1_000_000, 2_000);
const runs = flags.has("--smoke") ? 1 : 2;
const BUN = process.execPath;

if (!existsSync("/usr/bin/time")) {
  console.error("bench/read.ts needs /usr/bin/time (GNU time) for peak RSS");
  process.exit(2);
}

const gen = spawnSync(BUN, [`${ROOT}bench/verify.ts`, "--rows", String(rows), "--generate-only"], { encoding: "utf8" });
const ledger = /^kept (.+)$/m.exec(gen.stdout)?.[1];
if (gen.status !== 0 || ledger === undefined) {
  console.error(`bench/read.ts: the ledger was not generated: ${gen.stderr}`);
  process.exit(1);
}
const bytes = statSync(ledger).size;
console.log(`ledger: ${rows.toLocaleString("en-US")} rows, ${(bytes / 1e6).toFixed(1)} MB`);

interface Timed {
  seconds: number;
  cpu: number;
  rssMB: number;
  code: number | null;
}

function timed(args: string[]): Timed {
  let best: Timed | undefined;
  for (let i = 0; i < runs; i++) {
    const r = spawnSync("/usr/bin/time", ["-f", "%e %M %U %S", BUN, `${ROOT}commands/seam.ts`, ...args, ledger!], {
      stdio: ["ignore", "ignore", "pipe"],
      maxBuffer: 1 << 26,
    });
    const [secs, kb, user, sys] = r.stderr.toString().trim().split("\n").pop()!.split(" ").map(Number);
    const t = { seconds: secs!, cpu: user! + sys!, rssMB: kb! / 1024, code: r.status };
    if (best === undefined || t.seconds < best.seconds) best = { ...t, rssMB: Math.max(t.rssMB, best?.rssMB ?? 0) };
  }
  return best!;
}

const base = timed(["verify", "--quiet"]);
const cases: { name: string; args: string[]; goal?: (t: Timed) => [string, boolean]; exit: number }[] = [
  {
    name: "log",
    args: ["log"],
    exit: 0,
    goal: (t) => ["≥ 100,000 rows/s", rows / t.seconds >= 100_000],
  },
  { name: "log --json", args: ["log", "--json"], exit: 0 },
  {
    name: "stats",
    args: ["stats"],
    exit: 0,
    goal: (t) => ["≥ 100,000 rows/s, < 150 MB", rows / t.seconds >= 100_000 && t.rssMB < 150],
  },
  {
    name: "log --last 50 --no-verify",
    args: ["log", "--last", "50", "--no-verify"],
    exit: 3,
    goal: (t) => ["first screen < 200 ms", t.seconds < 0.2],
  },
  { name: "log --last 50", args: ["log", "--last", "50"], exit: 0 },
];

const section = `read (${rows.toLocaleString("en-US")} rows, ${(bytes / 1e6).toFixed(0)} MB, bun source)`;
const line = (name: string, t: Timed, ratio: string) =>
  `${name.padEnd(26)} ${t.seconds.toFixed(2).padStart(7)} s  cpu ${t.cpu.toFixed(2).padStart(6)} s  ${Math.round(
    rows / t.seconds,
  )
    .toLocaleString("en-US")
    .padStart(
      10,
    )} rows/s  ${t.rssMB.toFixed(0).padStart(4)} MB peak RSS  ${ratio}${t.code === 0 ? "" : ` (exit ${t.code})`}`;
console.log(line("verify --quiet (baseline)", base, ""));
const summary: Row[] = [
  {
    section,
    name: "seam verify (baseline)",
    value: `${Math.round(rows / base.seconds).toLocaleString("en-US")} rows/s, peak RSS ${base.rssMB.toFixed(0)} MB`,
  },
];
const details: Record<string, unknown>[] = [{ name: "verify", ...base }];
for (const c of cases) {
  const t = timed(c.args);
  const ratio = `${(t.seconds / base.seconds).toFixed(2)}x the time of verify (cpu ${(t.cpu / base.cpu).toFixed(2)}x)`;
  console.log(line(c.name, t, ratio));
  if (t.code !== c.exit) console.log(`${c.name}: exited ${t.code}, expected ${c.exit}`);
  const g = c.goal?.(t);
  summary.push({
    section,
    name: `seam ${c.name}`,
    value: `${t.seconds.toFixed(2)} s, ${Math.round(rows / t.seconds).toLocaleString("en-US")} rows/s, peak RSS ${t.rssMB.toFixed(0)} MB`,
    ratio,
    goal: g?.[0],
    met: g === undefined ? undefined : g[1] && t.code === c.exit,
  });
  details.push({ name: c.name, ...t });
}
writeResult(flags, { script: "read", rows: summary, details: { rows, bytes, runs: details } });

if (flags.has("--keep")) console.log(`kept ${ledger}`);
else rmSync(dirname(ledger), { recursive: true, force: true });
