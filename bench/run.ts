/**
 * `npm run bench`: every benchmark script in turn, then one table of the
 * figures and the goals they are held to, also written to
 * bench/results/latest.json (each script's own result beside it).
 *
 *   bun bench/run.ts [--smoke] [--only micro,ledger,relay,verify,read,digest,checkpoint,fleet,proxy,memory,footprint,report,mock]
 *                    [--rows N] [--mb N] [--calls N] [--large-mib N] [--rt-calls N] [--rt-warmup N] [--starts N]
 *
 * The defaults fit in ten minutes on a 2-core machine. --smoke runs every
 * script with tiny sizes in seconds: its figures mean nothing, it only proves
 * the scripts still run (test/e2e/bench-smoke.test.ts). A full run rebuilds dist/
 * first, so the Node and executable figures are of the current source.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { built, Flags, machine, ROOT, type Row, type ScriptResult } from "./lib.ts";

const flags = new Flags();
const smoke = flags.has("--smoke");
const BUN = process.execPath;
const RESULTS = `${ROOT}bench/results/`;

/** Each script, and which of run.ts's flags it takes. */
const SCRIPTS: { name: string; file: string; takes: string[] }[] = [
  { name: "micro", file: "micro.bench.ts", takes: [] },
  { name: "ledger", file: "ledger.ts", takes: [] },
  {
    name: "relay",
    file: "relay.ts",
    takes: ["--calls", "--large-mib", "--rt-calls", "--rt-warmup", "--rt-rounds", "--pipe-rounds"],
  },
  { name: "verify", file: "verify.ts", takes: ["--rows"] },
  { name: "read", file: "read.ts", takes: ["--rows"] },
  { name: "digest", file: "digest-file.ts", takes: ["--mb"] },
  { name: "checkpoint", file: "checkpoint.ts", takes: [] },
  { name: "fleet", file: "fleet.ts", takes: ["--rows"] },
  { name: "proxy", file: "proxy.ts", takes: [] },
  { name: "memory", file: "memory.ts", takes: [] },
  { name: "footprint", file: "footprint.ts", takes: ["--starts"] },
  { name: "report", file: "report.ts", takes: ["--rows"] },
  { name: "mock", file: "mock.ts", takes: [] },
];
const only = flags.string("--only")?.split(",");

const have = built();
if (!smoke || !have.node || !have.exe) {
  console.log("building dist/ (bun scripts/build.ts --exe)");
  const b = spawnSync(BUN, [`${ROOT}scripts/build.ts`, "--exe"], { stdio: "inherit" });
  if (b.status !== 0) {
    console.error("bench: the build failed");
    process.exit(1);
  }
}

mkdirSync(RESULTS, { recursive: true });
/** Other work on the machine skews every figure; the table says how busy it was. */
const loadAtStart = loadavg()[0]!;
const started = performance.now();
const outcome: Record<string, { seconds: number; exit: number | null; result?: ScriptResult }> = {};
for (const s of SCRIPTS) {
  if (only && !only.includes(s.name)) continue;
  const json = `${RESULTS}${s.name}${smoke ? ".smoke" : ""}.json`;
  rmSync(json, { force: true });
  const args = [`${ROOT}bench/${s.file}`, "--json", json];
  if (smoke) args.push("--smoke");
  for (const f of s.takes) if (flags.string(f) !== undefined) args.push(f, flags.string(f)!);
  console.log(`\n== ${s.name}: bun bench/${s.file}${args.slice(3).length ? ` ${args.slice(3).join(" ")}` : ""}`);
  const t0 = performance.now();
  // A script that hangs is stopped, so that the run (and the smoke test) still ends with its table.
  const p = spawnSync(BUN, args, { stdio: "inherit", timeout: (smoke ? 60 : 900) * 1000 });
  const seconds = (performance.now() - t0) / 1000;
  let result: ScriptResult | undefined;
  try {
    result = JSON.parse(readFileSync(json, "utf8")) as ScriptResult;
  } catch {}
  outcome[s.name] = { seconds, exit: p.status, result };
}
const total = (performance.now() - started) / 1000;

const rows: Row[] = Object.values(outcome).flatMap((o) => o.result?.rows ?? []);
const failed = Object.entries(outcome).filter(([, o]) => o.exit !== 0 || !o.result);

/** Plain text, fixed width: docs/performance.md takes it in as a table. */
function table(rs: Row[]): string {
  const head = ["", "figure", "ratio (same run)", "goal"];
  const cells = rs.map((r) => [
    `  ${r.name}`,
    r.value,
    r.ratio ?? "",
    r.goal ? `${r.goal}: ${r.met ? "met" : "MISSED"}` : "",
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(w[i]!))
      .join("  ")
      .trimEnd();
  const out: string[] = [];
  let section = "";
  for (let i = 0; i < rs.length; i++) {
    if (rs[i]!.section !== section) {
      section = rs[i]!.section;
      out.push("", line([section, ...head.slice(1)]));
    }
    out.push(line(cells[i]!));
  }
  return out.join("\n");
}

const m = machine();
console.log(`\n== seam benchmarks${smoke ? " (smoke: sizes too small for the figures to mean anything)" : ""}`);
console.log(
  `machine: ${m.cpus} cores ${m.cpu}, ${m.memory_gb} GB, ${m.os}; bun ${m.bun}, node ${m.node ?? "none"}, python ${m.python ?? "none"}`,
);
console.log(
  `load average (1 min) at start ${loadAtStart.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}${loadAtStart > 0.5 ? ": other work was running, figures are noisy" : ""}`,
);
console.log(table(rows));
const goals = rows.filter((r) => r.met !== undefined);
console.log(
  `\ngoals: ${goals.filter((r) => r.met).length} met, ${goals.filter((r) => !r.met).length} missed; ${total.toFixed(0)} s in all`,
);
for (const [name, o] of failed)
  console.error(`bench: ${name} ${o.exit !== 0 ? `exited ${o.exit}` : "wrote no result"}`);

writeFileSync(
  `${RESULTS}${smoke ? "smoke" : "latest"}.json`,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
      smoke,
      machine: m,
      load_average: { start: loadAtStart, end: loadavg()[0] },
      seconds: total,
      scripts: Object.fromEntries(Object.entries(outcome).map(([k, o]) => [k, { seconds: o.seconds, exit: o.exit }])),
      rows,
      details: Object.fromEntries(Object.entries(outcome).map(([k, o]) => [k, o.result?.details ?? null])),
    },
    null,
    1,
  )}\n`,
);
if (failed.length > 0) process.exitCode = 1;
