/**
 * What a wrapped server costs while it sits idle all day, beside a bare relay
 * (bench/bare-relay.mjs) of the same runtime, measured side by side:
 *
 *   bun bench/footprint.ts [--procs 3] [--fleet 10] [--starts 20] [--idle-ms 1500] [--traffic-mb 32] [--smoke] [--json FILE]
 *
 *   idle RSS     one process after its first call (initialize answered),
 *                then idle for --idle-ms: VmRSS of the relay's own process,
 *                the median of --procs processes run at once; beside it, its
 *                anonymous memory (the heap, the stacks: what only it holds)
 *   fleet        --fleet processes at once, each after its first call: what
 *                they hold together, counting the pages they share (the
 *                runtime's or the executable's code, mapped from one file)
 *                once, as the machine holds them: the sum of each one's
 *                anonymous memory plus the largest file-backed part of any
 *                one (/proc/<pid>/smaps_rollup). Not Pss, which would hand
 *                part of the bare relay's share of the bun binary to every
 *                other Bun process on the machine. The plain sum of RSS beside it
 *   start-up     spawn to the first answer forwarded (the initialize answer's
 *                first byte on the relay's stdout), the median of --starts
 *                runs, seam and the bare relay taking turns so that the load
 *                of the machine falls on both alike
 *   after traffic  one process after --traffic-mb of answers (blobs of 100 KB,
 *                asked for all at once) and --idle-ms of quiet: what a session
 *                that has worked a while keeps holding (no goal)
 *
 * The builds: Bun from source and the compiled executable beside
 * `bun bench/bare-relay.mjs`, the Node bundle beside `node bench/bare-relay.mjs`.
 * The server is bench/echo-server.mjs under Node. Build dist/ first: bun scripts/build.ts --exe
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Flags, ROOT, type Row, writeResult } from "./lib.ts";

const flags = new Flags();
const smoke = flags.has("--smoke");
const procs = flags.number("--procs", 3, 1);
const fleet = flags.number("--fleet", 10, 2);
const starts = flags.number("--starts", 20, 2);
const idleMs = flags.number("--idle-ms", 1500, 200);
const trafficMb = flags.number("--traffic-mb", smoke ? 2 : 32, 1);
const dir = mkdtempSync(join(tmpdir(), "seam-bench-footprint-"));
const SERVER = ["node", `${ROOT}bench/echo-server.mjs`];
const BARE_BUN = [process.execPath, "--no-env-file", `${ROOT}bench/bare-relay.mjs`, "--"];
const BARE_NODE = ["node", `${ROOT}bench/bare-relay.mjs`, "--"];

/** Each build of seam, and the bare relay of its runtime. */
const BUILDS: { name: string; seam: string[]; bare: string[]; bareName: string }[] = [
  {
    name: "bun",
    seam: [process.execPath, "--no-env-file", `${ROOT}commands/seam.ts`],
    bare: BARE_BUN,
    bareName: "bun",
  },
  { name: "node dist/seam.mjs", seam: ["node", `${ROOT}dist/seam.mjs`], bare: BARE_NODE, bareName: "node" },
  { name: "exe dist/seam", seam: [`${ROOT}dist/seam`], bare: BARE_BUN, bareName: "bun" },
];
const available = BUILDS.filter((b) => existsSync(b.seam[b.seam.length - 1]!));
// --smoke only proves the script runs: one build is enough.
const builds = smoke ? available.slice(-1) : available;

const INIT = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n`;

let ledgers = 0;
function relayArgv(b: (typeof BUILDS)[number], which: "seam" | "bare"): string[] {
  if (which === "bare") return [...b.bare, ...SERVER];
  return [...b.seam, "wrap", "--ledger", join(dir, `l${ledgers++}.jsonl`), "--", ...SERVER];
}

interface Started {
  proc: Bun.Subprocess<"pipe", "pipe", "ignore">;
  /** ms from spawn to the first byte of the answer on stdout. */
  firstAnswer: Promise<number>;
}

/** Spawns a relay, sends initialize, and times the answer's arrival. */
function start(argv: string[]): Started {
  const t0 = performance.now();
  const proc = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  proc.stdin.write(INIT);
  proc.stdin.flush();
  const firstAnswer = (async () => {
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    const ms = performance.now() - t0;
    if (!value) throw new Error(`${argv.join(" ")}: no answer`);
    // Keep reading so that the relay never blocks on a full pipe.
    void (async () => {
      for (;;) if ((await reader.read()).done) break;
    })();
    return ms;
  })();
  return { proc, firstAnswer };
}

async function stop(s: Started): Promise<void> {
  await s.proc.stdin.end();
  const quit = await Promise.race([s.proc.exited, Bun.sleep(5000).then(() => null)]);
  if (quit === null) s.proc.kill("SIGKILL");
  await s.proc.exited;
}

function rssMB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

/** RSS and anonymous memory of `pid`, in MB. */
function rollup(pid: number): { rss: number; anon: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN);
  return { rss: kb("Rss") / 1024, anon: kb("Anonymous") / 1024 };
}

function threads(pid: number): number {
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** `n` relays at once, each after its first call and --idle-ms of quiet: each one's RSS and threads. */
async function idle(
  argv: () => string[],
  n: number,
): Promise<{ rss: number[]; file: number[]; anon: number[]; threads: number[] }> {
  const all = Array.from({ length: n }, () => start(argv()));
  await Promise.all(all.map((s) => s.firstAnswer));
  await Bun.sleep(idleMs);
  const r = all.map((s) => rollup(s.proc.pid));
  const out = {
    rss: all.map((s) => rssMB(s.proc.pid)),
    file: r.map((x) => x.rss - x.anon),
    anon: r.map((x) => x.anon),
    threads: all.map((s) => threads(s.proc.pid)),
  };
  await Promise.all(all.map(stop));
  return out;
}

/** One relay after --traffic-mb of answers and --idle-ms of quiet: its RSS and anonymous memory. */
async function afterTraffic(argv: string[]): Promise<{ rss: number; anon: number }> {
  const proc = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const calls = trafficMb * 10;
  proc.stdin.write(INIT);
  for (let id = 2; id < calls + 2; id++)
    proc.stdin.write(
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"blob","arguments":{"bytes":100000}}}\n`,
    );
  proc.stdin.flush();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  // Every answer is one line: the initialize answer and one a call.
  for (let lines = 0; lines < calls + 1; ) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${argv.join(" ")}: ended after ${lines} answers`);
    for (const b of value) if (b === 10) lines++;
  }
  void (async () => {
    for (;;) if ((await reader.read()).done) break;
  })();
  await Bun.sleep(idleMs);
  const r = rollup(proc.pid);
  await stop({ proc, firstAnswer: Promise.resolve(0) });
  return r;
}

/** Start-up of seam and of the bare relay, one after the other in turns. */
async function startup(b: (typeof BUILDS)[number]): Promise<{ seam: number[]; bare: number[] }> {
  const out = { seam: [] as number[], bare: [] as number[] };
  // One of each first, unmeasured: the file cache warm for both.
  for (const which of ["seam", "bare"] as const) {
    const s = start(relayArgv(b, which));
    await s.firstAnswer;
    await stop(s);
  }
  for (let i = 0; i < starts; i++) {
    for (const which of i % 2 ? (["bare", "seam"] as const) : (["seam", "bare"] as const)) {
      const s = start(relayArgv(b, which));
      out[which].push(await s.firstAnswer);
      await stop(s);
    }
  }
  return out;
}

const summary: Row[] = [];
const details: Record<string, unknown> = {};
const f0 = (n: number) => n.toFixed(0);
const f1 = (n: number) => n.toFixed(1);

for (const b of builds) {
  const seamIdle = await idle(() => relayArgv(b, "seam"), procs);
  const bareIdle = await idle(() => relayArgv(b, "bare"), procs);
  const seamFleet = await idle(() => relayArgv(b, "seam"), fleet);
  const bareFleet = await idle(() => relayArgv(b, "bare"), fleet);
  const t = await startup(b);
  const worked = { seam: await afterTraffic(relayArgv(b, "seam")), bare: await afterTraffic(relayArgv(b, "bare")) };
  const one = { seam: median(seamIdle.rss), bare: median(bareIdle.rss) };
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  const together = (f: { anon: number[]; file: number[] }) => sum(f.anon) + Math.max(...f.file);
  const many = { seam: together(seamFleet), bare: together(bareFleet) };
  const manyRss = { seam: sum(seamFleet.rss), bare: sum(bareFleet.rss) };
  const up = { seam: median(t.seam), bare: median(t.bare) };
  // How far the runs spread: the middle half of each, as a share of its median.
  const spread = (xs: number[]) => {
    const s = [...xs].sort((x, y) => x - y);
    return (s[Math.floor(s.length * 0.75)]! - s[Math.floor(s.length * 0.25)]!) / median(xs);
  };
  details[b.name] = {
    idle: {
      seam_mb: seamIdle.rss,
      bare_mb: bareIdle.rss,
      seam_threads: seamIdle.threads,
      bare_threads: bareIdle.threads,
    },
    fleet: { n: fleet, seam_mb: seamFleet.rss, bare_mb: bareFleet.rss },
    startup: { seam_ms: t.seam, bare_ms: t.bare, seam_iqr_share: spread(t.seam), bare_iqr_share: spread(t.bare) },
    after_traffic: { mb: trafficMb, seam: worked.seam, bare: worked.bare },
  };
  const bare = `bare relay (${b.bareName})`;
  summary.push(
    {
      section: "footprint",
      name: `${bare}, idle after one call`,
      value: `${f1(one.bare)} MB RSS (${f1(median(bareIdle.anon))} anon), ${median(bareIdle.threads)} threads`,
    },
    {
      section: "footprint",
      name: `seam wrap (${b.name}), idle after one call`,
      value: `${f1(one.seam)} MB RSS (${f1(median(seamIdle.anon))} anon), ${median(seamIdle.threads)} threads`,
      ratio: `${(one.seam / one.bare).toFixed(2)}x bare`,
      goal: "≤ 1.3x bare",
      met: one.seam <= 1.3 * one.bare,
    },
    {
      section: "footprint",
      name: `seam wrap (${b.name}), ${fleet} at once`,
      value: `${f0(many.seam)} MB, shared once (bare ${f0(many.bare)}); RSS summed ${f0(manyRss.seam)} (bare ${f0(manyRss.bare)})`,
      ratio: `${(many.seam / many.bare).toFixed(2)}x bare`,
      goal: "≤ 1.3x bare",
      met: many.seam <= 1.3 * many.bare,
    },
    {
      section: "footprint",
      name: `seam wrap (${b.name}), start-up to first answer`,
      value: `${f1(up.seam)} ms median of ${starts} (bare ${f1(up.bare)} ms)`,
      ratio: `${(up.seam / up.bare).toFixed(2)}x bare; spread ±${f0((spread(t.seam) * 100) / 2)}%`,
      goal: "≤ 1.2x bare",
      met: up.seam <= 1.2 * up.bare,
    },
    {
      section: "footprint",
      name: `seam wrap (${b.name}), idle after ${trafficMb} MB of answers`,
      value: `${f1(worked.seam.rss)} MB RSS (${f1(worked.seam.anon)} anon); bare ${f1(worked.bare.rss)} (${f1(worked.bare.anon)})`,
      ratio: `${(worked.seam.rss / worked.bare.rss).toFixed(2)}x bare`,
    },
  );
}

const w = (s: string, n: number) => s.padEnd(n);
console.log("footprint");
for (const r of summary) console.log(`  ${w(r.name, 52)} ${w(r.value, 44)} ${r.ratio ?? ""}`);
writeResult(flags, { script: "footprint", rows: summary, details });
rmSync(dir, { recursive: true, force: true });
